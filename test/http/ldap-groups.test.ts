/**
 * LDAP groups (docs/ldap.md, "Groups") on both hosts, against the harness's real slapd (memberof
 * overlay) through the bridge: memberOf and the group search by member DN (escaped), read at each
 * login and stored with source ldap, and GROUP_ROLES giving roles at such logins. Its own host,
 * so that the settings it saves touch no other suite.
 */
import { Attribute, Change, Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { addLdapServer } from '../harness/ldap-records.js';
import { startSlapd, type Slapd } from '../harness/slapd.js';

type Json = Record<string, any>;
let host: RunningHost;
let bridge: TestBridge;
let slapd: Slapd;
const admin = basic(ADMIN.login, ADMIN.password);
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const ldapBasic = (server: string, login: string, password: string) =>
  api('/v3/login_without_session', {
    method: 'POST',
    auth: basic(login, password),
    headers: { 'X-LDAP-Name': server },
  });
const names = (user: Json) => (user.groups as Json[]).map((g) => `${g.name}/${g.source}`);
const TEAM = 'cn=special-team,ou=groups,dc=example,dc=test';

beforeAll(async () => {
  [slapd, bridge] = await Promise.all([startSlapd(), startTestBridge()]);
  host = await startTestHost(inject('hostKind'), bridge.env);
  await addLdapServer(host, 'corp', slapd, 'ldap', { groupMode: 'search' });
}, 180_000);

/** Reads groups with `mode` from now on (one record: another record's logins would be other identities). */
async function mode(groupMode: 'none' | 'memberOf' | 'search') {
  const r = await api('/v3/settings/ldap-servers/corp', { method: 'PATCH', auth: admin, json: { groupMode } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}
const MODES = ['memberOf', 'search'] as const;

afterAll(async () => {
  await host?.stop();
  await Promise.all([bridge?.stop(), slapd?.stop()]);
});

describe('LDAP groups', () => {
  it('the record says how groups are read; a search filter without {dn} is refused, naming the field', async () => {
    const got = await api(`/v3/settings/ldap-servers/corp`, { auth: admin });
    expect(got.body).toMatchObject({ groupMode: 'search', groupAttr: 'memberOf', groupNameAttr: 'cn' });
    const bad = await api('/v3/settings/ldap-servers/corp', {
      method: 'PATCH',
      auth: admin,
      json: { groupFilter: '(member=*)' },
    });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('groupFilter');
  });

  it.each(MODES)('%s: the groups of the entry are read at login, source ldap', async (groupMode) => {
    await mode(groupMode);
    const server = 'corp';
    const alice = slapd.user('alice');
    const r = await ldapBasic(server, alice.login, alice.password!);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(names(r.body.user ?? r.body)).toEqual(['auth-admins/ldap']);
    const carol = slapd.user('carol');
    const c = await ldapBasic(server, carol.login, carol.password!);
    expect(names(c.body.user ?? c.body)).toEqual([]);
  });

  it('a record without a group mode reads none, and leaves the groups read before as they are', async () => {
    const bob = slapd.user('bob');
    await mode('search');
    expect(names((await ldapBasic('corp', bob.login, bob.password!)).body)).toEqual(['auth-auditors/ldap']);
    await mode('none');
    const r = await ldapBasic('corp', bob.login, bob.password!);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['auth-auditors/ldap']);
  });

  it(
    'a DN with filter characters is escaped in the search; groups follow the directory at the next ' + 'login',
    async () => {
      // A DN holding "*", "(" and ")" (no DN escapes needed): unescaped in (member={dn}), the filter breaks.
      const uid = `odd${Date.now().toString(36)}`;
      const password = 'Odd-dn-pass-1';
      const special = { login: uid, password, dn: `cn=odd(*)${uid},ou=people,${slapd.baseDn}` };
      const carol = slapd.user('carol');
      const directory = new Client({ url: slapd.ldapUrl });
      await directory.bind(slapd.rootDn, slapd.rootPassword);
      await directory.add(special.dn, {
        objectClass: 'inetOrgPerson',
        uid,
        cn: `odd(*)${uid}`,
        sn: uid,
        userPassword: password,
      });
      await directory.add(TEAM, { objectClass: 'groupOfNames', cn: 'special-team', member: [special.dn] });
      try {
        for (const server of MODES) {
          await mode(server);
          const r = await ldapBasic('corp', special.login, special.password!);
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          expect(names(r.body.user ?? r.body), server).toEqual(['special-team/ldap']);
          // Another member's login does not find the group of the DN with filter characters.
          const c = await ldapBasic('corp', carol.login, carol.password!);
          expect(names(c.body.user ?? c.body), server).toEqual([]);
        }
        // Out of the group in the directory: the next login takes it away.
        await directory.modify(
          TEAM,
          new Change({ operation: 'replace', modification: new Attribute({ type: 'member', values: [carol.dn] }) }),
        );
        for (const server of MODES) {
          await mode(server);
          const r = await ldapBasic('corp', special.login, special.password!);
          expect(names(r.body.user ?? r.body), server).toEqual([]);
        }
      } finally {
        await directory.del(TEAM);
        await directory.del(special.dn);
        await directory.unbind();
      }
    },
  );

  it('GROUP_ROLES maps a directory group to a role at each login', async () => {
    const carol = slapd.user('carol');
    const directory = new Client({ url: slapd.ldapUrl });
    await directory.bind(slapd.rootDn, slapd.rootPassword);
    const ops = 'cn=ops-auditors,ou=groups,dc=example,dc=test';
    await directory.add(ops, { objectClass: 'groupOfNames', cn: 'ops-auditors', member: [carol.dn] });
    const set = await api('/v3/settings', {
      method: 'PATCH',
      auth: admin,
      json: { values: { GROUP_ROLES: ['Ops-Auditors=auditor'] } },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    await mode('search');
    try {
      const r = await ldapBasic('corp', carol.login, carol.password!);
      expect(r.status).toBe(200);
      expect((r.body.user ?? r.body).role).toBe('auditor');
      await directory.del(ops);
      const again = await ldapBasic('corp', carol.login, carol.password!);
      expect((again.body.user ?? again.body).role).toBe('user');
    } finally {
      await directory.del(ops).catch(() => {});
      await directory.unbind();
      await api('/v3/settings/GROUP_ROLES', { method: 'DELETE', auth: admin });
    }
  });

  it(
    'the periodic refresh takes away what the directory no longer lists, and the role it gave; it adds ' + 'nothing',
    async () => {
      const carol = slapd.user('carol');
      const directory = new Client({ url: slapd.ldapUrl });
      await directory.bind(slapd.rootDn, slapd.rootPassword);
      const [ops, dev, later] = ['ops-team', 'dev-team', 'later-team'].map(
        (cn) => `cn=${cn},ou=groups,${slapd.baseDn}`,
      );
      await directory.add(ops!, { objectClass: 'groupOfNames', cn: 'ops-team', member: [carol.dn] });
      await directory.add(dev!, { objectClass: 'groupOfNames', cn: 'dev-team', member: [carol.dn] });
      const clock = (offsetMs: number) => api('/__test__/clock', { method: 'POST', json: { offsetMs } });
      const refresh = () => api<Json>('/__test__/jobs', { method: 'POST', json: { names: ['refresh-ldap-groups'] } });
      await mode('search');
      const set = await api('/v3/settings', {
        method: 'PATCH',
        auth: admin,
        json: { values: { GROUP_ROLES: ['ops-team=auditor'], LDAP_GROUPS_REFRESH_MIN: 30 } },
      });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      try {
        const first = await ldapBasic('corp', carol.login, carol.password!);
        expect(names(first.body)).toEqual(['dev-team/ldap', 'ops-team/ldap']);
        expect(first.body.role).toBe('auditor');
        const id = first.body.id as string;
        // Out of ops-team, into later-team, in the directory.
        await directory.del(ops!);
        await directory.add(later!, { objectClass: 'groupOfNames', cn: 'later-team', member: [carol.dn] });
        const account = async () => (await api<Json>(`/v4/users/${id}`, { auth: admin })).body;

        // Before the interval: nothing is read again.
        expect((await refresh()).body['refresh-ldap-groups']).toMatchObject({ accounts: 0 });
        expect(names(await account())).toEqual(['dev-team/ldap', 'ops-team/ldap']);

        await clock(31 * 60_000);
        // The other accounts of the record read so far are due too; only carol's groups changed.
        const ran = (await refresh()).body['refresh-ldap-groups'];
        expect(ran.accounts).toBeGreaterThanOrEqual(1);
        expect(ran.narrowed).toBe(1);
        const after = await account();
        expect(names(after)).toEqual(['dev-team/ldap']);
        expect(after.role).toBe('user');
        // Read again: not due until another interval has passed.
        expect((await refresh()).body['refresh-ldap-groups']).toMatchObject({ accounts: 0 });

        // The next login reads the directory again: later-team now.
        const again = await ldapBasic('corp', carol.login, carol.password!);
        expect(names(again.body)).toEqual(['dev-team/ldap', 'later-team/ldap']);
      } finally {
        await clock(0);
        for (const dn of [ops!, dev!, later!]) await directory.del(dn).catch(() => {});
        await directory.unbind();
        for (const name of ['GROUP_ROLES', 'LDAP_GROUPS_REFRESH_MIN'])
          await api(`/v3/settings/${name}`, { method: 'DELETE', auth: admin });
      }
    },
  );
  it('the refresh does not take admin from the last active administrator: it keeps it, with a warning', async () => {
    const carol = slapd.user('carol');
    const directory = new Client({ url: slapd.ldapUrl });
    await directory.bind(slapd.rootDn, slapd.rootPassword);
    const root = `cn=root-team,ou=groups,${slapd.baseDn}`;
    await directory.add(root, { objectClass: 'groupOfNames', cn: 'root-team', member: [carol.dn] });
    const clock = (offsetMs: number) => api('/__test__/clock', { method: 'POST', json: { offsetMs } });
    const refresh = () => api<Json>('/__test__/jobs', { method: 'POST', json: { names: ['refresh-ldap-groups'] } });
    // Carol's own calls: each is an LDAP login, which reads her groups again (so none before the refresh).
    const asCarol = { auth: basic(carol.login, carol.password!), headers: { 'X-LDAP-Name': 'corp' } };
    await mode('search');
    const set = await api('/v3/settings', {
      method: 'PATCH',
      auth: admin,
      json: { values: { GROUP_ROLES: ['root-team=admin'], LDAP_GROUPS_REFRESH_MIN: 30 } },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const builtIn = (await api<Json>('/v4/users/me', { auth: admin })).body.id as string;
    const setRole = (role: string) => api(`/v4/users/${builtIn}`, { method: 'PATCH', ...asCarol, json: { role } });
    let demoted = false;
    try {
      const first = await ldapBasic('corp', carol.login, carol.password!);
      expect(first.body.role).toBe('admin');
      // Carol demotes the built-in administrator: she is the last active one.
      const r = await setRole('user');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      demoted = true;
      await directory.del(root);
      await clock(31 * 60_000);
      expect((await refresh()).body['refresh-ldap-groups'].narrowed).toBeGreaterThanOrEqual(1);
      const me = await api<Json>('/v4/users/me', asCarol);
      expect(me.body.role).toBe('admin');
      const events = await api<{ items: Json[] }>(
        `/v3/logs/crud_admin/events?user=${encodeURIComponent(carol.login)}&size=50`,
        asCarol,
      );
      const kept = events.body.items.filter((e) => e.event.type === 'user.last_admin_kept');
      expect(kept.map((e) => e.data.by ?? 'login')).toContain('job');
    } finally {
      if (demoted) expect((await setRole('admin')).status).toBe(200);
      await clock(0);
      await directory.del(root).catch(() => {});
      await directory.unbind();
      for (const name of ['GROUP_ROLES', 'LDAP_GROUPS_REFRESH_MIN'])
        await api(`/v3/settings/${name}`, { method: 'DELETE', auth: admin });
    }
  });
});

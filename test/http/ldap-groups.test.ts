/**
 * LDAP groups (docs/ldap.md, "Groups") on both hosts, against the harness's real slapd (memberof
 * overlay) through the bridge: memberOf and the group search by member DN (escaped), read at each
 * login and stored with source ldap, and AUTH_GROUP_ROLES giving roles at such logins. Its own host,
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

  it('a DN with filter characters is escaped in the search; groups follow the directory at the next login', async () => {
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
  });

  it('AUTH_GROUP_ROLES maps a directory group to a role at each login', async () => {
    const carol = slapd.user('carol');
    const directory = new Client({ url: slapd.ldapUrl });
    await directory.bind(slapd.rootDn, slapd.rootPassword);
    const ops = 'cn=ops-auditors,ou=groups,dc=example,dc=test';
    await directory.add(ops, { objectClass: 'groupOfNames', cn: 'ops-auditors', member: [carol.dn] });
    const set = await api('/v3/settings', {
      method: 'PATCH',
      auth: admin,
      json: { values: { AUTH_GROUP_ROLES: ['Ops-Auditors=auditor'] } },
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
      await api('/v3/settings/AUTH_GROUP_ROLES', { method: 'DELETE', auth: admin });
    }
  });
});

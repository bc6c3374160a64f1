/**
 * LDAP accounts end to end, on both hosts: the worker (Node, or workerd through the mTLS binding
 * emulator) → the bridge over mutual TLS → a real OpenLDAP slapd on loopback, over ldap://,
 * StartTLS and ldaps:// with a test CA, plus an Active Directory flavour. Its own host, so that
 * moving the clock and changing settings touch no other suite.
 */
import { Attribute, Change, Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, DAY, basic, callJson, createSuperAccessHolder, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { addLdapServer } from '../harness/ldap-records.js';
import { enrolTotp, totpCode } from '../harness/totp.js';
import { closedPortUrl, startSilentServer, startSlapd, type SilentServer, type Slapd } from '../harness/slapd.js';

let host: RunningHost;
let bridge: TestBridge;
let slapd: Slapd;
let ad: Slapd;
let silent: SilentServer;
const admin = basic(ADMIN.login, ADMIN.password);

const api = <T = Record<string, unknown>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const ldapBasic = (server: string, login: string, password: string) =>
  api('/v3/login_without_session', {
    method: 'POST',
    auth: basic(login, password),
    headers: { 'X-LDAP-Name': server },
  });

/** An LDAP server record (test/harness/ldap-records.ts) whose roles come from memberOf groups. */
const addServer = (name: string, s: Slapd, via: 'ldap' | 'starttls' | 'ldaps', extra: Record<string, unknown> = {}) =>
  addLdapServer(host, name, s, via, {
    attrRole: 'memberOf',
    roleAdminGroup: s.groups.admin,
    roleAuditorGroup: s.groups.auditor,
    ...extra,
  });

async function settings(values: Record<string, unknown>) {
  const r = await api('/v3/settings', { method: 'PATCH', auth: admin, json: { values } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

beforeAll(async () => {
  [slapd, ad, silent, bridge] = await Promise.all([
    startSlapd(),
    startSlapd({ activeDirectory: true }),
    startSilentServer(),
    startTestBridge(),
  ]);
  host = await startTestHost(inject('hostKind'), bridge.env);
  await addServer('corp', slapd, 'starttls');
  await addServer('corp-ldaps', slapd, 'ldaps');
  await addServer('corp-plain', slapd, 'ldap');
  await addServer('corp-other-ca', slapd, 'ldaps', { caCert: slapd.otherCaCertPem });
  await addServer('corp-silent', slapd, 'ldap', { urls: [silent.url] });
  await addServer('corp-down', slapd, 'ldap', { urls: [await closedPortUrl()] });
  await addServer('ad', ad, 'ldaps');
  // Short directory timeouts keep the timeout tests quick (seconds, read at request time).
  await settings({ LDAP_SERVER_CONNECT_TIMEOUT: 1, LDAP_SERVER_SEARCHING_TIMEOUT: 1 });
}, 180_000);

afterAll(async () => {
  await host?.stop();
  await Promise.all([bridge?.stop(), slapd?.stop(), ad?.stop(), silent?.stop()]);
});

describe('LDAP server records (admin)', () => {
  it('never returns the service password; lists and reads records; validates every field', async () => {
    const list = await api<{ items: Record<string, unknown>[] }>('/v3/settings/ldap-servers', { auth: admin });
    expect(list.status).toBe(200);
    const corp = list.body.items.find((i) => i.name === 'corp')!;
    expect(corp).toMatchObject({
      bindDn: slapd.serviceDn,
      bindPasswordSet: true,
      startTls: true,
      baseDn: slapd.baseDn,
    });
    expect(JSON.stringify(list.body)).not.toContain(slapd.servicePassword);

    const bad = await api('/v3/settings/ldap-servers', {
      method: 'POST',
      auth: admin,
      json: { name: 'bad one', urls: ['http://x'], baseDn: '', userFilter: '(uid=*)' },
    });
    expect(bad.status).toBe(422);
    const paths = (bad.body.errors as { path: string }[]).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['name', 'urls.0', 'baseDn', 'userFilter']));

    const half = await api('/v3/settings/ldap-servers', {
      method: 'POST',
      auth: admin,
      json: { name: 'half', urls: [slapd.ldapUrl], baseDn: slapd.baseDn, bindDn: slapd.serviceDn },
    });
    expect(half.status).toBe(422);
    expect(String(half.body.detail)).toContain('bindPassword');
    expect((await api('/v3/settings/ldap-servers/half', { auth: admin })).status).toBe(404);

    const dup = await api('/v3/settings/ldap-servers', {
      method: 'POST',
      auth: admin,
      json: { name: 'corp', urls: [slapd.ldapUrl], baseDn: slapd.baseDn },
    });
    expect(dup.status).toBe(409);
  });

  it('only admins manage records', async () => {
    const login = `aud${Date.now().toString(36)}`;
    const created = await api('/v4/users', {
      method: 'POST',
      auth: admin,
      json: { login, password: 'Aud1t$ecret', role: 'auditor' },
    });
    expect(created.status).toBe(201);
    expect((await api('/v3/settings/ldap-servers', { auth: basic(login, 'Aud1t$ecret') })).status).toBe(403);
    expect((await api('/v3/settings/ldap-servers')).status).toBe(401);
  });

  it(
    'test connection: every step ok over StartTLS; the failing step named for a wrong CA and a wrong ' +
      'service password',
    async () => {
      const ok = await api<{ ok: boolean; steps: { step: string; ok: boolean }[]; activeDirectory: boolean }>(
        '/v3/settings/ldap-servers/corp/test',
        { method: 'POST', auth: admin },
      );
      expect(ok.status).toBe(200);
      expect(ok.body.ok).toBe(true);
      expect(ok.body.activeDirectory).toBe(false);
      expect(ok.body.steps.every((s) => s.ok)).toBe(true);

      const badCa = await api<{ ok: boolean; steps: { step: string; ok: boolean }[] }>(
        '/v3/settings/ldap-servers/corp-other-ca/test',
        { method: 'POST', auth: admin },
      );
      expect(badCa.status).toBe(200);
      expect(badCa.body.ok).toBe(false);

      await addServer('corp-badpw', slapd, 'ldap', { bindPassword: 'not-the-password' });
      const badPw = await api<{ ok: boolean; steps: { step: string; ok: boolean }[] }>(
        '/v3/settings/ldap-servers/corp-badpw/test',
        { method: 'POST', auth: admin },
      );
      expect(badPw.body.ok).toBe(false);
      expect(badPw.body.steps.find((s) => !s.ok)?.step).toMatch(/bind/);
      expect(JSON.stringify(badPw.body)).not.toContain('not-the-password');

      const adTest = await api<{ ok: boolean; activeDirectory: boolean }>('/v3/settings/ldap-servers/ad/test', {
        method: 'POST',
        auth: admin,
      });
      expect(adTest.body).toMatchObject({ ok: true, activeDirectory: true });
    },
  );

  it(
    'sending the stored service password somewhere else (new URL, StartTLS off, another CA) needs it ' +
      'again; a refused change changes nothing',
    async () => {
      await addServer('corp-move', slapd, 'starttls');
      const path = '/v3/settings/ldap-servers/corp-move';
      const before = (await api<{ urls: string[] }>(path, { auth: admin })).body;
      const elsewhere = await closedPortUrl();
      for (const change of [
        { urls: [elsewhere] },
        { urls: [...before.urls, elsewhere], baseDn: 'dc=other' },
        { startTls: false },
        { caCert: slapd.otherCaCertPem },
        { caCert: null },
      ]) {
        const r = await api(path, { method: 'PATCH', auth: admin, json: change });
        expect(r.status, JSON.stringify(change)).toBe(422);
        expect((r.body.errors as { path: string }[]).map((e) => e.path)).toEqual(['bindPassword']);
        expect(String(r.body.detail)).toContain('bindPassword');
      }
      expect((await api(path, { auth: admin })).body).toEqual(before);
      const test = await api<{ ok: boolean }>(`${path}/test`, { method: 'POST', auth: admin });
      expect(test.body.ok).toBe(true);
      // The same destination (the stored URLs, StartTLS kept on, the same CA) needs nothing.
      expect(
        (
          await api(path, {
            method: 'PATCH',
            auth: admin,
            json: { urls: before.urls, startTls: true, attrEmail: 'mail' },
          })
        ).status,
      ).toBe(200);
      // With the password in the same request the change is accepted.
      const moved = await api(path, {
        method: 'PATCH',
        auth: admin,
        json: { urls: [elsewhere], bindPassword: slapd.servicePassword },
      });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ urls: [elsewhere], bindPasswordSet: true });
      // A record without a service account has no password to protect.
      await addServer('corp-anon', slapd, 'ldap', { bindDn: null, bindPassword: null });
      expect(
        (
          await api('/v3/settings/ldap-servers/corp-anon', {
            method: 'PATCH',
            auth: admin,
            json: { urls: [elsewhere] },
          })
        ).status,
      ).toBe(200);
    },
  );

  it('super-access may read records, never change, add, remove or test them', async () => {
    // A record of its own: on a service that wrongly allowed it, the changes below hit no other test.
    await addServer('corp-su', slapd, 'starttls');
    const holder = await createSuperAccessHolder({ base: host.url });
    const su = (path: string, o: Call = {}) => api(path, { auth: holder.auth, ...o });
    expect((await su('/v3/settings/ldap-servers')).status).toBe(200);
    expect((await su('/v3/settings/ldap-servers/corp-su')).status).toBe(200);
    const refused = [
      await su('/v3/settings/ldap-servers', {
        method: 'POST',
        json: { name: 'su-made', urls: [slapd.ldapUrl], baseDn: slapd.baseDn, attrRole: 'uid' },
      }),
      await su('/v3/settings/ldap-servers/corp-su', { method: 'PATCH', json: { attrRole: 'uid' } }),
      await su('/v3/settings/ldap-servers/corp-su', { method: 'DELETE' }),
      await su('/v3/settings/ldap-servers/corp-su/test', { method: 'POST' }),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403]);
    for (const r of refused) expect(String(r.body.detail)).toMatch(/^super-access cannot/);
    expect((await api('/v3/settings/ldap-servers/su-made', { auth: admin })).status).toBe(404);
    expect((await api('/v3/settings/ldap-servers/corp-su', { auth: admin })).body).toMatchObject({
      attrRole: 'memberOf',
    });
  });
});

describe('LDAP login', () => {
  it(
    'Basic with X-LDAP-Name over StartTLS, ldaps:// and ldap://: the account is created at the first ' +
      'login with the mapped profile',
    async () => {
      const alice = slapd.user('alice');
      const r = await ldapBasic('corp', alice.login, alice.password!);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({
        login: alice.login,
        displayName: alice.displayName,
        email: alice.email,
        role: 'admin',
        source: 'ldap',
      });
      expect(r.res.headers.get('set-cookie')).toBeNull();

      const bob = slapd.user('bob');
      const viaLdaps = await ldapBasic('corp-ldaps', bob.login, bob.password!);
      expect(viaLdaps.status).toBe(200);
      expect(viaLdaps.body).toMatchObject({ role: 'auditor', source: 'ldap' });
      const jose = slapd.user('jose');
      const viaPlain = await ldapBasic('corp-plain', jose.login, jose.password!);
      expect(viaPlain.status).toBe(200);
      expect(viaPlain.body.displayName).toBe(jose.displayName);

      // The same credentials work on /v4/users (specification: same headers); an admin sees the account.
      const me = await api('/v4/users/me', {
        auth: basic(alice.login, alice.password!),
        headers: { 'X-LDAP-Name': 'corp' },
      });
      expect(me.status).toBe(200);
      const list = await api<{ items: { login: string; source: string }[] }>(
        `/v4/users?login=${encodeURIComponent(alice.login)}`,
        { auth: admin },
      );
      expect(list.body.items.filter((u) => u.login === alice.login)).toHaveLength(1);
    },
  );

  it('a later login (in any case) finds the same account and refreshes its profile from the directory', async () => {
    const alice = slapd.user('alice');
    const first = await ldapBasic('corp', alice.login, alice.password!);
    const directory = new Client({ url: slapd.ldapUrl });
    await directory.bind(slapd.rootDn, slapd.rootPassword);
    const rename = (name: string) =>
      directory.modify(
        alice.dn,
        new Change({ operation: 'replace', modification: new Attribute({ type: 'displayName', values: [name] }) }),
      );
    try {
      await rename('Alice Renamed');
      const again = await ldapBasic('corp', alice.login.toUpperCase(), alice.password!);
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(first.body.id);
      expect(again.body.displayName).toBe('Alice Renamed');
    } finally {
      await rename(alice.displayName!);
      await directory.unbind();
    }
    expect((await ldapBasic('corp', alice.login, alice.password!)).body.displayName).toBe(alice.displayName);
  });

  // LDAP injection through every way in, and login variants: the hostile suite (attacks-ldap.test.ts).

  it('first logins of a new directory user at once (two tabs, a retry) all log in, to one account', async () => {
    const password = 'Tw0-tabs-pass';
    const uids = Array.from({ length: 8 }, (_, i) => `twotabs${i}-${Date.now()}`);
    const dnOf = (uid: string) => `uid=${uid},ou=people,${slapd.baseDn}`;
    const directory = new Client({ url: slapd.ldapUrl });
    await directory.bind(slapd.rootDn, slapd.rootPassword);
    for (const uid of uids)
      await directory.add(dnOf(uid), { objectClass: 'inetOrgPerson', uid, cn: uid, sn: uid, userPassword: password });
    try {
      // Two at once per user (the lockout lets AUTH_FAILED_COUNT of one login be in flight), eight users.
      const answers = await Promise.all(
        uids.map((uid) => Promise.all([1, 2].map(() => ldapBasic('corp', uid, password)))),
      );
      for (const pair of answers) {
        for (const a of pair) expect(a.status, JSON.stringify(a.body)).toBe(200);
        expect(pair[0]!.body.id).toBe(pair[1]!.body.id);
      }
    } finally {
      for (const uid of uids) await directory.del(dnOf(uid));
      await directory.unbind();
    }
  });

  it('empty and blank passwords are refused before any bind (no anonymous bind as the user)', async () => {
    const alice = slapd.user('alice');
    const binds = () => (slapd.log().match(/ BIND /g) ?? []).length;
    const before = binds();
    for (const password of ['', ' ', '\t  ']) {
      const r = await ldapBasic('corp-plain', alice.login, password);
      expect(r.status).toBe(401);
    }
    expect(binds()).toBe(before);
  });

  it(
    'a wrong password and an unknown login get the same 401; 3 failures lock the login at that server, ' +
      'whatever the password; an admin unlocks',
    async () => {
      const bob = slapd.user('bob');
      const unknown = await ldapBasic('corp-ldaps', 'nobody-here', 'whatever-1');
      const wrong = await ldapBasic('corp-ldaps', bob.login, 'wrong-password');
      expect(unknown.status).toBe(401);
      expect(wrong.status).toBe(401);
      expect(wrong.body.detail).toBe(unknown.body.detail);
      expect(wrong.body.type).toBe(unknown.body.type);

      // Parallel wrong attempts: the count is atomic, so at most the remaining 2 reach the directory.
      const burst = await Promise.all(
        Array.from({ length: 8 }, () => ldapBasic('corp-ldaps', bob.login, 'wrong-password')),
      );
      const evaluated = burst.filter((r) => r.body.type === 'urn:auth-service:problem:invalid-credentials').length;
      expect(evaluated).toBeLessThanOrEqual(2);
      expect(burst.every((r) => r.status === 401)).toBe(true);
      const locked = await ldapBasic('corp-ldaps', bob.login, bob.password!);
      expect(locked.status).toBe(401);
      expect(locked.body.type).toBe('urn:auth-service:problem:account-locked');
      expect(locked.res.headers.get('retry-after')).toMatch(/^\d+$/);
      // The lock is per server record: at another record the same login is checked (and, being
      // another record's identity, its login collides with the first account's, an LDAP account with
      // no local password to prove: refused, not locked and not merged).
      const elsewhere = await ldapBasic('corp', bob.login, bob.password!);
      expect(elsewhere.status).toBe(409);
      expect(elsewhere.body.type).toBe('urn:auth-service:problem:login-conflict');

      const users = await api<{ items: { id: string; login: string }[] }>(`/v4/users?login=${bob.login}`, {
        auth: admin,
      });
      const id = users.body.items.find((u) => u.login === bob.login)!.id;
      expect((await api(`/v4/users/${id}/unlock`, { method: 'POST', auth: admin })).status).toBeLessThan(300);
      expect((await ldapBasic('corp-ldaps', bob.login, bob.password!)).status).toBe(200);
    },
  );

  it(
    'a directory that fails (down, never answering, wrong CA) is a 502/504 problem, never a hang, and ' +
      'never counted as a wrong password',
    async () => {
      const alice = slapd.user('alice');
      const down = await ldapBasic('corp-down', alice.login, alice.password!);
      expect(down.status).toBe(502);
      expect(down.res.headers.get('content-type')).toContain('application/problem+json');

      const started = Date.now();
      const slow = await ldapBasic('corp-silent', alice.login, alice.password!);
      expect(slow.status).toBe(504);
      expect(Date.now() - started).toBeLessThan(15_000);

      const tls = await ldapBasic('corp-other-ca', alice.login, alice.password!);
      expect(tls.status).toBe(502);
      expect(String(tls.body.detail).toLowerCase()).toMatch(/tls|certificate/);
      expect(tls.body.cause).toBe('DIRECTORY_TLS');
      // Anonymous callers learn the cause, not the directory's address or the TLS library's message.
      for (const r of [down, slow, tls]) expect(JSON.stringify(r.body)).not.toMatch(/127\.0\.0\.1|ldaps?:\/\//);

      // Alice's own record fails five times (more than AUTH_FAILED_COUNT), then the directory is
      // back: her login is not locked.
      // (A new URL needs the service password again in the same request.)
      const corp = (await api<{ urls: string[] }>('/v3/settings/ldap-servers/corp', { auth: admin })).body;
      const moveTo = (urls: string[]) =>
        api('/v3/settings/ldap-servers/corp', {
          method: 'PATCH',
          auth: admin,
          json: { urls, bindPassword: slapd.servicePassword },
        });
      expect((await moveTo([await closedPortUrl()])).status).toBe(200);
      try {
        for (let i = 0; i < 5; i++) expect((await ldapBasic('corp', alice.login, alice.password!)).status).toBe(502);
      } finally {
        expect((await moveTo(corp.urls)).status).toBe(200);
      }
      expect((await ldapBasic('corp', alice.login, alice.password!)).status).toBe(200);
    },
  );

  it('/v3/login with ldapServer starts a session within the session limit; the cookie authenticates', async () => {
    const jose = slapd.user('jose');
    const b = new Browser(host.origin);
    const first = await b.postJson(`${host.url}/v3/login`, {
      login: jose.login,
      password: jose.password,
      ldapServer: 'corp-plain',
    });
    expect(first.status).toBe(200);
    const me = await b.fetch(`${host.url}/v4/users/me`);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { source: string }).source).toBe('ldap');

    // AUTH_SESSIONS_DEFAULT_COUNT is 1: a second login ends the first session.
    const other = new Browser(host.origin);
    expect(
      (
        await other.postJson(`${host.url}/v3/login`, {
          login: jose.login,
          password: jose.password,
          ldapServer: 'corp-plain',
        })
      ).status,
    ).toBe(200);
    expect((await b.fetch(`${host.url}/v4/users/me`)).status).toBe(401);

    const form = await new Browser(host.origin).postForm(`${host.url}/v3/login`, {
      login: jose.login,
      password: 'wrong',
      ldap_server: 'corp-plain',
    });
    expect(form.status).toBe(303);
    expect(form.headers.get('location')).toContain('auth_error=invalid_credentials');
  });

  it('an LDAP account enrols a TOTP factor stored here and signs in in two steps; Basic is refused', async () => {
    // alice logs in through the record 'corp' (as in the tests above: another record would be a conflict).
    const alice = slapd.user('alice');
    const b = new Browser(host.origin);
    const creds = { login: alice.login, password: alice.password, ldapServer: 'corp' };
    expect((await b.postJson(`${host.url}/v3/login`, creds)).status).toBe(200);
    const secret = await enrolTotp(b, host.url);

    // The directory's password is right: no session yet, the second step named.
    const next = new Browser(host.origin);
    const first = await next.postJson(`${host.url}/v3/login`, creds);
    expect(first.status).toBe(401);
    const pending = (await first.json()) as { code: string; factors: string[] };
    expect(pending).toMatchObject({ code: 'SECOND_FACTOR_REQUIRED', factors: ['totp'] });
    expect((await next.fetch(`${host.url}/v4/users/me`)).status).toBe(401);
    // The code of the next step (the current one was used to confirm) opens the session.
    const second = await next.postJson(`${host.url}/v3/login/second-factor`, { code: totpCode(secret, Date.now(), 1) });
    expect(second.status).toBe(200);
    const me = await next.fetch(`${host.url}/v4/users/me`);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { source: string }).source).toBe('ldap');

    // Basic with X-LDAP-Name: refused, pointing to API tokens.
    const basicLogin = await ldapBasic('corp', alice.login, alice.password!);
    expect(basicLogin.status).toBe(403);
    expect(basicLogin.body.code).toBe('SECOND_FACTOR_NOT_ALLOWED_HERE');
  });

  it('an unknown X-LDAP-Name is a 400 naming it', async () => {
    const r = await ldapBasic('no-such-server', 'alice', 'x-password');
    expect(r.status).toBe(400);
    expect(String(r.body.detail)).toContain('no-such-server');
  });
});

describe('LDAP login colliding with a local account', () => {
  it(
    'without a session: 409 MERGE_REQUIRED, nothing logged in; with a session: the pending merge, ' +
      'completed by /v3/login/union with the local password',
    async () => {
      const carol = slapd.user('carol');
      // A local account with the same login, case-insensitively.
      const local = await api<{ id: string }>('/v4/users', {
        method: 'POST',
        auth: admin,
        json: { login: carol.login.toLowerCase(), password: 'L0cal$ecret' },
      });
      expect(local.status).toBe(201);

      const noSession = await ldapBasic('corp', carol.login, carol.password!);
      expect(noSession.status).toBe(409);
      expect(noSession.body.type).toBe('urn:auth-service:problem:merge-required');

      const form = new Browser(host.origin);
      const redirected = await form.postForm(`${host.url}/v3/login`, {
        login: carol.login,
        password: carol.password!,
        ldap_server: 'corp',
      });
      expect(redirected.status).toBe(303);
      const mergeUrl = (
        await api<{ items: { name: string; value: string }[] }>('/v3/settings', { auth: admin })
      ).body.items.find((i) => i.name === 'DEFAULT_FRONTEND_MERGE_URL')!.value;
      expect(redirected.headers.get('location')).toBe(new URL(mergeUrl).href);
      expect(await form.fetch(`${host.url}/v4/users/me`).then((r) => r.status)).toBe(401);

      const b = new Browser(host.origin);
      const json = await b.postJson(`${host.url}/v3/login`, {
        login: carol.login,
        password: carol.password,
        ldapServer: 'corp',
      });
      expect(json.status).toBe(409);
      expect(((await json.json()) as { mergeUrl: string }).mergeUrl).toBeTruthy();
      expect((await b.fetch(`${host.url}/v4/users/me`)).status).toBe(401);
      // A wrong local password does not merge.
      expect((await b.postJson(`${host.url}/v3/login/union`, { password: 'Wr0ng$ecret' })).status).toBe(401);
      const merged = await b.postJson(`${host.url}/v3/login/union`, { password: 'L0cal$ecret' });
      expect(merged.status).toBe(200);
      expect(((await merged.json()) as { user: { id: string } }).user.id).toBe(local.body.id);

      // From now on the LDAP login logs into the local account.
      const after = await ldapBasic('corp', carol.login, carol.password!);
      expect(after.status).toBe(200);
      expect(after.body.id).toBe(local.body.id);
    },
  );
});

describe('Active Directory', () => {
  it(
    'detected by DIRECTORY_SIGNATURE: sAMAccountName and userPrincipalName log into one account; a ' +
      'disabled account is refused only with the right password',
    async () => {
      const ada = ad.user('ada');
      const bySam = await ldapBasic('ad', ada.login, ada.password!);
      expect(bySam.status, JSON.stringify(bySam.body)).toBe(200);
      expect(bySam.body).toMatchObject({ role: 'admin', source: 'ldap' });
      const byUpn = await ldapBasic('ad', ada.upn!, ada.password!);
      expect(byUpn.status).toBe(200);
      expect(byUpn.body.id).toBe(bySam.body.id);

      const grace = ad.user('grace');
      expect((await ldapBasic('ad', grace.login, 'wrong-password')).status).toBe(401);
      const disabled = await ldapBasic('ad', grace.login, grace.password!);
      expect(disabled.status).toBe(403);
      expect(disabled.body.type).toBe('urn:auth-service:problem:account-blocked');
    },
  );

  it('with another DIRECTORY_SIGNATURE the same directory is not AD: no sAMAccountName logins', async () => {
    await settings({ DIRECTORY_SIGNATURE: '1.3.6.1.4.1.99999.1' });
    try {
      const brian = ad.user('brian');
      expect((await ldapBasic('ad', brian.login, brian.password!)).status).toBe(401);
      const test = await api<{ activeDirectory: boolean }>('/v3/settings/ldap-servers/ad/test', {
        method: 'POST',
        auth: admin,
      });
      expect(test.body.activeDirectory).toBe(false);
    } finally {
      await api('/v3/settings/DIRECTORY_SIGNATURE', { method: 'DELETE', auth: admin });
    }
    const brian = ad.user('brian');
    expect((await ldapBasic('ad', brian.login, brian.password!)).status).toBe(200);
  });
});

describe('account rules for LDAP accounts', () => {
  it(
    'an admin block stops the LDAP login (after the right password only); after ' +
      'USER_INACTIVE_TIMEOUT_DAY without login the account is blocked',
    async () => {
      const jose = slapd.user('jose');
      const found = await api<{ items: { id: string; login: string }[] }>(
        `/v4/users?login=${encodeURIComponent(jose.login)}`,
        { auth: admin },
      );
      const id = found.body.items.find((u) => u.login === jose.login)!.id;
      expect((await api(`/v4/users/${id}/block`, { method: 'POST', auth: admin })).status).toBeLessThan(300);
      expect((await ldapBasic('corp-plain', jose.login, 'wrong-password')).status).toBe(401);
      const blocked = await ldapBasic('corp-plain', jose.login, jose.password!);
      expect(blocked.status).toBe(403);
      expect((await api(`/v4/users/${id}/unblock`, { method: 'POST', auth: admin })).status).toBeLessThan(300);
      expect((await ldapBasic('corp-plain', jose.login, jose.password!)).status).toBe(200);

      // Last: the clock moves 46 days (the bootstrap admin is not used afterwards).
      const moved = await api('/__test__/clock', { method: 'POST', json: { offsetMs: 46 * DAY } });
      expect(moved.status).toBe(200);
      const inactive = await ldapBasic('corp-plain', jose.login, jose.password!);
      expect(inactive.status).toBe(403);
      expect(inactive.body).toMatchObject({
        reason: 'inactivity',
        detail: 'the account is blocked after a long inactivity; ask an administrator',
      });
    },
  );
});

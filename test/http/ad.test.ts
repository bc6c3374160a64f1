/**
 * LDAP logins against a real Active Directory (Samba AD DC, test/harness/samba-ad.ts) on both
 * hosts. A real AD refuses the bind of a disabled, expired or locked-out account itself (result 49
 * with a sub-code), so these are the cases the slapd flavour of ldap.test.ts cannot show: each
 * gets the answer a local account would get, and only wrong passwords (and unknown logins) count
 * towards AUTH_FAILED_COUNT (3 here). Its own host and its own Samba (one per machine at a time).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { sambaAdSkipReason, startSambaAd, type SambaAd } from '../harness/samba-ad.js';

const skip = sambaAdSkipReason();
const admin = basic(ADMIN.login, ADMIN.password);
let host: RunningHost;
let bridge: TestBridge;
let ad: SambaAd;

const api = <T = Record<string, unknown>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const ldapLogin = (server: string, name: string, password: string) =>
  api('/v3/login_without_session', { method: 'POST', auth: basic(name, password), headers: { 'X-LDAP-Name': server } });
const login = (name: string, password: string) => ldapLogin('samba', name, password);
const TYPE = (code: string) => `urn:auth-service:problem:${code}`;

/** The answer of a wrong password (or unknown login), counted. */
function expectWrong(r: Awaited<ReturnType<typeof login>>) {
  expect(r.status, JSON.stringify(r.body)).toBe(401);
  expect(r.body.type).toBe(TYPE('invalid-credentials'));
}

/** The answer once AUTH_FAILED_COUNT failures have locked the login here (password not checked). */
function expectLockedHere(r: Awaited<ReturnType<typeof login>>) {
  expect(r.status, JSON.stringify(r.body)).toBe(401);
  expect(r.body.type).toBe(TYPE('account-locked'));
  expect(r.res.headers.get('retry-after')).toMatch(/^\d+$/);
}

async function unlockHere(user: string) {
  const path = `/v4/users?login=${encodeURIComponent(user)}`;
  const found = await api<{ items: { id: string; login: string }[] }>(path, { auth: admin });
  const id = found.body.items.find((u) => u.login === user)?.id;
  if (!id) throw new Error(`no local account ${user}`);
  expect((await api(`/v4/users/${id}/unlock`, { method: 'POST', auth: admin })).status).toBeLessThan(300);
}

describe.skipIf(skip !== null)(`Active Directory (a real Samba AD DC)${skip ? ` — skipped: ${skip}` : ''}`, () => {
  beforeAll(async () => {
    [ad, bridge] = await Promise.all([startSambaAd({ lockoutThreshold: 5 }), startTestBridge()]);
    host = await startTestHost(inject('hostKind'), bridge.env);
    const r = await api('/v3/settings/ldap-servers', {
      method: 'POST',
      auth: admin,
      json: {
        name: 'samba',
        urls: [ad.ldapsUrl],
        startTls: false,
        caCert: ad.caCertPem,
        bindDn: ad.serviceDn,
        bindPassword: ad.servicePassword,
        baseDn: ad.baseDn,
        attrRole: 'memberOf',
        roleAdminGroup: ad.adminGroupDn,
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    // The test above proves that Samba's TLS certificate is verified and the root DSE read.
    const test = await api('/v3/settings/ldap-servers/samba/test', { method: 'POST', auth: admin });
    expect(test.body, JSON.stringify(test.body)).toMatchObject({ ok: true, activeDirectory: true });
  }, 900_000);

  afterAll(async () => {
    await host?.stop();
    await Promise.all([bridge?.stop(), ad?.stop()]);
  });

  it('sAMAccountName and userPrincipalName log into one account, with the mapped profile', async () => {
    const alice = ad.user('alice');
    const bySam = await login(alice.login, alice.password);
    expect(bySam.status, JSON.stringify(bySam.body)).toBe(200);
    expect(bySam.body).toMatchObject({ login: 'alice', displayName: alice.displayName, email: alice.email });
    expect(bySam.body).toMatchObject({ role: 'admin', source: 'ldap' });
    const byUpn = await login(alice.upn, alice.password);
    expect(byUpn.status).toBe(200);
    expect(byUpn.body.id).toBe(bySam.body.id);
  });

  it(
    'disabled with samba-tool: the right password answers 403 ACCOUNT_BLOCKED, never counted; wrong ' +
      'passwords still 401 and counted',
    async () => {
      const alice = ad.user('alice');
      expect((await login(alice.login, alice.password)).status).toBe(200);
      await ad.tool('user', 'disable', 'alice');
      try {
        // More than AUTH_FAILED_COUNT (3) attempts with the right password: never locked.
        for (let i = 0; i < 5; i++) {
          const r = await login(i % 2 ? alice.upn : alice.login, alice.password);
          expect(r.status, JSON.stringify(r.body)).toBe(403);
          const blocked = { type: TYPE('account-blocked'), reason: 'directory', directoryReason: 'account-disabled' };
          expect(r.body).toMatchObject(blocked);
          expect(String(r.body.detail)).toMatch(/disabled/);
        }
        // Samba checks the password first: a wrong one is a wrong password, which counts.
        for (let i = 0; i < 3; i++) expectWrong(await login(alice.login, 'Wr0ng$pass'));
        expectLockedHere(await login(alice.login, alice.password));
      } finally {
        await ad.tool('user', 'enable', 'alice');
      }
      await unlockHere('alice');
      expect((await login(alice.login, alice.password)).status).toBe(200);
    },
  );

  it('a right password clears the failures of a disabled account, as for a blocked local one', async () => {
    const dora = ad.user('dora');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2; i++) expectWrong(await login(dora.login, 'Wr0ng$pass'));
      const right = await login(dora.login, dora.password);
      expect(right.body).toMatchObject({ status: 403, directoryReason: 'account-disabled' });
    }
  });

  it(
    'account expired (701), no logon hours (530), another workstation only (531): 403 ACCOUNT_BLOCKED ' +
      'with the reason, never counted',
    async () => {
      for (const [key, reason] of [
        ['exa', 'account-expired'],
        ['hugo', 'logon-hours'],
        ['wes', 'workstation'],
      ] as const) {
        const u = ad.user(key);
        expectWrong(await login(u.login, 'Wr0ng$pass'));
        for (let i = 0; i < 4; i++) {
          const r = await login(u.login, u.password);
          expect(r.status, `${key}: ${JSON.stringify(r.body)}`).toBe(403);
          const blocked = { type: TYPE('account-blocked'), reason: 'directory', directoryReason: reason };
          expect(r.body, key).toMatchObject(blocked);
        }
      }
    },
  );

  it(
    'password expired (532) or to be changed (773): 403 PASSWORD_EXPIRED, to be changed in the ' +
      'directory, never counted; no session',
    async () => {
      for (const [key, reason] of [
        ['olga', 'password-expired'],
        ['mia', 'must-change'],
      ] as const) {
        const u = ad.user(key);
        expectWrong(await login(u.login, 'Wr0ng$pass'));
        for (let i = 0; i < 4; i++) {
          const r = await login(u.upn, u.password);
          expect(r.status, `${key}: ${JSON.stringify(r.body)}`).toBe(403);
          expect(r.body, key).toMatchObject({ type: TYPE('password-expired'), directoryReason: reason });
          expect(String(r.body.detail)).toMatch(/in the directory/);
          // The local change-password endpoint cannot change a directory password.
          expect(r.body.changePassword).toBeUndefined();
        }
        const json = { login: u.login, password: u.password, ldapServer: 'samba' };
        const session = await api('/v3/login', { method: 'POST', json });
        expect(session.status).toBe(403);
        expect(session.body).toMatchObject({ type: TYPE('password-expired'), directoryReason: reason });
        expect(session.res.headers.get('set-cookie')).toBeNull();
      }
    },
  );

  it(
    "locked out by Samba's lockout policy (775): 401 ACCOUNT_LOCKED whatever the password, without " +
      'Retry-After, never counted; unlocked there, the login works',
    async () => {
      const loki = ad.user('loki');
      expect((await login(loki.login, loki.password)).status).toBe(200);
      // Five wrong passwords elsewhere (the policy's threshold) lock the account in the directory.
      for (let i = 0; i < 5; i++) expect(await ad.tryBind(loki.upn, 'Wr0ng$pass')).toMatch(/data 52e/);
      expect(await ad.tryBind(loki.upn, loki.password)).toMatch(/data 775/);

      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await login(loki.login, i % 2 ? 'Wr0ng$pass' : loki.password));
      for (const r of answers) {
        expect(r.status, JSON.stringify(r.body)).toBe(401);
        expect(r.body).toMatchObject({ type: TYPE('account-locked'), directoryReason: 'locked-out' });
        // Not the local lock (which has Retry-After): these attempts are not counted here.
        expect(r.res.headers.get('retry-after')).toBeNull();
        expect(r.res.headers.get('www-authenticate')).toMatch(/^Basic/);
      }
      // The same answer whatever the password: it confirms nothing about it.
      expect(answers[1]!.body.detail).toBe(answers[0]!.body.detail);

      await ad.tool('user', 'unlock', 'loki');
      expect((await login(loki.login, loki.password)).status).toBe(200);
    },
  );

  it(
    'wrong passwords and unknown logins stay 401, counted: AUTH_FAILED_COUNT of them lock the login ' + 'here',
    async () => {
      const bob = ad.user('bob');
      const wrong = await login(bob.login, 'Wr0ng$pass');
      const unknown = await login('nobody-here', 'Wr0ng$pass');
      expectWrong(wrong);
      expectWrong(unknown);
      expect(unknown.body.detail).toBe(wrong.body.detail);
      for (let i = 0; i < 2; i++) {
        expectWrong(await login(bob.login, 'Wr0ng$pass'));
        expectWrong(await login('nobody-here', 'Wr0ng$pass'));
      }
      expectLockedHere(await login(bob.login, bob.password));
      expectLockedHere(await login('nobody-here', 'Wr0ng$pass'));
    },
  );

  it(
    'with another DIRECTORY_SIGNATURE Samba is not AD: sub-codes are not read, every refused bind is a ' +
      'wrong password',
    async () => {
      const r = await api('/v3/settings/ldap-servers', {
        method: 'POST',
        auth: admin,
        json: {
          name: 'samba-not-ad',
          urls: [ad.ldapsUrl],
          caCert: ad.caCertPem,
          bindDn: ad.serviceDn,
          bindPassword: ad.servicePassword,
          baseDn: ad.baseDn,
          userFilter: '(sAMAccountName={login})',
        },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const values = { DIRECTORY_SIGNATURE: '1.3.6.1.4.1.99999.1' };
      const patched = await api('/v3/settings', { method: 'PATCH', auth: admin, json: { values } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      try {
        for (const key of ['dora', 'mia']) {
          const u = ad.user(key);
          expectWrong(await ldapLogin('samba-not-ad', u.login, u.password));
        }
      } finally {
        await api('/v3/settings/DIRECTORY_SIGNATURE', { method: 'DELETE', auth: admin });
      }
    },
  );
});

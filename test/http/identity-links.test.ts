/**
 * How external identities reach accounts, on both hosts, with a real OpenLDAP slapd (through the
 * bridge) and two real OpenID providers: OIDC identities are keyed by issuer and subject, so a
 * record whose issuer changes reaches none of the accounts linked under the old one; a pending merge
 * is bound to the browser that logged in; a login colliding between two external sources is refused
 * (never linked, no merge offered); LDAP server record names are public. Its own host.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { addLdapServer } from '../harness/ldap-records.js';
import { startTestProvider, throughProvider, type TestProvider } from '../harness/oidc-provider.js';
import { startSlapd, type Slapd } from '../harness/slapd.js';
import { enrolTotp, totpCode } from '../harness/totp.js';

let host: RunningHost;
let bridge: TestBridge;
let slapd: Slapd;
/** Two providers: records move from A's issuer to B's. */
let idpA: TestProvider;
let idpB: TestProvider;
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'L0cal$ecret';
const RECORDS = ['sso', 'sso-re', 'sso-move', 'sso-x'];
const FRONTEND = 'http://localhost/';
const MERGE_PAGE = 'http://localhost/conflict';

const api = <T = Record<string, unknown>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const ldapBasic = (server: string, login: string, password: string) =>
  api('/v3/login_without_session', {
    method: 'POST',
    auth: basic(login, password),
    headers: { 'X-LDAP-Name': server },
  });

async function addProvider(name: string, p: TestProvider) {
  const r = await api('/v3/settings/identity-providers', {
    method: 'POST',
    auth: admin,
    json: { name, issuer: p.issuer, clientId: p.clientId, clientSecret: p.clientSecret },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

async function createLocal(login: string, role = 'user'): Promise<string> {
  const r = await api<{ id: string }>('/v4/users', {
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD, role },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

/** An OIDC login through record `name` in a new browser: where the callback sends it, and who it is then. */
async function oidcLogin(
  name: string,
  user: string,
): Promise<{ b: Browser; location: string | null; me: { status: number; id?: string; source?: string } }> {
  const b = new Browser(host.origin);
  const done = await b.fetch(await throughProvider(b, host.url, name, user));
  expect(done.status).toBe(303);
  const res = await b.fetch(`${host.url}/v4/users/me`);
  const body = (await res.json()) as { id?: string; source?: string };
  return { b, location: done.headers.get('location'), me: { status: res.status, id: body.id, source: body.source } };
}

beforeAll(async () => {
  [slapd, bridge] = await Promise.all([startSlapd(), startTestBridge()]);
  // Loopback is a trusted proxy here, so X-Forwarded-Proto: https stands for an HTTPS deployment (Node host).
  host = await startTestHost(inject('hostKind'), { ...bridge.env, AUTH_TRUSTED_PROXIES: '127.0.0.1,::1' });
  const callbacks = RECORDS.map((r) => `${host.url}/v3/oidc/callback/${r}`);
  [idpA, idpB] = await Promise.all([startTestProvider(callbacks), startTestProvider(callbacks)]);
  for (const r of RECORDS) await addProvider(r, idpA);
  await addLdapServer(host, 'corp', slapd, 'ldap');
  await addLdapServer(host, 'corp2', slapd, 'ldaps');
  await addLdapServer(host, 'corp-off', slapd, 'ldap', { enabled: false });
}, 180_000);

afterAll(async () => {
  await host?.stop();
  await Promise.all([bridge?.stop(), slapd?.stop(), idpA?.close(), idpB?.close()]);
});

describe('OIDC identities are keyed by issuer and subject', () => {
  it(
    "after a record's issuer changes, the new issuer's logins open no account linked under the old " +
      'one: neither an OIDC account nor a merged local admin',
    async () => {
      const user = uniqueLogin('oidc');
      const first = await oidcLogin('sso', user);
      expect(first.location).toBe(FRONTEND);
      expect(first.me).toMatchObject({ status: 200, source: 'oidc' });

      // A local administrator links an OIDC identity of the same login (proving the local password).
      const adminLogin = uniqueLogin('adm');
      const adminId = await createLocal(adminLogin, 'admin');
      const pending = await oidcLogin('sso', adminLogin);
      expect(pending.location).toBe(MERGE_PAGE);
      expect((await pending.b.postJson(`${host.url}/v3/login/union`, { password: PASSWORD })).status).toBe(200);
      expect((await oidcLogin('sso', adminLogin)).me).toMatchObject({ status: 200, id: adminId });

      // The record now names another issuer, whose subjects happen to be the same strings.
      expect(
        (
          await api('/v3/settings/identity-providers/sso', {
            method: 'PATCH',
            auth: admin,
            json: { issuer: idpB.issuer, clientSecret: idpB.clientSecret },
          })
        ).status,
      ).toBe(200);
      const stranger = await oidcLogin('sso', user);
      expect(stranger.location).toBe(`${FRONTEND}?auth_error=login_conflict`);
      expect(stranger.me.status).toBe(401);
      // The administrator's login: only a pending merge, which needs the local password again.
      const adminAgain = await oidcLogin('sso', adminLogin);
      expect(adminAgain.location).toBe(MERGE_PAGE);
      expect(adminAgain.me.status).toBe(401);

      // The links stay with the old issuer: back to it, the same accounts.
      expect(
        (
          await api('/v3/settings/identity-providers/sso', {
            method: 'PATCH',
            auth: admin,
            json: { issuer: idpA.issuer, clientSecret: idpA.clientSecret },
          })
        ).status,
      ).toBe(200);
      expect((await oidcLogin('sso', user)).me).toMatchObject({ status: 200, id: first.me.id });
      expect((await oidcLogin('sso', adminLogin)).me).toMatchObject({ status: 200, id: adminId });
    },
  );

  it('a record deleted and recreated under its name reaches its old accounts only with the same issuer', async () => {
    const user = uniqueLogin('oidc');
    const first = await oidcLogin('sso-re', user);
    expect(first.me.status).toBe(200);
    const recreate = async (p: TestProvider) => {
      expect((await api('/v3/settings/identity-providers/sso-re', { method: 'DELETE', auth: admin })).status).toBe(204);
      await addProvider('sso-re', p);
    };
    await recreate(idpB);
    const other = await oidcLogin('sso-re', user);
    expect(other.location).toBe(`${FRONTEND}?auth_error=login_conflict`);
    expect(other.me.status).toBe(401);
    await recreate(idpA);
    expect((await oidcLogin('sso-re', user)).me).toMatchObject({ status: 200, id: first.me.id });
  });

  it(
    "relinkIdentities: an admin confirms that the new issuer's subjects are the same people, and the " +
      'links move to it',
    async () => {
      const user = uniqueLogin('oidc');
      const first = await oidcLogin('sso-move', user);
      expect(first.me.status).toBe(200);
      const bad = await api('/v3/settings/identity-providers/sso-move', {
        method: 'PATCH',
        auth: admin,
        json: { relinkIdentities: 'yes' },
      });
      expect(bad.status).toBe(422);
      const moved = await api('/v3/settings/identity-providers/sso-move', {
        method: 'PATCH',
        auth: admin,
        json: { issuer: idpB.issuer, clientSecret: idpB.clientSecret, relinkIdentities: true },
      });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      expect(moved.body).toMatchObject({ issuer: idpB.issuer, relinkedIdentities: 1 });
      expect(moved.body).not.toHaveProperty('relinkIdentities');
      const after = await oidcLogin('sso-move', user);
      expect(after.location).toBe(FRONTEND);
      expect(after.me).toMatchObject({ status: 200, id: first.me.id });
    },
  );
});

describe('pending merges are bound to the browser that logged in', () => {
  it('a merge into a local account with a second factor asks for it at /v3/login/union, then links', async () => {
    const login = uniqueLogin('merge2f');
    const localId = await createLocal(login);
    // The local account enrols a TOTP factor (codes from oathtool).
    const owner = new Browser(host.origin);
    expect((await owner.postJson(`${host.url}/v3/login`, { login, password: PASSWORD })).status).toBe(200);
    const secret = await enrolTotp(owner, host.url);

    // An OIDC login of the same login: a pending merge, proven by the local password at /v3/login/union...
    const pending = await oidcLogin('sso', login);
    expect(pending.location).toBe(MERGE_PAGE);
    const b = pending.b;
    const union = await b.postJson(`${host.url}/v3/login/union`, { password: PASSWORD });
    expect(union.status).toBe(401);
    expect(await union.json()).toMatchObject({ code: 'SECOND_FACTOR_REQUIRED', factors: ['totp'] });
    // ...and no session before the second factor, a wrong code refused.
    expect((await b.fetch(`${host.url}/v4/users/me`)).status).toBe(401);
    const near = [0, 1].map((step) => totpCode(secret, Date.now(), step));
    const wrong = ['000000', '111111', '222222'].find((c) => !near.includes(c))!;
    expect((await b.postJson(`${host.url}/v3/login/second-factor`, { code: wrong })).status).toBe(401);
    const second = await b.postJson(`${host.url}/v3/login/second-factor`, { code: totpCode(secret, Date.now(), 1) });
    expect(second.status).toBe(200);
    const me = await b.fetch(`${host.url}/v4/users/me`);
    expect(((await me.json()) as { id: string }).id).toBe(localId);
    // Linked: the provider's login now reaches the local account, and still asks for the factor.
    const again = await oidcLogin('sso', login);
    expect(again.location).toBe(`${FRONTEND}?auth_error=second_factor_required`);
    expect(again.me.status).toBe(401);
  });

  it(
    'a leaked pending-merge cookie alone completes nothing in another browser; the browser that logged ' +
      'in completes it, once',
    async () => {
      const alice = slapd.user('alice');
      const localId = await createLocal(alice.login);
      const b = new Browser(host.origin);
      const login = await b.postJson(`${host.url}/v3/login`, {
        login: alice.login,
        password: alice.password,
        ldapServer: 'corp',
      });
      expect(login.status).toBe(409);
      const unionUrl = `${host.url}/v3/login/union`;
      const leaked = await b.cookie(unionUrl, 'auth_pending_merge');
      expect(leaked).toBeTruthy();

      const thief = new Browser(host.origin);
      await thief.jar.setCookie(`auth_pending_merge=${leaked}; Path=${new URL(host.url).pathname}`, unionUrl);
      const stolen = await thief.postJson(unionUrl, { password: PASSWORD });
      expect(stolen.status).toBe(401);
      expect(((await stolen.json()) as { code: string }).code).toBe('UNAUTHENTICATED');

      const binding = await b.cookie(unionUrl, 'auth_merge_binding');
      const merged = await b.postJson(unionUrl, { password: PASSWORD });
      expect(merged.status).toBe(200);
      expect(((await merged.json()) as { user: { id: string } }).user.id).toBe(localId);
      expect(await b.cookie(unionUrl, 'auth_pending_merge')).toBeUndefined();
      expect(await b.cookie(unionUrl, 'auth_merge_binding')).toBeUndefined();

      // Both cookies replayed: the identity is linked already, nothing happens twice.
      const replay = new Browser(host.origin);
      await replay.jar.setCookie(`auth_pending_merge=${leaked}; Path=${new URL(host.url).pathname}`, unionUrl);
      await replay.jar.setCookie(`auth_merge_binding=${binding}; Path=/`, unionUrl);
      expect((await replay.postJson(unionUrl, { password: PASSWORD })).status).toBe(409);
    },
  );

  // The edge host never believes forwarded headers (the request URL's scheme decides), and wrangler dev
  // serves plain HTTP: the HTTPS names are checked on the Node host behind a trusted proxy.
  it.skipIf(inject('hostKind') === 'edge')(
    'over HTTPS the binding cookie is __Host- (Path=/, no Domain, SameSite=Strict); the pending merge stays ' +
      '__Secure- on ROOT_PATH',
    async () => {
      const jose = slapd.user('jose');
      await createLocal(jose.login);
      const res = await fetch(`${host.url}/v3/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-Proto': 'https' },
        body: JSON.stringify({ login: jose.login, password: jose.password, ldapServer: 'corp' }),
      });
      expect(res.status).toBe(409);
      const cookies = res.headers.getSetCookie();
      const bindingCookie = cookies.find((c) => c.startsWith('__Host-auth_merge_binding='));
      expect(bindingCookie, cookies.join('\n')).toBeDefined();
      expect(bindingCookie).toMatch(/; Path=\/(;|$)/);
      expect(bindingCookie).toMatch(/; Secure/);
      expect(bindingCookie).toMatch(/; HttpOnly/);
      expect(bindingCookie).toMatch(/; SameSite=Strict/);
      expect(bindingCookie).not.toMatch(/Domain=/i);
      const merge = cookies.find((c) => c.startsWith('__Secure-auth_pending_merge='));
      expect(merge).toContain(`Path=${new URL(host.url).pathname}`);

      // Completed over HTTPS with both cookies: merged, and both cleared under their own names and paths.
      const cookie = [bindingCookie!, merge!].map((c) => c.split(';')[0]).join('; ');
      const union = await fetch(`${host.url}/v3/login/union`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-Proto': 'https', Cookie: cookie },
        body: JSON.stringify({ password: PASSWORD }),
      });
      expect(union.status).toBe(200);
      const cleared = union.headers.getSetCookie();
      expect(cleared.find((c) => c.startsWith('__Host-auth_merge_binding=;'))).toMatch(/Max-Age=0; Path=\/;/);
      expect(cleared.find((c) => c.startsWith('__Secure-auth_pending_merge=;'))).toContain(
        `Path=${new URL(host.url).pathname}`,
      );
    },
  );
});

describe('a login colliding between two external sources', () => {
  it(
    'an OIDC login took the login first: the LDAP owner is refused with 409 LOGIN_CONFLICT; nothing ' +
      'linked, no merge offered',
    async () => {
      const bob = slapd.user('bob');
      const taken = await oidcLogin('sso-x', bob.login);
      expect(taken.me).toMatchObject({ status: 200, source: 'oidc' });

      const basicLogin = await ldapBasic('corp', bob.login, bob.password!);
      expect(basicLogin.status).toBe(409);
      expect(basicLogin.body.type).toBe('urn:auth-service:problem:login-conflict');
      expect(String(basicLogin.body.detail)).toMatch(/administrator/);

      const b = new Browser(host.origin);
      const session = await b.postJson(`${host.url}/v3/login`, {
        login: bob.login,
        password: bob.password,
        ldapServer: 'corp',
      });
      expect(session.status).toBe(409);
      expect(((await session.json()) as { code: string }).code).toBe('LOGIN_CONFLICT');
      expect(session.headers.getSetCookie().join('\n')).not.toMatch(/auth_pending_merge|auth_session/);
      expect((await b.fetch(`${host.url}/v4/users/me`)).status).toBe(401);

      // The wrong LDAP password is still just a wrong password (the conflict shows only after the right one).
      expect((await ldapBasic('corp', bob.login, 'wrong-password')).status).toBe(401);
    },
  );

  it(
    'an LDAP account holds the login: another record of the directory and an OIDC login of the same ' +
      'login are refused, not sent to the merge page',
    async () => {
      const carol = slapd.user('carol');
      const owner = await ldapBasic('corp', carol.login, carol.password!);
      expect(owner.status, JSON.stringify(owner.body)).toBe(200);

      const otherRecord = await ldapBasic('corp2', carol.login, carol.password!);
      expect(otherRecord.status).toBe(409);
      expect(otherRecord.body.code).toBe('LOGIN_CONFLICT');

      const oidc = await oidcLogin('sso-x', carol.login.toLowerCase());
      expect(oidc.location).toBe(`${FRONTEND}?auth_error=login_conflict`);
      expect(oidc.me.status).toBe(401);
      expect(await oidc.b.cookie(`${host.url}/v3/login/union`, 'auth_pending_merge')).toBeUndefined();
      // The owner is untouched.
      expect((await ldapBasic('corp', carol.login, carol.password!)).body.id).toBe(owner.body.id);
    },
  );
});

describe('LDAP server record names are public', () => {
  it(
    'an unknown and a disabled record get the same 400 UNKNOWN_LDAP_SERVER naming the value, before ' +
      'any password check, never counted',
    async () => {
      const alice = slapd.user('alice');
      const shape = (body: Record<string, unknown>, name: string) => {
        const { instance: _i, requestId: _r, ...rest } = body;
        return JSON.parse(JSON.stringify(rest).replaceAll(name, '<name>')) as Record<string, unknown>;
      };
      const unknown = await ldapBasic('no-such-record', alice.login, 'any-password');
      const disabled = await ldapBasic('corp-off', alice.login, alice.password!);
      expect(unknown.status).toBe(400);
      expect(unknown.body.code).toBe('UNKNOWN_LDAP_SERVER');
      expect(String(unknown.body.detail)).toContain('no-such-record');
      expect(shape(disabled.body, 'corp-off')).toEqual(shape(unknown.body, 'no-such-record'));
      // Not a failed login: more attempts than AUTH_FAILED_COUNT lock nothing.
      for (let i = 0; i < 4; i++)
        expect((await ldapBasic('no-such-record', alice.login, 'any-password')).status).toBe(400);
    },
  );
});

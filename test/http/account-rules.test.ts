/**
 * One account rule and one login rule for every source, on both hosts: local accounts, LDAP
 * accounts (a real slapd through the bridge over mutual TLS) and OIDC accounts (oidc-provider) get
 * the same answers and the same audit events; external logins obey the login rule and the
 * reservation of deleted logins; the last active administrator is never blocked for inactivity.
 * Its own host, because the clock moves and the administrators change; the audit events are read
 * from the host's database.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditOutbox, users } from '../../schema/index.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { openDatabase } from '../../worker/node/host.js';
import { Browser } from '../harness/browser.js';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, DAY, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestProvider, throughProvider, type TestProvider } from '../harness/oidc-provider.js';
import { startSlapd, type Slapd } from '../harness/slapd.js';

const IDP = 'idp-rules';
const PASSWORD = 'Str0ng$pass';
const FRONTEND = 'http://localhost/';
const admin = basic(ADMIN.login, ADMIN.password);
let host: RunningHost;
let bridge: TestBridge;
let slapd: Slapd;
let idp: TestProvider;
let database: ReturnType<typeof openDatabase>;

const api = <T = Record<string, unknown>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const post = (path: string, o: Call = {}) => api(path, { method: 'POST', ...o });
const localLogin = (login: string, password = PASSWORD) =>
  post('/v3/login_without_session', { auth: basic(login, password) });
const ldapLogin = (login: string, password: string) =>
  post('/v3/login_without_session', { auth: basic(login, password), headers: { 'X-LDAP-Name': 'corp' } });
const block = async (id: string) =>
  expect((await post(`/v4/users/${id}/block`, { auth: admin })).status).toBeLessThan(300);
const setClock = async (offsetMs: number) =>
  expect((await post('/__test__/clock', { json: { offsetMs } })).status).toBe(200);

async function createLocal(login: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await post('/v4/users', { auth: admin, json: { login, password: PASSWORD, ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return String(r.body.id);
}

/** An OIDC login of `user` in a new browser: the callback's answer and the browser. */
async function oidcLogin(user: string): Promise<{ res: Response; b: Browser }> {
  const b = new Browser(host.origin);
  const res = await b.fetch(await throughProvider(b, host.url, IDP, user));
  return { res, b };
}

/** The problem members a caller sees, for comparing two answers. */
const answer = ({ status, body }: { status: number; body: Record<string, unknown> }) => ({
  status,
  type: body.type,
  title: body.title,
  detail: body.detail,
  reason: body.reason,
});

const accountsNamed = (logins: string[]) =>
  database.db.select({ login: users.login, source: users.source }).from(users).where(inArray(users.login, logins));

beforeAll(async () => {
  [slapd, bridge] = await Promise.all([startSlapd(), startTestBridge()]);
  host = await startTestHost(inject('hostKind'), bridge.env);
  idp = await startTestProvider([`${host.url}/v3/oidc/callback/${IDP}`]);
  database = openDatabase(parseEnvironment({ LIBSQL_URL: host.libsqlUrl }));
  const conn = slapd.connection({ via: 'ldap' });
  const bind = { bindDn: slapd.serviceDn, bindPassword: slapd.servicePassword };
  const directory = { urls: conn.urls, ...bind, baseDn: slapd.baseDn };
  const ldap = await post('/v3/settings/ldap-servers', { auth: admin, json: { name: 'corp', ...directory } });
  expect(ldap.status, JSON.stringify(ldap.body)).toBe(201);
  const provider = { name: IDP, issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret };
  const oidc = await post('/v3/settings/identity-providers', { auth: admin, json: provider });
  expect(oidc.status, JSON.stringify(oidc.body)).toBe(201);
}, 180_000);

afterAll(async () => {
  database?.close();
  await host?.stop();
  await Promise.all([bridge?.stop(), slapd?.stop(), idp?.close()]);
});

describe('blocked accounts: one answer and one audit event, whatever the source', () => {
  it('local, LDAP and OIDC accounts blocked by an administrator', async () => {
    const localId = await createLocal(uniqueLogin('blocked'));
    const localName = (await api<{ login: string }>(`/v4/users/${localId}`, { auth: admin })).body.login;
    const jose = slapd.user('jose');
    const first = await ldapLogin(jose.login, jose.password!);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const ldapId = String(first.body.id);
    const oidcUser = uniqueLogin('oidc');
    const { res: created, b } = await oidcLogin(oidcUser);
    expect(created.headers.get('location')).toBe(FRONTEND);
    const oidcId = String(((await (await b.fetch(`${host.url}/v4/users/me`)).json()) as { id: string }).id);
    for (const id of [localId, ldapId, oidcId]) await block(id);

    const local = await localLogin(localName);
    const ldap = await ldapLogin(jose.login, jose.password!);
    expect(answer(local)).toEqual({
      status: 403,
      type: 'urn:auth-service:problem:account-blocked',
      title: expect.any(String),
      detail: 'the account is blocked; ask an administrator',
      reason: 'admin',
    });
    expect(answer(ldap)).toEqual(answer(local));
    // OIDC logins are browser redirects: the same code, for the front end.
    const { res: oidc, b: refusedBrowser } = await oidcLogin(oidcUser);
    expect(oidc.status).toBe(303);
    expect(oidc.headers.get('location')).toBe(`${FRONTEND}?auth_error=account_blocked`);
    expect((await refusedBrowser.fetch(`${host.url}/v4/users/me`)).status).toBe(401);

    const refused = await database.db
      .select()
      .from(auditOutbox)
      .where(and(eq(auditOutbox.type, 'login.refused'), inArray(auditOutbox.subjectId, [localId, ldapId, oidcId])));
    const bySubject = Object.fromEntries(refused.map((e) => [e.subjectId, e.data]));
    expect(refused).toHaveLength(3);
    expect(bySubject[localId]).toEqual({ reason: 'blocked:admin', source: 'local' });
    expect(bySubject[ldapId]).toEqual({ reason: 'blocked:admin', source: 'ldap', server: 'corp' });
    expect(bySubject[oidcId]).toEqual({ reason: 'blocked:admin', source: 'oidc', provider: IDP });
  });
});

describe('external logins follow the login rule of every account', () => {
  it('LDAP logins with a new line, an invisible character or markup: 403 LOGIN_NOT_ALLOWED, no account', async () => {
    const cases = [
      { key: 'zerowidth', names: 'U+200B' },
      { key: 'markup', names: 'U+003C' },
      { key: 'newline', names: 'U+000A' },
    ];
    for (const { key, names } of cases) {
      const u = slapd.user(key);
      // A new line cannot ride in a Basic credential: /v3/login carries it in JSON.
      const viaJson = key === 'newline';
      const attempt = async (password: string) => {
        if (!viaJson) return ldapLogin(u.login, password);
        const body = { login: u.login, password, ldapServer: 'corp' };
        const res = await new Browser(host.origin).postJson(`${host.url}/v3/login`, body);
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      expect((await attempt('wrong-password')).status).toBe(401);
      const r = await attempt(u.password!);
      expect(r.status, JSON.stringify(r.body)).toBe(403);
      expect(r.body).toMatchObject({ type: 'urn:auth-service:problem:login-not-allowed', reason: 'characters' });
      expect(String(r.body.detail)).toContain(names);
    }
    expect(await accountsNamed(cases.map((c) => slapd.user(c.key).login))).toEqual([]);
    const events = await database.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'login.refused'));
    const data = events.map((e) => e.data as { reason?: string; source?: string });
    expect(data.filter((d) => d.reason === 'login-not-allowed:characters' && d.source === 'ldap')).toHaveLength(3);
  });

  it('OIDC login claims with a new line, an invisible character or markup: login_not_allowed, no account', async () => {
    const suffix = uniqueLogin('');
    const cases = [
      { login: `zero\u200Bwidth${suffix}`, names: 'U+200B' },
      { login: `<img src=x>${suffix}`, names: 'U+003C' },
      { login: `new\nline${suffix}`, names: 'U+000A' },
    ];
    for (const { login, names } of cases) {
      const { res, b } = await oidcLogin(login);
      expect(res.status).toBe(303);
      const to = new URL(res.headers.get('location')!);
      expect(to.origin + to.pathname).toBe(FRONTEND);
      expect(to.searchParams.get('auth_error')).toBe('login_not_allowed');
      expect(to.searchParams.get('auth_error_description')).toContain(names);
      expect((await b.fetch(`${host.url}/v4/users/me`)).status).toBe(401);
    }
    expect(await accountsNamed(cases.map((c) => c.login))).toEqual([]);
  });

  it('an OIDC login cannot take a login still reserved after a deletion (USER_LOGIN_REUSE_DAY)', async () => {
    const login = uniqueLogin('gone');
    const id = await createLocal(login);
    expect((await api(`/v4/users/${id}`, { method: 'DELETE', auth: admin })).status).toBe(204);
    // In another case, as the provider may send it: the reservation is by login key.
    const { res, b } = await oidcLogin(login.toUpperCase());
    const to = new URL(res.headers.get('location')!);
    expect(to.searchParams.get('auth_error')).toBe('login_not_allowed');
    expect(to.searchParams.get('auth_error_description')).toMatch(/reserved until/);
    expect((await b.fetch(`${host.url}/v4/users/me`)).status).toBe(401);
    const taken = and(eq(users.source, 'oidc'), eq(users.loginKey, login.toLowerCase()));
    expect(await database.db.select({ id: users.id }).from(users).where(taken)).toEqual([]);
  });

  it('local accounts: one login whatever its case or width, stored in NFC; a refused character named', async () => {
    const wide = 'ＲＯＯＴ－ＡＤＭＩＮ';
    const taken = await api('/v4/users', { method: 'POST', auth: admin, json: { login: wide, password: PASSWORD } });
    expect(taken.status).toBe(409);
    const root = await localLogin(ADMIN.login.toUpperCase(), ADMIN.password);
    const viaWide = await localLogin(wide, ADMIN.password);
    expect(viaWide.status).toBe(200);
    expect(viaWide.body.id).toBe(root.body.id);

    const invisible = await post('/v4/users', { auth: admin, json: { login: 'bad\u200Bname', password: PASSWORD } });
    expect(invisible.status).toBe(422);
    const errors = [expect.objectContaining({ path: 'login', message: expect.stringContaining('U+200B') })];
    expect(invisible.body.errors).toEqual(errors);

    const suffix = uniqueLogin('');
    const decomposed = await post('/v4/users', {
      auth: admin,
      json: { login: `Jose\u0301${suffix}`, password: PASSWORD },
    });
    expect(decomposed.status).toBe(201);
    expect(decomposed.body.login).toBe(`José${suffix}`);
    expect((await localLogin(`JOSÉ${suffix.toUpperCase()}`)).status).toBe(200);
  });
});

// Look-alike logins (docs/security.md, "Logins"): a character PRECIS IdentifierClass refuses makes an invalid
// login, 422 whatever else exists; a valid login that looks like a live or reserved one (the same
// Unicode TR #39 skeleton) is in conflict with that account, 409; LDAP and OIDC first logins: 403.
describe('look-alike logins are refused, for local accounts, LDAP and OIDC alike', () => {
  const create = (login: string) => post('/v4/users', { auth: admin, json: { login, password: PASSWORD } });
  const CYRILLIC_A = '\u0430';
  const CYRILLIC_E = '\u0435';

  it('local: аdmin (Cyrillic а) 409; ᴀdmin, ADMİN and admin𝟏 beside admin1 422, each naming the rule', async () => {
    const suffix = uniqueLogin('');
    const base = `admin-${suffix}`;
    await createLocal(base);
    await createLocal(`${base}1`);

    const cyrillic = await create(`${CYRILLIC_A}dmin-${suffix}`);
    expect(cyrillic.status, JSON.stringify(cyrillic.body)).toBe(409);
    expect(cyrillic.body).toMatchObject({ code: 'CONFLICT', reason: 'look-alike' });
    expect(String(cyrillic.body.detail)).toContain(`looks like the login "${base}"`);

    const invalid = [
      { login: `\u1D00dmin-${suffix}`, names: 'U+1D00', rule: /phonetic letter/ },
      { login: `ADM\u0130N-${suffix.toUpperCase()}`, names: 'U+0130', rule: /lower case adds a combining mark/ },
      { login: `${base}\u{1D7CF}`, names: 'U+1D7CF', rule: /compatibility form of "1" \(PRECIS IdentifierClass/ },
    ];
    for (const { login, names, rule } of invalid) {
      const r = await create(login);
      expect(r.status, `${login}: ${JSON.stringify(r.body)}`).toBe(422);
      expect(r.body.code).toBe('VALIDATION');
      const message = String((r.body.errors as { message: string }[])[0]!.message);
      expect(message).toContain(names);
      expect(message).toMatch(rule);
    }
    const tried = [`${CYRILLIC_A}dmin-${suffix}`, ...invalid.map((c) => c.login.normalize('NFC'))];
    expect(await accountsNamed(tried)).toEqual([]);
  });

  it('the reuse quarantine holds the look-alikes of a deleted login: zеd (Cyrillic е) 409, ᴢed 422', async () => {
    const suffix = uniqueLogin('');
    const id = await createLocal(`zed-${suffix}`);
    expect((await api(`/v4/users/${id}`, { method: 'DELETE', auth: admin })).status).toBe(204);
    const cyrillic = await create(`z${CYRILLIC_E}d-${suffix}`);
    expect(cyrillic.status, JSON.stringify(cyrillic.body)).toBe(409);
    expect(cyrillic.body).toMatchObject({ code: 'CONFLICT', reason: 'reserved' });
    expect(String(cyrillic.body.detail)).toMatch(/looks like, the login of a deleted account, reserved until/);
    const phonetic = await create(`\u1D22ed-${suffix}`);
    expect(phonetic.status, JSON.stringify(phonetic.body)).toBe(422);
    expect(JSON.stringify(phonetic.body.errors)).toContain('U+1D22');
    expect(await accountsNamed([`z${CYRILLIC_E}d-${suffix}`, `\u1D22ed-${suffix}`])).toEqual([]);
  });

  it('LDAP first logins: look-alikes of live or reserved logins, a compatibility digit: 403', async () => {
    const id = await createLocal('zed-gone');
    expect((await api(`/v4/users/${id}`, { method: 'DELETE', auth: admin })).status).toBe(204);
    const cases = [
      { key: 'lookalike', reason: 'look-alike', detail: /looks like the login of another account/ },
      { key: 'quarantined', reason: 'reserved', detail: /looks like, the login of a deleted account, reserved/ },
      { key: 'compat', reason: 'characters', detail: /U\+1D7CF, a compatibility form of "1"/ },
    ];
    for (const { key, reason, detail } of cases) {
      const u = slapd.user(key);
      const r = await ldapLogin(u.login, u.password!);
      expect(r.status, `${key}: ${JSON.stringify(r.body)}`).toBe(403);
      expect(r.body).toMatchObject({ type: 'urn:auth-service:problem:login-not-allowed', reason });
      expect(String(r.body.detail)).toMatch(detail);
      // The other account's login is not named to whoever logs in.
      expect(String(r.body.detail)).not.toContain(ADMIN.login);
    }
    expect(await accountsNamed(cases.map((c) => slapd.user(c.key).login))).toEqual([]);
    const events = await database.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'login.refused'));
    const reasons = events.map((e) => (e.data as { reason?: string }).reason);
    expect(reasons).toContain('login-not-allowed:look-alike');
  });

  it('OIDC first logins: look-alikes of live or reserved logins, a compatibility digit: refused', async () => {
    const suffix = uniqueLogin('');
    const id = await createLocal(`zed-${suffix}`);
    expect((await api(`/v4/users/${id}`, { method: 'DELETE', auth: admin })).status).toBe(204);
    const cases = [
      { login: `r\u043E\u043Et-admin`, detail: /looks like the login of another account/ },
      { login: `z${CYRILLIC_E}d-${suffix}`, detail: /looks like, the login of a deleted account, reserved/ },
      { login: `oidc-${suffix}\u{1D7CF}`, detail: /U\+1D7CF, a compatibility form of "1"/ },
    ];
    for (const { login, detail } of cases) {
      const { res, b } = await oidcLogin(login);
      expect(res.status).toBe(303);
      const to = new URL(res.headers.get('location')!);
      expect(to.searchParams.get('auth_error'), login).toBe('login_not_allowed');
      expect(to.searchParams.get('auth_error_description')).toMatch(detail);
      expect((await b.fetch(`${host.url}/v4/users/me`)).status).toBe(401);
    }
    expect(await accountsNamed(cases.map((c) => c.login))).toEqual([]);
  });
});

// Last: the clock moves by months, and the bootstrap administrator ends blocked.
describe('the last active administrator is never blocked for inactivity', () => {
  it('the only administrator, idle past the limit, logs in (warning); of two, the idle one is blocked', async () => {
    await setClock(46 * DAY);
    const only = await localLogin(ADMIN.login, ADMIN.password);
    expect(only.status, JSON.stringify(only.body)).toBe(200);
    // The warning goes to the log; wrangler dev does not pass the worker's console to the harness,
    // so it is read on the Node host (unit tests read it on both paths: test/unit/account-rule.test.ts).
    const warning = /"level":"WARNING","msg":"the last active administrator is inactive beyond/;
    if (host.kind === 'node') await expect.poll(() => host.output(), { timeout: 10_000 }).toMatch(warning);

    const second = uniqueLogin('admin');
    await createLocal(second, { role: 'admin' });
    expect((await localLogin(second)).status).toBe(200);
    await setClock(93 * DAY);
    const idle = await localLogin(ADMIN.login, ADMIN.password);
    expect(answer(idle)).toMatchObject({ status: 403, reason: 'inactivity' });
    // The second administrator, now the last active one, idle as long: still logs in.
    expect((await localLogin(second)).status).toBe(200);
    const admins = await database.db
      .select({ login: users.login, status: users.status })
      .from(users)
      .where(eq(users.role, 'admin'));
    const byLogin = Object.fromEntries(admins.map((a) => [a.login, a.status]));
    expect(byLogin).toEqual({ [ADMIN.login]: 'blocked', [second]: 'active' });
  });
});

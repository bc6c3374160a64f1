/**
 * A lock the attacker cannot turn on the owner (architecture.md §4, "Device cookies"), on both
 * hosts: a session login gives the browser a signed, login-bound device cookie; failures of
 * clients without it lock the login for such clients only (Basic and API clients included), while
 * the owner's browser keeps its own small budget. Tampered, foreign or revoked cookies are untrusted.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { ADMIN, basic, baseUrl, call, callJson, createUser, uniqueLogin } from '../harness/client.js';
import { Browser, loggedInBrowser } from '../harness/browser.js';

const PASSWORD = 'Str0ng$pass';
const WRONG = 'Wr0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);

/** Basic logins (no cookies: an untrusted client). */
const basicLogin = (login: string, password: string) =>
  callJson('/v3/login_without_session', { method: 'POST', auth: basic(login, password) });

/** AUTH_FAILED_COUNT (3) wrong passwords from an attacker without the owner's cookie. */
async function lockForOthers(login: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await basicLogin(login, WRONG)).body.code).toBe('INVALID_CREDENTIALS');
  expect((await basicLogin(login, PASSWORD)).body.code).toBe('ACCOUNT_LOCKED');
}

const sessionLogin = async (b: Browser, login: string, password: string) => {
  const res = await b.postJson(`${baseUrl()}/v3/login`, { login, password });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
};

/** The device cookie's value in `b` (plain `auth_device` over http://, `__Host-auth_device` over HTTPS). */
const deviceCookie = (b: Browser) => b.cookie(`${new URL(baseUrl()).origin}/`, 'auth_device');

describe('device cookies', () => {
  it('a session login sets a signed device cookie bound to the account, host-wide, never a session', async () => {
    const login = uniqueLogin('dev');
    const id = await createUser(login, PASSWORD);
    const res = await call('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
    expect(res.status).toBe(200);
    const set = res.headers.getSetCookie().find((c) => c.startsWith('auth_device='));
    expect(set, res.headers.getSetCookie().join('\n')).toBeDefined();
    expect(set).toMatch(/; Path=\/(;|$)/);
    expect(set).toMatch(/; HttpOnly/);
    expect(set).toMatch(/; Secure/);
    expect(set).toMatch(/; SameSite=Strict/);
    // Long-lived: about a year.
    const maxAge = Number(/Max-Age=(\d+)/.exec(set!)![1]!);
    expect(maxAge).toBeGreaterThan(300 * 86_400);
    const token = set!.split(';')[0]!.slice('auth_device='.length);
    const claims = decodeJwt(token);
    expect(claims.sub).toBe(id);
    expect(claims.aud).toBe('auth-device');
    expect(typeof claims.did).toBe('string');
    // Never a session: it authenticates nothing.
    expect((await call('/v4/users/me', { headers: { Cookie: `auth_device=${token}` } })).status).toBe(401);
  });

  it("the owner's browser logs in while the login is locked for every client without its device cookie", async () => {
    const login = uniqueLogin('own');
    await createUser(login, PASSWORD);
    const owner = await loggedInBrowser(baseUrl(), login, PASSWORD);
    expect(await deviceCookie(owner)).toBeDefined();
    await lockForOthers(login);
    // Basic and API clients carry no cookie: untrusted, locked.
    expect((await basicLogin(login, PASSWORD)).status).toBe(401);
    // Another browser (no device cookie) is locked too.
    const stranger = await sessionLogin(new Browser(new URL(baseUrl()).origin), login, PASSWORD);
    expect(stranger.status).toBe(401);
    expect(stranger.body.code).toBe('ACCOUNT_LOCKED');
    // The owner is not.
    expect((await sessionLogin(owner, login, PASSWORD)).status).toBe(200);
    // ...and its success lifts nothing for the others.
    expect((await basicLogin(login, PASSWORD)).body.code).toBe('ACCOUNT_LOCKED');
  });

  it('a device has its own small budget: spent, it counts as an untrusted client', async () => {
    const login = uniqueLogin('bud');
    await createUser(login, PASSWORD);
    const owner = await loggedInBrowser(baseUrl(), login, PASSWORD);
    await lockForOthers(login);
    for (let i = 0; i < 3; i++) expect((await sessionLogin(owner, login, WRONG)).body.code).toBe('INVALID_CREDENTIALS');
    const r = await sessionLogin(owner, login, PASSWORD);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('ACCOUNT_LOCKED');
  });

  it("a tampered device cookie, or another login's, is untrusted", async () => {
    const a = uniqueLogin('ta');
    const b = uniqueLogin('tb');
    await createUser(a, PASSWORD);
    await createUser(b, PASSWORD);
    const browser = await loggedInBrowser(baseUrl(), a, PASSWORD);
    const token = (await deviceCookie(browser))!;
    expect(token).toBeDefined();
    // Another login's cookie: b is locked for this browser.
    await lockForOthers(b);
    expect((await sessionLogin(browser, b, PASSWORD)).body.code).toBe('ACCOUNT_LOCKED');
    // Tampered: the signature no longer matches.
    await lockForOthers(a);
    const [h, p, s] = token.split('.');
    const flipped = `${s!.slice(0, -2)}${s!.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of [`${h}.${p}.${flipped}`, `${h}.${p}.`, 'garbage']) {
      const r = await callJson('/v3/login', {
        method: 'POST',
        json: { login: a, password: PASSWORD },
        headers: { Cookie: `auth_device=${bad}` },
      });
      expect(r.body.code, bad).toBe('ACCOUNT_LOCKED');
    }
    // The genuine one still logs in.
    expect((await sessionLogin(browser, a, PASSWORD)).status).toBe(200);
  });

  it('"sign out everywhere" and a password reset revoke device cookies; the admin unlock lifts the lock', async () => {
    const login = uniqueLogin('rev');
    const id = await createUser(login, PASSWORD);
    const owner = await loggedInBrowser(baseUrl(), login, PASSWORD);
    await lockForOthers(login);
    expect((await sessionLogin(owner, login, PASSWORD)).status).toBe(200);
    expect((await owner.fetch(`${baseUrl()}/v3/logout/all`, { method: 'POST' })).status).toBe(204);
    expect((await sessionLogin(owner, login, PASSWORD)).body.code).toBe('ACCOUNT_LOCKED');

    expect((await call(`/v4/users/${id}/unlock`, { method: 'POST', auth: admin })).status).toBeLessThan(300);
    const again = await loggedInBrowser(baseUrl(), login, PASSWORD);
    await lockForOthers(login);
    expect((await sessionLogin(again, login, PASSWORD)).status).toBe(200);
    const reset = await call(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: admin,
      json: { password: 'N3w$secret', mustChangePassword: false },
    });
    expect(reset.status, await reset.clone().text()).toBeLessThan(300);
    for (let i = 0; i < 3; i++) await basicLogin(login, WRONG);
    expect((await sessionLogin(again, login, 'N3w$secret')).body.code).toBe('ACCOUNT_LOCKED');
  });
});

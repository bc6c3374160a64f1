/**
 * What ends what (docs/security.md, "What ends what"): password changes, admin resets and blocks end
 * sessions and tokens; issuing an API token needs a recent password; why a session ended; logout
 * is idempotent. On both hosts.
 */
import { SignJWT, decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { Browser, loggedInBrowser } from '../harness/browser.js';
import {
  ADMIN,
  MINUTE,
  basic,
  baseUrl,
  call,
  callJson,
  createUser,
  setClockOffset,
  uniqueLogin,
} from '../harness/client.js';
import { BASE_TEST_ENV } from '../harness/hosts.js';

const PASSWORD = 'Str0ng$pass';
const NEW_PASSWORD = 'N3w$secret';
const admin = basic(ADMIN.login, ADMIN.password);
const origin = () => new URL(baseUrl()).origin;
const url = (path: string) => `${baseUrl()}${path}`;
type Problem = { code: string; detail: string; reason?: string };

afterEach(() => setClockOffset(0));

const loggedIn = (login: string, password = PASSWORD) => loggedInBrowser(baseUrl(), login, password);

async function me(b: Browser): Promise<{ status: number; body: Problem & { login?: string } }> {
  const res = await b.fetch(url('/v4/users/me'));
  return { status: res.status, body: (await res.json()) as Problem };
}

async function oauthLogin(login: string): Promise<{ token: string; browser: Browser }> {
  const browser = new Browser(origin());
  const res = await browser.fetch(url('/v3/oauth_login'), {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', username: login, password: PASSWORD }),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  expect(res.status).toBe(200);
  return { token: ((await res.json()) as { access_token: string }).access_token, browser };
}

async function issueWithBasic(login: string, password = PASSWORD): Promise<string> {
  const r = await callJson<{ token: string }>('/v4/users/me/tokens', {
    method: 'POST',
    auth: basic(login, password),
    json: { name: 'ci' },
  });
  expect(r.status).toBe(201);
  return r.body.token;
}

const tokenWorks = async (token: string) =>
  (await call('/v3/api_token_login', { method: 'POST', auth: `Bearer ${token}` })).status === 200;

const issueWithCookie = (b: Browser) =>
  b.fetch(url('/v4/users/me/tokens'), {
    method: 'POST',
    body: JSON.stringify({ name: 'from-session' }),
    headers: { 'Content-Type': 'application/json' },
  });

const changeWithCookie = (b: Browser, oldPassword: string, newPassword: string) =>
  b.fetch(url('/v4/users/me/password'), {
    method: 'PUT',
    body: JSON.stringify({ oldPassword, newPassword }),
    headers: { 'Content-Type': 'application/json' },
  });

describe("a user's own password change", () => {
  it('made with a session: the other sessions end, the current one stays, API tokens are kept', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 3 });
    const token = await issueWithBasic(login);
    const current = await loggedIn(login);
    const other = await loggedIn(login);
    const oauth = await oauthLogin(login);
    expect((await changeWithCookie(current, PASSWORD, NEW_PASSWORD)).status).toBe(204);
    expect((await me(current)).status).toBe(200);
    const ended = await me(other);
    expect(ended.status).toBe(401);
    expect(ended.body.reason).toBe('password_change');
    expect((await callJson('/v4/users/me', { auth: `Bearer ${oauth.token}` })).status).toBe(401);
    expect(await tokenWorks(token)).toBe(true);
  });

  it('made with Basic: every session ends (the OAuth access token too)', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 3 });
    const a = await loggedIn(login);
    const oauth = await oauthLogin(login);
    const r = await call('/v4/users/me/password', {
      method: 'PUT',
      auth: basic(login, PASSWORD),
      json: { oldPassword: PASSWORD, newPassword: NEW_PASSWORD },
    });
    expect(r.status).toBe(204);
    expect((await me(a)).status).toBe(401);
    expect((await callJson('/v4/users/me', { auth: `Bearer ${oauth.token}` })).status).toBe(401);
  });
});

describe("an administrator's password reset", () => {
  it('ends every session and revokes every API token', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD, { sessionLimit: 3 });
    const token = await issueWithBasic(login);
    const a = await loggedIn(login);
    const oauth = await oauthLogin(login);
    const reset = await call(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: admin,
      json: { password: NEW_PASSWORD, mustChangePassword: true },
    });
    expect(reset.status).toBe(204);
    const ended = await me(a);
    expect(ended.status).toBe(401);
    expect(ended.body.reason).toBe('admin_reset');
    expect((await callJson('/v4/users/me', { auth: `Bearer ${oauth.token}` })).status).toBe(401);
    expect(await tokenWorks(token)).toBe(false);
    expect((await callJson<{ items: unknown[] }>(`/v4/users/${id}/tokens`, { auth: admin })).body.items).toEqual([]);
  });

  it('block, reset with mustChangePassword, unblock: no old cookie, access token or API token comes back', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD, { sessionLimit: 3 });
    const token = await issueWithBasic(login);
    const a = await loggedIn(login);
    const oauth = await oauthLogin(login);
    expect((await call(`/v4/users/${id}/block`, { method: 'POST', auth: admin })).status).toBe(200);
    expect(
      (
        await call(`/v4/users/${id}/password`, {
          method: 'POST',
          auth: admin,
          json: { password: NEW_PASSWORD, mustChangePassword: true },
        })
      ).status,
    ).toBe(204);
    expect((await call(`/v4/users/${id}/unblock`, { method: 'POST', auth: admin })).status).toBe(200);
    expect((await me(a)).status).toBe(401);
    expect((await me(oauth.browser)).status).toBe(401);
    expect((await callJson('/v4/users/me', { auth: `Bearer ${oauth.token}` })).status).toBe(401);
    expect(await tokenWorks(token)).toBe(false);
  });
});

describe('a block', () => {
  it('ends every session for good; API tokens are refused while blocked and work again after the unblock', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD, { sessionLimit: 2 });
    const token = await issueWithBasic(login);
    const a = await loggedIn(login);
    expect((await call(`/v4/users/${id}/block`, { method: 'POST', auth: admin })).status).toBe(200);
    expect(await tokenWorks(token)).toBe(false);
    expect((await call(`/v4/users/${id}/unblock`, { method: 'POST', auth: admin })).status).toBe(200);
    const after = await me(a);
    expect(after.status).toBe(401);
    expect(after.body.reason).toBe('block');
    expect(await tokenWorks(token)).toBe(true);
  });
});

describe('issuing an API token needs a recent password', () => {
  it('a session of a password login may, within 15 minutes of the login; later it must log in again', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 2 });
    const b = await loggedIn(login);
    expect((await issueWithCookie(b)).status).toBe(201);
    const sessions = (await (await b.fetch(url('/v4/users/me/sessions'))).json()) as {
      items: { authMethod: string; authenticatedAt: string }[];
    };
    expect(sessions.items[0]).toMatchObject({ authMethod: 'local_password', authenticatedAt: expect.any(String) });
    await setClockOffset(16 * MINUTE);
    const stale = await issueWithCookie(b);
    expect(stale.status).toBe(403);
    const problem = (await stale.json()) as Problem;
    expect(problem.code).toBe('REAUTHENTICATION_REQUIRED');
    expect(problem.detail).toMatch(/password/);
    expect((await me(b)).status).toBe(200); // the session itself lives on
    const fresh = await loggedIn(login);
    expect((await issueWithCookie(fresh)).status).toBe(201);
  });

  it('the OAuth access token never may: neither as the session cookie nor as Bearer', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const oauth = await oauthLogin(login);
    const asCookie = await issueWithCookie(oauth.browser);
    expect(asCookie.status).toBe(403);
    expect(((await asCookie.json()) as Problem).code).toBe('REAUTHENTICATION_REQUIRED');
    const asBearer = await callJson('/v4/users/me/tokens', {
      method: 'POST',
      auth: `Bearer ${oauth.token}`,
      json: { name: 'x' },
    });
    expect(asBearer.status).toBe(401);
    // Nothing was issued that could outlive the session.
    expect(
      (await callJson<{ items: unknown[] }>('/v4/users/me/tokens', { auth: basic(login, PASSWORD) })).body.items,
    ).toEqual([]);
  });
});

describe('why a session ended', () => {
  it('a session that a newer login ended says so, with the limit', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const first = await loggedIn(login);
    await loggedIn(login);
    const r = await me(first);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('INVALID_CREDENTIALS');
    expect(r.body.reason).toBe('limit');
    expect(r.body.detail).toBe("this session was ended by a newer login: the account's session limit is 1");
  });

  it('a token not signed by us learns nothing about the session it names', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const first = await loggedIn(login);
    const claims = decodeJwt((await first.cookie(url('/v4/users/me'), 'auth_session'))!);
    await loggedIn(login);
    const forged = await new SignJWT({ sid: claims.sid, sub: claims.sub })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience('auth-session')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-key-that-is-long-enough-0123456789'));
    const r = await callJson<Problem>('/v4/users/me', { headers: { Cookie: `auth_session=${forged}` } });
    expect(r.status).toBe(401);
    expect(r.body.reason).toBeUndefined();
    expect(r.body.detail).not.toMatch(/newer login|limit/);
  });
});

describe('logout is idempotent', () => {
  const signed = (claims: Record<string, string>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience('auth-session')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(BASE_TEST_ENV.SESSION_SECRET_KEY!));

  it('an ended session logs out again with 204, and its cookie ends no other session', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 2 });
    const a = await loggedIn(login);
    const b = await loggedIn(login);
    const value = (await a.cookie(url('/v4/users/me'), 'auth_session'))!;
    expect((await a.fetch(url('/v3/logout'), { method: 'POST' })).status).toBe(204);
    for (const path of ['/v3/logout', '/v3/logout/all']) {
      const replay = await call(path, {
        method: 'POST',
        headers: { Cookie: `auth_session=${value}`, Origin: origin() },
      });
      expect(replay.status, path).toBe(204);
      expect(replay.headers.getSetCookie().join(), path).toMatch(/auth_session=;/);
    }
    expect((await callJson('/v3/logout', { method: 'POST', auth: `Bearer ${value}` })).status).toBe(204);
    expect((await me(b)).status).toBe(200);
  });

  it('a validly signed cookie of an unknown session: 204; no cookie or a forged one: 401', async () => {
    const unknown = await signed({ sid: 'no-such-session', sub: 'no-such-user' });
    for (const path of ['/v3/logout', '/v3/logout/all']) {
      expect(
        (await call(path, { method: 'POST', headers: { Cookie: `auth_session=${unknown}`, Origin: origin() } })).status,
        path,
      ).toBe(204);
      expect((await call(path, { method: 'POST', headers: { Origin: origin() } })).status, path).toBe(401);
      expect(
        (await call(path, { method: 'POST', headers: { Cookie: `auth_session=${unknown}x`, Origin: origin() } }))
          .status,
        path,
      ).toBe(401);
    }
  });
});

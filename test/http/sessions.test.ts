/** Logins with a session on both hosts, through a real cookie jar. Attacks on them: attacks-sessions.test.ts. */
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { Browser, loggedInBrowser } from '../harness/browser.js';
import {
  ADMIN,
  DAY,
  MINUTE,
  basic,
  baseUrl,
  callJson,
  createUser,
  setClockOffset,
  uniqueLogin,
} from '../harness/client.js';
import { BASE_TEST_ENV } from '../harness/hosts.js';

const PASSWORD = 'Str0ng$pass';
const base = () => baseUrl();
const origin = () => new URL(baseUrl()).origin;
const root = () => new URL(baseUrl()).pathname;
const url = (path: string) => `${base()}${path}`;

afterEach(() => setClockOffset(0));

const loggedIn = (login: string, password = PASSWORD) => loggedInBrowser(baseUrl(), login, password);

const me = (b: Browser) => b.fetch(url('/v4/users/me'));

describe('POST /v3/login', () => {
  it('JSON: a session cookie with the right attributes; authenticated requests; logout ends it', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const b = new Browser(origin());
    const res = await b.postJson(url('/v3/login'), { login, password: PASSWORD });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { user: { login: string }; expiresAt: string };
    expect(body.user.login).toBe(login);
    const setCookie = res.headers.getSetCookie().join('\n');
    expect(setCookie).toMatch(/auth_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/Secure/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toContain(`Path=${root()}`);

    const profile = await me(b);
    expect(profile.status).toBe(200);
    expect(((await profile.json()) as { login: string }).login).toBe(login);

    expect((await b.fetch(url('/v3/logout'), { method: 'POST' })).status).toBe(204);
    expect(await b.cookie(url('/v4/users/me'), 'auth_session')).toBeUndefined();
    expect((await me(b)).status).toBe(401);
  });

  it('a cookie that was logged out is refused even if replayed', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const b = await loggedIn(login);
    const value = await b.cookie(url('/v4/users/me'), 'auth_session');
    await b.fetch(url('/v3/logout'), { method: 'POST' });
    const replay = await fetch(url('/v4/users/me'), { headers: { Cookie: `auth_session=${value}` } });
    expect(replay.status).toBe(401);
  });

  it('wrong password: 401 and no cookie', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const b = new Browser(origin());
    const res = await b.postJson(url('/v3/login'), { login, password: 'Wr0ng$pass' });
    expect(res.status).toBe(401);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('an expired password leads to the change-password flow', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { mustChangePassword: true });
    const res = await new Browser(origin()).postJson(url('/v3/login'), { login, password: PASSWORD });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { code: string; changePassword: string; passwordReason: string };
    expect(body.code).toBe('PASSWORD_EXPIRED');
    expect(body.passwordReason).toBe('initial');
    expect(body.changePassword).toBe(`${root()}/v4/users/me/password`);
  });

  it('form post: 303 to DEFAULT_FRONTEND_URL, or to a same-origin next', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 2 });
    const b = new Browser(origin());
    const plain = await b.postForm(url('/v3/login'), { login, password: PASSWORD });
    expect(plain.status).toBe(303);
    expect(plain.headers.get('location')).toBe('http://localhost/');
    const withNext = await b.postForm(url('/v3/login'), { login, password: PASSWORD, next: `${root()}/docs?x=1` });
    expect(withNext.headers.get('location')).toBe(`${root()}/docs?x=1`);
    expect((await me(b)).status).toBe(200);
  });

  it('form post with a wrong password: 303 to the front end with auth_error', async () => {
    const res = await new Browser(origin()).postForm(url('/v3/login'), {
      login: uniqueLogin('nobody'),
      password: 'Wr0ng$pass',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('http://localhost/?auth_error=invalid_credentials');
  });

  // Open-redirect attempts on every redirecting endpoint: the hostile suite (attacks-sessions.test.ts).

  it('a URL of the front end is an allowed next', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const res = await new Browser(origin()).postForm(url('/v3/login'), {
      login,
      password: PASSWORD,
      next: 'http://localhost/app/page',
    });
    expect(res.headers.get('location')).toBe('http://localhost/app/page');
  });

  it('a login form posted from another site is refused (login CSRF)', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const res = await new Browser('https://evil.example').postForm(url('/v3/login'), { login, password: PASSWORD });
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(res.headers.get('location')).toBe('http://localhost/?auth_error=forbidden');
  });

  it('malformed bodies: 400 for broken JSON, 415 for other types, 422 naming missing fields', async () => {
    const b = new Browser(origin());
    expect(
      (
        await b.fetch(url('/v3/login'), {
          method: 'POST',
          body: '{"login":',
          headers: { 'Content-Type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await b.fetch(url('/v3/login'), { method: 'POST', body: 'x', headers: { 'Content-Type': 'text/plain' } }))
        .status,
    ).toBe(415);
    const missing = await b.postJson(url('/v3/login'), { login: 'x' });
    expect(missing.status).toBe(422);
    expect(JSON.stringify(await missing.json())).toContain('password');
  });
});

describe('session limits and revocation', () => {
  it('limit 1 (AUTH_SESSIONS_DEFAULT_COUNT): a second login ends the first session', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const first = await loggedIn(login);
    const second = await loggedIn(login);
    expect((await me(first)).status).toBe(401);
    expect((await me(second)).status).toBe(200);
  });

  it('limit 5: the sixth login ends only the oldest', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 5 });
    const browsers: Browser[] = [];
    for (let i = 0; i < 6; i++) browsers.push(await loggedIn(login));
    const statuses = await Promise.all(browsers.map(async (b) => (await me(b)).status));
    expect(statuses).toEqual([401, 200, 200, 200, 200, 200]);
    const list = (await (await browsers[5]!.fetch(url('/v4/users/me/sessions'))).json()) as {
      items: { current: boolean }[];
    };
    expect(list.items).toHaveLength(5);
    expect(list.items.filter((s) => s.current)).toHaveLength(1);
  });

  it('revoking a session from another one is seen at once', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 2 });
    const a = await loggedIn(login);
    const b = await loggedIn(login);
    const list = (await (await b.fetch(url('/v4/users/me/sessions'))).json()) as {
      items: { id: string; current: boolean }[];
    };
    const other = list.items.find((s) => !s.current)!;
    expect((await b.fetch(url(`/v4/users/me/sessions/${other.id}`), { method: 'DELETE' })).status).toBe(204);
    expect((await me(a)).status).toBe(401);
    expect((await me(b)).status).toBe(200);
  });

  it('logout of all sessions', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 3 });
    const a = await loggedIn(login);
    const b = await loggedIn(login);
    expect((await a.fetch(url('/v3/logout/all'), { method: 'POST' })).status).toBe(204);
    expect((await me(a)).status).toBe(401);
    expect((await me(b)).status).toBe(401);
  });

  it("admins list and end any user's sessions; others may not", async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD);
    const user = await loggedIn(login);
    const list = await callJson<{ items: { id: string }[] }>(`/v4/users/${id}/sessions`, {
      auth: basic(ADMIN.login, ADMIN.password),
    });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect((await callJson(`/v4/users/${id}/sessions`, { auth: basic(login, PASSWORD) })).status).toBe(403);
    const del = await callJson(`/v4/users/${id}/sessions/${list.body.items[0]!.id}`, {
      method: 'DELETE',
      auth: basic(ADMIN.login, ADMIN.password),
    });
    expect(del.status).toBe(204);
    expect((await me(user)).status).toBe(401);
  });
});

describe('lifetime and tampering', () => {
  // A request's activity is written after its answer (architecture.md §6, "Background work does not even
  // take the answer's CPU"; the edge starts it 20 ms later): a client moving the clock by hours at once
  // leaves it the time to land, as any client's next request an hour later would: the test waits until the
  // account's sessions show it (`lastSeenAt` at the request's moment of the moved clock, `sent` in real time).
  const afterAnswer = (userId: string, offset: number, sent: number) =>
    expect
      .poll(
        async () => {
          const r = await callJson<{ items: { lastSeenAt: string }[] }>(`/v4/users/${userId}/sessions`, {
            auth: basic(ADMIN.login, ADMIN.password),
          });
          // A second of slack: workerd's clock advances only on I/O.
          return Math.max(0, ...r.body.items.map((i) => Date.parse(i.lastSeenAt))) >= sent + offset - 1000;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(true);

  it('idle timeout (120 min) and absolute timeout (24 h)', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD, { sessionLimit: 2 });
    const idle = await loggedIn(login);
    await setClockOffset(119 * MINUTE);
    let sent = Date.now();
    expect((await me(idle)).status).toBe(200); // activity is recorded (at most once a minute)
    await afterAnswer(id, 119 * MINUTE, sent);
    await setClockOffset(238 * MINUTE);
    sent = Date.now();
    expect((await me(idle)).status).toBe(200);
    await afterAnswer(id, 238 * MINUTE, sent);
    await setClockOffset(238 * MINUTE + 121 * MINUTE);
    expect((await me(idle)).status).toBe(401);

    await setClockOffset(0);
    const busy = await loggedIn(login);
    for (let m = 90; m < 24 * 60; m += 90) {
      await setClockOffset(m * MINUTE);
      sent = Date.now();
      expect((await me(busy)).status, `minute ${m}`).toBe(200);
      await afterAnswer(id, m * MINUTE, sent);
    }
    await setClockOffset(DAY + MINUTE);
    expect((await me(busy)).status).toBe(401);
  });

  // Forged, tampered and foreign-key cookies, and CSRF: the hostile suite (attacks-sessions.test.ts).
});

describe('POST /v3/oauth_login (the docs page Authorize flow)', () => {
  const form = (fields: Record<string, string>) =>
    fetch(url('/v3/oauth_login'), {
      method: 'POST',
      body: new URLSearchParams(fields),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });

  it('password grant: an access token that works as Bearer while its session lives, and the cookie', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const res = await form({ grant_type: 'password', username: login, password: PASSWORD, scope: '' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.getSetCookie().join()).toMatch(/auth_session=/);
    const token = (await res.json()) as { access_token: string; token_type: string; expires_in: number };
    expect(token.token_type).toBe('bearer');
    expect(token.expires_in).toBeGreaterThan(23 * 3600);
    const profile = await callJson('/v4/users/me', { auth: `Bearer ${token.access_token}` });
    expect(profile.body.login).toBe(login);
    expect((await callJson('/v3/logout', { method: 'POST', auth: `Bearer ${token.access_token}` })).status).toBe(204);
    expect((await callJson('/v4/users/me', { auth: `Bearer ${token.access_token}` })).status).toBe(401);
  });

  it('OAuth errors: invalid_grant, unsupported_grant_type, invalid_request', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const wrong = await form({ grant_type: 'password', username: login, password: 'Wr0ng$pass' });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toBe('invalid_grant');
    expect(((await (await form({ grant_type: 'client_credentials' })).json()) as { error: string }).error).toBe(
      'unsupported_grant_type',
    );
    expect(((await (await form({ grant_type: 'password', username: login })).json()) as { error: string }).error).toBe(
      'invalid_request',
    );
  });
});

describe('POST /v3/login/union', () => {
  const key = new TextEncoder().encode(BASE_TEST_ENV.SESSION_SECRET_KEY!);
  // A pending merge is bound to the browser: its claims carry the SHA-256 of the binding cookie.
  const BINDING = 'b'.repeat(64);
  const pending = (claims: Record<string, string>, audience = 'auth-pending-merge') =>
    new SignJWT({ binding: createHash('sha256').update(BINDING).digest('hex'), ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience(audience)
      .setExpirationTime('10m')
      .sign(key);
  const withPending = async (b: Browser, token: string) => {
    await b.jar.setCookie(`auth_pending_merge=${token}; Path=${root()}`, url('/v3/login/union'));
    await b.jar.setCookie(`auth_merge_binding=${BINDING}; Path=/`, url('/v3/login/union'));
  };

  it('links the external identity to the local account after the local password, once', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD, { sessionLimit: 2 });
    const identity = {
      login,
      source: 'ldap',
      sourceName: 'corp',
      issuer: '',
      externalId: `uid=${login},dc=example,dc=org`,
    };
    const b = new Browser(origin());
    await withPending(b, await pending(identity));
    expect((await b.postJson(url('/v3/login/union'), { password: 'Wr0ng$pass' })).status).toBe(401);
    const ok = await b.postJson(url('/v3/login/union'), { password: PASSWORD });
    expect(ok.status).toBe(200);
    expect((await me(b)).status).toBe(200);
    expect(await b.cookie(url('/v3/login/union'), 'auth_pending_merge')).toBeUndefined();
    expect(await b.cookie(url('/v3/login/union'), 'auth_merge_binding')).toBeUndefined();

    // The same identity cannot be linked twice.
    const again = new Browser(origin());
    await withPending(again, await pending(identity));
    expect((await again.postJson(url('/v3/login/union'), { password: PASSWORD })).status).toBe(409);
  });

  it('without a valid pending merge: 401', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    expect((await new Browser(origin()).postJson(url('/v3/login/union'), { password: PASSWORD })).status).toBe(401);
    const b = new Browser(origin());
    // A session token is not a pending merge (audiences differ).
    await withPending(
      b,
      await pending({ login, source: 'ldap', sourceName: 'corp', issuer: '', externalId: 'x' }, 'auth-session'),
    );
    expect((await b.postJson(url('/v3/login/union'), { password: PASSWORD })).status).toBe(401);
    // A genuine pending merge without its binding cookie (or with another browser's): 401.
    for (const binding of [undefined, 'c'.repeat(64)]) {
      const nb = new Browser(origin());
      const claim = await pending({ login, source: 'ldap', sourceName: 'corp', issuer: '', externalId: 'x' });
      await nb.jar.setCookie(`auth_pending_merge=${claim}; Path=${root()}`, url('/v3/login/union'));
      if (binding) await nb.jar.setCookie(`auth_merge_binding=${binding}; Path=/`, url('/v3/login/union'));
      expect((await nb.postJson(url('/v3/login/union'), { password: PASSWORD })).status).toBe(401);
    }
  });
});

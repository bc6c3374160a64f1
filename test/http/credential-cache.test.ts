/**
 * The in-process cache of token and session lookups (architecture.md, "Performance") never lets a
 * credential outlive what ended it on the same instance: each case uses the credential (so its
 * lookup is cached), ends it, and uses it again at once. On both hosts. A revoked token, a logout,
 * a blocked and a deleted account are attacks of the hostile suite (attacks-hosts.test.ts), there
 * on the instance that ended them and on another one.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN, basic, callJson, call, createUser, uniqueLogin } from '../harness/client.js';

const PASSWORD = 'Cach3$pass';
const admin = basic(ADMIN.login, ADMIN.password);

async function issueToken(login: string): Promise<{ token: string; id: string }> {
  const r = await callJson<{ token: string; id: string }>('/v4/users/me/tokens', {
    method: 'POST',
    auth: basic(login, PASSWORD),
    json: { name: 'cache' },
  });
  expect(r.status).toBe(201);
  return r.body;
}

/** Logs in with /v3/login; returns the `Cookie` header value of the session. */
async function sessionCookie(login: string): Promise<string> {
  const r = await call('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
  expect(r.status).toBe(200);
  const pair = r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.includes('auth_session='));
  expect(pair).toBeDefined();
  return pair!;
}

const bearerStatus = async (token: string, path = '/v4/users/me') =>
  (await call(path, { auth: `Bearer ${token}` })).status;
const cookieStatus = async (cookie: string, path = '/v4/users/me') =>
  (await call(path, { headers: { Cookie: cookie } })).status;

/** Uses the credential a few times: its lookup is cached from the first use on. */
async function warm(status: () => Promise<number>): Promise<void> {
  for (let i = 0; i < 3; i++) expect(await status()).toBe(200);
}

describe('credential cache: what ends a credential takes effect at once on the same instance', () => {
  it('a password change ends the sessions (made with Basic)', async () => {
    const login = uniqueLogin('cache');
    await createUser(login, PASSWORD);
    const cookie = await sessionCookie(login);
    await warm(() => cookieStatus(cookie));
    const changed = await call('/v4/users/me/password', {
      method: 'PUT',
      auth: basic(login, PASSWORD),
      json: { oldPassword: PASSWORD, newPassword: 'N3w$cached' },
    });
    expect(changed.status).toBe(204);
    expect(await cookieStatus(cookie)).toBe(401);
  });

  it('a demoted administrator loses the admin role at once (token and session)', async () => {
    const login = uniqueLogin('cache');
    const id = await createUser(login, PASSWORD, { role: 'admin' });
    const { token } = await issueToken(login);
    const cookie = await sessionCookie(login);
    await warm(() => bearerStatus(token, '/v4/users?limit=1'));
    await warm(() => cookieStatus(cookie, '/v4/users?limit=1'));
    expect((await call(`/v4/users/${id}`, { method: 'PATCH', auth: admin, json: { role: 'user' } })).status).toBe(200);
    expect(await bearerStatus(token, '/v4/users?limit=1')).toBe(403);
    expect(await cookieStatus(cookie, '/v4/users?limit=1')).toBe(403);
  });
});

/** Token and session lookups that reached the database on the host (a test-only route). */
async function lookups(): Promise<{ tokens: number; sessions: number }> {
  const r = await callJson<{ tokens: number; sessions: number }>('/__test__/credential-lookups');
  expect(r.status).toBe(200);
  return r.body;
}

describe('credential cache: a write invalidates only the account it touches', () => {
  it("blocking A refuses A's token and session at once, while B's cached token and session cost no query", async () => {
    // The check is only meaningful while B's entries are younger than the cache's TTL (1 s): on a
    // loaded machine the sequence is tried again with new accounts.
    for (let attempt = 1; ; attempt++) {
      const [a, b] = [uniqueLogin('cache-a'), uniqueLogin('cache-b')];
      const idA = await createUser(a, PASSWORD);
      await createUser(b, PASSWORD);
      const [tokenA, tokenB] = [(await issueToken(a)).token, (await issueToken(b)).token];
      const [cookieA, cookieB] = [await sessionCookie(a), await sessionCookie(b)];
      await warm(() => bearerStatus(tokenA));
      await warm(() => cookieStatus(cookieA));
      const started = Date.now();
      await warm(() => bearerStatus(tokenB));
      await warm(() => cookieStatus(cookieB));
      const before = await lookups();
      expect((await call(`/v4/users/${idA}/block`, { method: 'POST', auth: admin })).status).toBe(200);
      expect(await bearerStatus(tokenB)).toBe(200);
      expect(await cookieStatus(cookieB)).toBe(200);
      const afterB = await lookups();
      const elapsed = Date.now() - started;
      expect(await bearerStatus(tokenA)).toBe(401);
      expect(await cookieStatus(cookieA)).toBe(401);
      const afterA = await lookups();
      if (elapsed >= 900 && attempt < 4) continue;
      expect(elapsed).toBeLessThan(900);
      // B: served from the cache (no query); A: read again (one query each), and refused.
      expect(afterB).toEqual(before);
      expect(afterA).toEqual({ tokens: before.tokens + 1, sessions: before.sessions + 1 });
      return;
    }
  });
});

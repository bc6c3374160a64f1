/**
 * The in-process cache of token and session lookups (architecture.md, "Performance") never lets a
 * credential outlive what ended it on the same instance: each case uses the credential (so its
 * lookup is cached), ends it, and uses it again at once. On both hosts. A revoked token, a logout,
 * a blocked and a deleted account are attacks of the hostile suite (attacks-hosts.test.ts), there
 * on the instance that ended them and on another one.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN, basic, callJson, call, createUser, uniqueLogin, withSettings } from '../harness/client.js';

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

describe('GET /v4/users/me with a cached credential answers the account as it is now', () => {
  it('after a change of the account, by its owner and by an administrator, and of the settings', async () => {
    const login = uniqueLogin('cache');
    const id = await createUser(login, PASSWORD);
    const { token } = await issueToken(login);
    const cookie = await sessionCookie(login);
    const me = async () => {
      const byToken = await callJson<Record<string, unknown>>('/v4/users/me', { auth: `Bearer ${token}` });
      const bySession = await callJson<Record<string, unknown>>('/v4/users/me', { headers: { Cookie: cookie } });
      expect([byToken.status, bySession.status]).toEqual([200, 200]);
      expect(bySession.body).toEqual(byToken.body);
      return byToken.body;
    };
    await warm(() => bearerStatus(token));
    await warm(() => cookieStatus(cookie));
    const before = await me();
    expect(before).toMatchObject({ login, language: null, displayName: login });

    const own = await call('/v4/users/me', { method: 'PATCH', auth: basic(login, PASSWORD), json: { language: 'ru' } });
    expect(own.status).toBe(200);
    expect(await me()).toMatchObject({ language: 'ru' });

    const renamed = await call(`/v4/users/${id}`, { method: 'PATCH', auth: admin, json: { displayName: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect(await me()).toMatchObject({ language: 'ru', displayName: 'Renamed' });

    // The expiry of the password is the settings' (days after its change): a new value shows at once.
    const changedAt = Date.parse(before.passwordChangedAt as string);
    expect(Date.parse(before.passwordExpiresAt as string)).toBe(changedAt + 60 * 86_400_000);
    await withSettings({ USER_PASSWORD_EXPIRATION_DAY: 90 }, async () => {
      expect(Date.parse((await me()).passwordExpiresAt as string)).toBe(changedAt + 90 * 86_400_000);
    });
    expect(Date.parse((await me()).passwordExpiresAt as string)).toBe(changedAt + 60 * 86_400_000);
  });
});

/** Token and session lookups that reached the database on the host (a test-only route). */
async function lookups(): Promise<{ tokens: number; sessions: number }> {
  const r = await callJson<{ tokens: number; sessions: number }>('/__test__/credential-lookups');
  expect(r.status).toBe(200);
  return r.body;
}

describe('credential cache: a write invalidates only the account it touches', () => {
  /**
   * Queries of `kind` that B's credential costs over its first use, a write for another account, and
   * its second use: 1 when the second use is served from the cache. Only meaningful while B's entry is
   * younger than the cache's TTL (1 s): on a loaded machine it is tried again with a new credential.
   */
  async function queriesOfB(
    kind: 'tokens' | 'sessions',
    credentialOfB: () => Promise<() => Promise<number>>,
    writeForA: () => Promise<void>,
  ): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const useB = await credentialOfB();
      const before = await lookups();
      const started = Date.now();
      expect(await useB()).toBe(200);
      await writeForA();
      expect(await useB()).toBe(200);
      const elapsed = Date.now() - started;
      const after = await lookups();
      if (elapsed < 900 || attempt === 6) {
        expect(elapsed).toBeLessThan(900);
        return after[kind] - before[kind];
      }
    }
  }

  /** A new account, with a token and a session in use: its id and how to use them. */
  async function accountInUse(prefix: string) {
    const login = uniqueLogin(prefix);
    const id = await createUser(login, PASSWORD);
    const { token } = await issueToken(login);
    const cookie = await sessionCookie(login);
    await warm(() => bearerStatus(token));
    await warm(() => cookieStatus(cookie));
    return { id, token, cookie };
  }

  it("blocking A refuses A's token and session at once, while B's cached token and session cost no query", async () => {
    const b = uniqueLogin('cache-b');
    await createUser(b, PASSWORD);
    const block = async (id: string) =>
      expect((await call(`/v4/users/${id}/block`, { method: 'POST', auth: admin })).status).toBe(200);
    const blocked: Array<{ token: string; cookie: string }> = [];
    const blockA = async () => {
      const a = await accountInUse('cache-a');
      // Timed from B's first use: A is made before it, blocked within it.
      return async () => {
        await block(a.id);
        blocked.push(a);
      };
    };
    // The block's own request is inside B's window; A is prepared outside it.
    let pending: () => Promise<void> = async () => {};
    const tokenQueries = await queriesOfB(
      'tokens',
      async () => {
        pending = await blockA();
        const { token } = await issueToken(b);
        return () => bearerStatus(token);
      },
      () => pending(),
    );
    const sessionQueries = await queriesOfB(
      'sessions',
      async () => {
        pending = await blockA();
        const cookie = await sessionCookie(b);
        return () => cookieStatus(cookie);
      },
      () => pending(),
    );
    // B: one query at its first use, none after A's block.
    expect({ tokenQueries, sessionQueries }).toEqual({ tokenQueries: 1, sessionQueries: 1 });
    // A: refused at once, token and session.
    for (const a of blocked) {
      expect(await bearerStatus(a.token)).toBe(401);
      expect(await cookieStatus(a.cookie)).toBe(401);
    }
  });
});

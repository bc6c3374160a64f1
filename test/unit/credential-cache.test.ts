/**
 * The credential cache (architecture.md, "Performance"): which writes empty it, how long an entry
 * lives, what it never keeps; and two Node hosts on one database, where a change made on one is
 * seen on the other within the documented bound (CREDENTIAL_CACHE_TTL_MS).
 */
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import Database from 'libsql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../../schema/index.js';
import { accountOfToken, issueToken, revokeToken, touchToken } from '../../worker/src/accounts/tokens.js';
import {
  createSession,
  revokeSessions,
  sessionAccount,
  touchSession,
  type SessionPolicy,
} from '../../worker/src/accounts/sessions.js';
import {
  CREDENTIAL_CACHE_TTL_MS,
  CredentialCache,
  invalidateAccount,
  writeMark,
} from '../../worker/src/store/index.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { ADMIN } from '../harness/client.js';
import { startNodeTestHost, type RunningHost } from '../harness/hosts.js';

describe('which writes drop cached lookups', () => {
  let t: TestApp;
  let file: string;
  let raw: InstanceType<typeof Database>;
  beforeAll(async () => {
    t = await createTestApp();
    // The same database file through a connection of its own: writes the service does not see.
    file = (await t.db.all<{ file: string }>(sql`select file from pragma_database_list where name = 'main'`))[0]!.file;
    raw = new Database(file);
  });
  afterAll(() => {
    raw.close();
    t.close();
  });

  const admin = async () => (await t.db.select().from(users).where(eq(users.login, ADMIN.login)))[0]!;
  const p: SessionPolicy = { idleMs: 3_600_000, absoluteMs: 86_400_000, recheckMs: 5_000 };

  it('a write through accounts/ drops the entries of its account only; activity touches drop nothing', async () => {
    const a = await admin();
    const now = Date.now();
    const config = (await import('../../worker/src/config/index.js')).parseEnvironment({});
    const [b] = await t.db
      .insert(users)
      .values({ ...a, id: crypto.randomUUID(), login: `b-${now}`, loginKey: `b-${now}`, loginSkeleton: null })
      .returning();
    const sa = await createSession(t.db, a, { kind: 'cookie', authMethod: 'local_password', now, config });
    const sb = await createSession(t.db, b!, { kind: 'cookie', authMethod: 'local_password', now, config });
    const tb = await issueToken(t.db, b!, { name: 'b', expiresAt: null, scopes: null, now, actor: b! });
    expect(await sessionAccount(t.db, sa.id, now, p)).toBeDefined();
    expect(await sessionAccount(t.db, sb.id, now, p)).toBeDefined();
    const cachedToken = (await accountOfToken(t.db, tb.token, now, p.recheckMs))!;
    // B's credentials end behind the service's back (as another instance would): its cached answers stand...
    raw.prepare('update sessions set revoked_at = ? where id = ?').run(now, sb.id);
    raw.prepare('update api_tokens set revoked_at = ? where id = ?').run(now, tb.id);
    // ...through the activity touches of B and a revocation of A's sessions, which ends A's at once.
    await touchSession(t.db, { ...sb, lastSeenAt: now - 120_000 }, now)?.();
    await touchToken(t.db, { ...cachedToken, lastUsedAt: null }, now)?.();
    expect(await revokeSessions(t.db, a, { now, actor: a, reason: 'logout' })).toBeGreaterThan(0);
    expect(await sessionAccount(t.db, sa.id, now + 1, p)).toBeUndefined();
    expect(await sessionAccount(t.db, sb.id, now + 1, p)).toBeDefined();
    expect(await accountOfToken(t.db, tb.token, now + 1, p.recheckMs)).toBeDefined();
    // A write of B's own (through accounts/) drops B's entries too.
    await revokeToken(t.db, b!, 'no-such-token', { now, actor: b! });
    expect(await sessionAccount(t.db, sb.id, now + 2, p)).toBeUndefined();
    expect(await accountOfToken(t.db, tb.token, now + 2, p.recheckMs)).toBeUndefined();
  });

  it('a session lookup is served from the cache until the revocation re-check bound has passed', async () => {
    const user = await admin();
    const now = Date.now();
    const config = (await import('../../worker/src/config/index.js')).parseEnvironment({});
    const p: SessionPolicy = { idleMs: 3_600_000, absoluteMs: 86_400_000, recheckMs: 5_000 };
    const session = await createSession(t.db, user, { kind: 'cookie', authMethod: 'local_password', now, config });
    expect(await sessionAccount(t.db, session.id, now, p)).toBeDefined();
    raw.prepare('update sessions set revoked_at = ? where id = ?').run(now, session.id);
    expect(await sessionAccount(t.db, session.id, now + 10, p)).toBeDefined();
    // ...past the old one-second life too, until the revocation re-check bound has passed.
    expect(await sessionAccount(t.db, session.id, now + CREDENTIAL_CACHE_TTL_MS + 1, p)).toBeDefined();
    expect(await sessionAccount(t.db, session.id, now + p.recheckMs, p)).toBeUndefined();
  });
});

describe('CredentialCache', () => {
  const load = (value: string | undefined) => {
    let calls = 0;
    return { fn: async () => (calls++, value), calls: () => calls };
  };

  it('keeps a found value for the TTL of the service clock, then reads again', async () => {
    const c = new CredentialCache<string>(1000);
    const l = load('v');
    const ok = () => true;
    expect(await c.get('k', 10_000, ok, l.fn)).toBe('v');
    expect(await c.get('k', 10_999, ok, l.fn)).toBe('v');
    expect(l.calls()).toBe(1);
    expect(await c.get('k', 11_000, ok, l.fn)).toBe('v');
    expect(l.calls()).toBe(2);
    // A clock that went back: read again.
    expect(await c.get('k', 5_000, ok, l.fn)).toBe('v');
    expect(l.calls()).toBe(3);
  });

  it('never keeps "not found", and re-reads when the use-time check fails', async () => {
    const c = new CredentialCache<string>(1000);
    const none = load(undefined);
    await c.get('k', 0, () => true, none.fn);
    await c.get('k', 1, () => true, none.fn);
    expect(none.calls()).toBe(2);
    const l = load('v');
    await c.get('x', 0, () => true, l.fn);
    await c.get('x', 1, () => false, l.fn);
    expect(l.calls()).toBe(2);
  });

  it('does not keep a lookup of an account written meanwhile, keeps the others, and is bounded', async () => {
    const c = new CredentialCache<string>(1000, 3, (v) => v);
    const slowLoad = (value: string) => {
      let release!: () => void;
      const slow = new Promise<void>((r) => (release = r));
      return {
        load: async () => {
          await slow;
          return value;
        },
        release: () => release(),
      };
    };
    const a = slowLoad('a');
    const b = slowLoad('b');
    const pendingA = c.get('ka', 0, () => true, a.load);
    const pendingB = c.get('kb', 0, () => true, b.load);
    // A write of account "a" starts and ends meanwhile.
    invalidateAccount('a');
    a.release();
    b.release();
    expect(await pendingA).toBe('a');
    expect(await pendingB).toBe('b');
    expect(c.size).toBe(1);
    invalidateAccount('b');
    expect(c.size).toBe(0);
    for (const k of ['a', 'b', 'c', 'd'])
      await c.get(
        k,
        0,
        () => true,
        async () => k,
      );
    expect(c.size).toBe(3);
  });

  it('`keep`: a value read elsewhere (a start-up batch) is served, unless its account was written since', async () => {
    const c = new CredentialCache<string>(1000, 10, (v) => v);
    const never = async (): Promise<string> => {
      throw new Error('read again');
    };
    c.keep('ka', 'a', 0, writeMark());
    expect(await c.get('ka', 500, () => true, never)).toBe('a');
    const before = writeMark();
    invalidateAccount('b');
    c.keep('kb', 'b', 0, before);
    c.keep('kc', 'c', 0, before);
    expect(c.size).toBe(2);
    expect(await c.get('kc', 1, () => true, never)).toBe('c');
    expect(
      await c.get(
        'kb',
        1,
        () => true,
        async () => 'b again',
      ),
    ).toBe('b again');
  });
});

describe('two Node hosts on one database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'auth-two-hosts-'));
  let a: RunningHost;
  let b: RunningHost;
  beforeAll(async () => {
    const database = join(dir, 'auth.db');
    // A one-second revocation re-check bound (AUTH_REVOCATION_CHECK_SEC), the bound these cases measure.
    a = await startNodeTestHost({ AUTH_REVOCATION_CHECK_SEC: '1' }, { database });
    b = await startNodeTestHost({ AUTH_REVOCATION_CHECK_SEC: '1' }, { database });
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const adminAuth = `Basic ${Buffer.from(`${ADMIN.login}:${ADMIN.password}`).toString('base64')}`;
  const status = async (host: RunningHost, headers: Record<string, string>) =>
    (await fetch(`${host.url}/v4/users/me`, { headers })).status;

  /** ms until `host` refuses `headers` (polling every 50 ms, at most 5 s). */
  async function refusedAfter(host: RunningHost, headers: Record<string, string>, since: number): Promise<number> {
    while (Date.now() - since < 5000) {
      if ((await status(host, headers)) === 401) return Date.now() - since;
      await new Promise((r) => setTimeout(r, 50));
    }
    return Infinity;
  }

  it('a token revoked on one host is refused on the other within the bound', async () => {
    const issued = await fetch(`${a.url}/v4/users/me/tokens`, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: '{"name":"two-hosts"}',
    });
    const { token, id } = (await issued.json()) as { token: string; id: string };
    const headers = { authorization: `Bearer ${token}` };
    expect(await status(b, headers)).toBe(200); // cached on b from now on
    const since = Date.now();
    expect(
      (await fetch(`${a.url}/v4/users/me/tokens/${id}`, { method: 'DELETE', headers: { authorization: adminAuth } }))
        .status,
    ).toBe(204);
    expect(await status(a, headers)).toBe(401); // at once where it was revoked
    expect(await refusedAfter(b, headers, since)).toBeLessThanOrEqual(CREDENTIAL_CACHE_TTL_MS + 500);
  });

  it('a session logged out on one host is refused on the other within the bound', async () => {
    const login = await fetch(`${a.url}/v3/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => c.includes('auth_session='))!;
    const headers = { cookie };
    expect(await status(b, headers)).toBe(200);
    const since = Date.now();
    expect(
      (await fetch(`${a.url}/v3/logout`, { method: 'POST', headers: { cookie, origin: new URL(a.url).origin } }))
        .status,
    ).toBe(204);
    expect(await status(a, headers)).toBe(401);
    expect(await refusedAfter(b, headers, since)).toBeLessThanOrEqual(CREDENTIAL_CACHE_TTL_MS + 500);
  });
});

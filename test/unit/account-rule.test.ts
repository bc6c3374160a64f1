/**
 * The account rule (worker/src/accounts/login-rule.ts) against a real libSQL database: an admin block
 * is never overwritten by an inactivity block, and the last active administrator is never blocked
 * for inactivity (at login or by the job), only warned about.
 */
import { and, asc, eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runScheduledJobs } from '../../worker/src/schedule/index.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { createLogger } from '../../worker/src/http/logger.js';
import { ProblemError } from '../../worker/src/http/problem.js';
import { assertMayLogIn, blockIdleAccounts } from '../../worker/src/accounts/login-rule.js';
import type { UserRow } from '../../worker/src/accounts/model.js';
import { auditOutbox, users } from '../../schema/index.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { ADMIN, basic } from '../harness/client.js';

const DAY = 86_400_000;
const PASSWORD = 'Str0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);
const config = parseEnvironment({});
let t: TestApp;

beforeEach(async () => {
  // Passwords never expire here, so that only the inactivity rule answers logins months later.
  t = await createTestApp({ AUTH_LOG_LEVEL: 'WARNING', USER_PASSWORD_EXPIRATION_DAY: '0' });
});
afterEach(() => t.close());

const request = (path: string, auth: string, o: { method?: string; json?: unknown } = {}) =>
  t.app.request(`/api/auth${path}`, {
    method: o.method ?? (o.json ? 'POST' : 'GET'),
    headers: { Authorization: auth, ...(o.json ? { 'Content-Type': 'application/json' } : {}) },
    body: o.json ? JSON.stringify(o.json) : undefined,
  });
const login = (name: string) => request('/v3/login_without_session', basic(name, PASSWORD), { method: 'POST' });

async function createAccount(name: string, role: 'admin' | 'user' = 'user'): Promise<string> {
  const res = await request('/v4/users', admin, { json: { login: name, password: PASSWORD, role } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function row(name: string): Promise<UserRow> {
  return (await t.db.select().from(users).where(eq(users.login, name)))[0]!;
}

async function eventsOf(name: string) {
  const rows = await t.db
    .select()
    .from(auditOutbox)
    .where(eq(auditOutbox.subjectLogin, name))
    .orderBy(asc(auditOutbox.at));
  return rows.map((e) => ({ type: e.type, data: e.data }));
}

/** Captures WARNING lines of the logger the rule gets. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const write = (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>);
  const logger = createLogger({ threshold: () => 'WARNING', write });
  return { logger, lines };
}

describe('an admin block is never turned into an inactivity block', () => {
  it('by a login that read the account before the admin blocked it (LDAP, OIDC and local alike)', async () => {
    const sources = [
      { source: 'ldap', sourceName: 'corp' },
      { source: 'oidc', sourceName: 'idp' },
      { source: 'local' },
    ] as const;
    for (const source of sources) {
      const name = `race-${source.source}`;
      const id = await createAccount(name);
      t.clock.now += 46 * DAY;
      // The login read the account (active, idle for 46 days) ...
      const seen = await row(name);
      // ... then an administrator blocks it ...
      expect((await request(`/v4/users/${id}/block`, admin, { method: 'POST' })).status).toBeLessThan(300);
      // ... then the login applies the inactivity rule to what it read.
      const { logger } = capturingLogger();
      const ctx = { db: t.db, config, now: () => t.clock.now, logger };
      const refused = await assertMayLogIn(ctx, seen, source).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ProblemError);
      expect((refused as ProblemError).extensions.reason).toBe('admin');
      expect(await row(name)).toMatchObject({ status: 'blocked', blockedReason: 'admin' });
      const events = await eventsOf(name);
      const reasonOf = (e: { data: unknown }) => (e.data as { reason?: string }).reason;
      const inactivity = events.filter((e) => e.type === 'account.blocked' && reasonOf(e) === 'inactivity');
      expect(inactivity).toEqual([]);
      const refusal = { type: 'login.refused', data: { reason: 'blocked:admin', source: source.source } };
      expect(events.at(-1)).toMatchObject(refusal);
      t.clock.now -= 46 * DAY;
    }
  });

  it('by the inactivity job', async () => {
    const id = await createAccount('race-job');
    t.clock.now += 46 * DAY;
    expect((await request(`/v4/users/${id}/block`, admin, { method: 'POST' })).status).toBeLessThan(300);
    await runScheduledJobs({ db: t.db, config, now: () => t.clock.now, logger: capturingLogger().logger });
    expect(await row('race-job')).toMatchObject({ status: 'blocked', blockedReason: 'admin' });
  });
});

describe('the last active administrator is never blocked for inactivity', () => {
  it('the only administrator, idle past the limit: the job keeps them active (warning); they log in', async () => {
    t.clock.now += 46 * DAY;
    const { logger, lines } = capturingLogger();
    expect(await blockIdleAccounts({ db: t.db, config, now: () => t.clock.now, logger })).toBe(0);
    expect(await row(ADMIN.login)).toMatchObject({ status: 'active', blockedReason: null });
    const msg = expect.stringContaining('last active administrator');
    expect(lines).toEqual([expect.objectContaining({ level: 'WARNING', login: ADMIN.login, by: 'job', msg })]);
    expect((await eventsOf(ADMIN.login)).filter((e) => e.type === 'account.blocked')).toEqual([]);

    const res = await request('/v3/login_without_session', admin, { method: 'POST' });
    expect(res.status).toBe(200);
    const logged = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toContainEqual(expect.objectContaining({ level: 'WARNING', login: ADMIN.login, by: 'login', msg }));
    expect(await row(ADMIN.login)).toMatchObject({ status: 'active', lastLoginAt: t.clock.now });
  });

  it('with two idle administrators the job blocks the longer idle one and keeps the other', async () => {
    await createAccount('second-admin', 'admin');
    t.clock.now += DAY;
    expect((await login('second-admin')).status).toBe(200);
    t.clock.now += 50 * DAY;
    const { logger, lines } = capturingLogger();
    expect(await blockIdleAccounts({ db: t.db, config, now: () => t.clock.now, logger })).toBe(1);
    expect(await row(ADMIN.login)).toMatchObject({ status: 'blocked', blockedReason: 'inactivity' });
    expect(await row('second-admin')).toMatchObject({ status: 'active' });
    expect(lines).toEqual([expect.objectContaining({ login: 'second-admin', by: 'job' })]);
  });

  it('at login: with another active administrator the idle one is blocked; the last one logs in', async () => {
    await createAccount('other-admin', 'admin');
    t.clock.now += 40 * DAY;
    expect((await login('other-admin')).status).toBe(200);
    t.clock.now += 6 * DAY;
    const blocked = await request('/v3/login_without_session', admin, { method: 'POST' });
    expect(blocked.status).toBe(403);
    expect(((await blocked.json()) as { reason: string }).reason).toBe('inactivity');
    expect(await row(ADMIN.login)).toMatchObject({ status: 'blocked', blockedReason: 'inactivity' });
    expect(await eventsOf(ADMIN.login)).toEqual(
      expect.arrayContaining([
        { type: 'account.blocked', data: { reason: 'inactivity', by: 'login', source: 'local' } },
        { type: 'login.refused', data: { reason: 'blocked:inactivity', source: 'local' } },
      ]),
    );

    // Now other-admin is the last active administrator: idle 46 days more, still logs in.
    t.clock.now += 46 * DAY;
    expect((await login('other-admin')).status).toBe(200);
    expect(await row('other-admin')).toMatchObject({ status: 'active' });
  });

  it('an ordinary account idle past the limit is blocked by the job even when no administrator is active', async () => {
    await createAccount('idle-user');
    t.clock.now += 46 * DAY;
    await runScheduledJobs({ db: t.db, config, now: () => t.clock.now, logger: capturingLogger().logger });
    const rows = await t.db
      .select({ login: users.login, status: users.status })
      .from(users)
      .where(eq(users.status, 'blocked'));
    expect(rows).toEqual([{ login: 'idle-user', status: 'blocked' }]);
  });
});

/**
 * The Node host's lazy connection (worker/node/host.ts `lazyDb`, architecture.md §6): API-access
 * events, login-attempt reservations, a successful login's record and a new session commit there
 * without waiting for the disk; everything else, a failed login included, on the main connection with an fsync.
 * Lockout counting stays atomic across both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { auditOutbox, loginAttempts, users } from '../../schema/index.js';
import { outboxEvents } from '../../worker/src/audit/api-access.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { assembleService, type Service } from '../../worker/src/service.js';
import { openDatabase, prepareEmbedded, type OpenedDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { nodeStaticFiles } from '../../worker/node/static-files.js';
import { BASE_TEST_ENV } from '../harness/hosts.js';
import { ADMIN, basic } from '../harness/client.js';

const dir = mkdtempSync(join(tmpdir(), 'lazy-writes-'));
let database: OpenedDatabase;
let service: Service;

beforeAll(async () => {
  const quiet = { AUTH_LOG_LEVEL: 'CRITICAL', AUTH_ACCESS_LOG_LEVEL: 'CRITICAL' };
  const env = parseEnvironment({ ...BASE_TEST_ENV, ...quiet, LIBSQL_URL: `file:${join(dir, 'a.db')}` });
  database = openDatabase(env);
  await prepareEmbedded(database.db);
  await migrateDatabase(database.db, env.get('DB_SCHEMA'));
  service = assembleService({
    env,
    openDb: () => database.db,
    openLazyDb: database.lazyDb,
    hasher: createNodeNativeHasher(),
    hostName: 'lazy-test',
    staticFiles: nodeStaticFiles('static'),
    writeLog: () => {},
    settingsTtlMs: 0,
  });
  await service.bootstrap();
});
afterAll(() => {
  database.close();
  rmSync(dir, { recursive: true, force: true });
});

const login = (password: string) =>
  service.app.request('/api/auth/v3/login_without_session', {
    method: 'POST',
    headers: { Authorization: basic(ADMIN.login, password) },
  });
const synchronous = async (db: OpenedDatabase['db']) => (await db.$client.execute('PRAGMA synchronous')).rows[0]![0];

// What runs after an answer, on the main connection, and may land while a later request is watched: a
// session's or account's last-use touch, and the event handlers' work (a new device's mail queued, the
// events marked handled). Not a login's own writes, which these tests count.
const sqlOf = (q: unknown) => (q as { toSQL?: () => { sql: string } }).toSQL?.().sql ?? '';
const AFTER_ANSWER = [
  /^update "(sessions|users)" set "(last_seen_at|last_activity_at)" = \?/,
  /^insert into "notifications" /,
  /^update "audit_outbox" set "handled_at" = \?/,
];
const afterAnswerOnly = (qs: readonly unknown[]) => qs.every((q) => AFTER_ANSWER.some((r) => r.test(sqlOf(q))));
const ownBatches = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls.filter(([qs]) => !afterAnswerOnly(qs as unknown[]));

describe('lazy connection (Node, embedded file)', () => {
  it('is a second connection committing without fsync (NORMAL); the main one keeps FULL', async () => {
    expect(database.lazyDb()).not.toBe(database.db);
    expect(database.lazyDb()).toBe(database.lazyDb());
    expect(await synchronous(database.lazyDb())).toBe(1);
    expect(await synchronous(database.db)).toBe(2);
  });

  it("a login's attempt is reserved on it, and a success is recorded on it too", async () => {
    const lazyBatch = vi.spyOn(database.lazyDb(), 'batch');
    const mainBatch = vi.spyOn(database.db, 'batch');
    const before = Date.now();
    expect((await login(ADMIN.password)).status).toBe(200);
    expect(lazyBatch).toHaveBeenCalledTimes(2); // the reservation, then the success's record
    expect(ownBatches(mainBatch)).toEqual([]);
    lazyBatch.mockRestore();
    mainBatch.mockRestore();
    // ...and read back on the main connection: the event and the account's last login.
    const events = await database.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'login.success'));
    expect(events.some((e) => e.at >= before && e.subjectLogin === ADMIN.login)).toBe(true);
    const [admin] = await database.db.select().from(users).where(eq(users.login, ADMIN.login));
    expect(admin!.lastLoginAt).toBeGreaterThanOrEqual(before);
  });

  it(
    "a session login writes its session on it too, with the login's record; the cookie works at once " +
      '(read on the main one)',
    async () => {
      const lazyBatch = vi.spyOn(database.lazyDb(), 'batch');
      const mainBatch = vi.spyOn(database.db, 'batch');
      const res = await service.app.request('/api/auth/v3/login', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ login: ADMIN.login, password: ADMIN.password }),
      });
      expect(res.status).toBe(200);
      // The reservation, then one transaction: the success's record (4 statements: the login's and the
      // account's failures forgotten, the last login, its event), the new device (its row and its
      // device.added event, which the new-device mail follows), and the session's (its row, the ends
      // beyond the limit, its event).
      expect(lazyBatch).toHaveBeenCalledTimes(2);
      expect(lazyBatch.mock.calls[1]![0]).toHaveLength(9);
      expect(ownBatches(mainBatch)).toEqual([]);
      lazyBatch.mockRestore();
      mainBatch.mockRestore();
      const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
      const me = await service.app.request('/api/auth/v4/users/me', { headers: { Cookie: cookie } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { login: string }).login).toBe(ADMIN.login);
    },
  );

  it('a wrong password is recorded on the main connection (with its fsync) before the 401', async () => {
    const mainBatch = vi.spyOn(database.db, 'batch');
    expect((await login('Wr0ng$pass')).status).toBe(401);
    // Not counted: the previous tests' work after their answers (it may land now).
    expect(ownBatches(mainBatch)).toHaveLength(1);
    mainBatch.mockRestore();
    // The success before it forgot the earlier failures: this one is the only attempt counted, against
    // the login and against the account's total (no client address in app.request: no address budget).
    const attempts = await database.db.select().from(loginAttempts);
    expect(attempts.map((a) => a.throttleKey).sort()).toEqual([`all:local:${ADMIN.login}`, `local:${ADMIN.login}`]);
    await login(ADMIN.password); // forgotten again, for the lockout test below
  });

  it('lockout still counts every attempt: 3 wrong passwords lock, then even the right one is refused', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await login('Wr0ng$pass')).status);
    expect(statuses).toEqual([401, 401, 401]);
    const locked = await login(ADMIN.password);
    expect(locked.status).toBe(401);
    expect(((await locked.json()) as { code: string }).code).toBe('ACCOUNT_LOCKED');
  });

  it('API-access events are written through it and read back on the main connection', async () => {
    const lazyBatch = vi.spyOn(database.lazyDb().$client, 'batch');
    const user = { id: 'u1', login: 'x' };
    const request = { httpMethod: 'GET', path: '/p', status: 200, requestId: 'lazy-r1' };
    const client = { sourceIp: null, userAgent: null };
    service.apiAccess.record({ at: Date.now(), user, method: 'basic', ...request, ...client }, () => {});
    await service.apiAccess.flush();
    expect(lazyBatch).toHaveBeenCalledTimes(1);
    // One outbox row per batch (audit/api-access.ts), read back on the main connection.
    const batches = await database.db.select().from(auditOutbox).where(eq(auditOutbox.stream, 'api_access'));
    expect(batches.flatMap(outboxEvents).filter((e) => e.requestId === 'lazy-r1')).toHaveLength(1);
    lazyBatch.mockRestore();
  });
});

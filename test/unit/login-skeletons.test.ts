/**
 * The skeleton columns of look-alike logins (worker/src/users/login-skeletons.ts), filled by the backfill on a
 * real libSQL database that already holds look-alike live accounts (reported, never changed); the backfill in
 * batches, two at once, and a Node host that answers while it runs (docs/architecture.md §6, "Backfills after
 * an upgrade").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobLeases, loginReservations, users } from '../../schema/index.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { openDatabase, startNodeHost } from '../../worker/node/host.js';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { createLogger } from '../../worker/src/http/logger.js';
import { CONFUSABLES_ASSET, loginSkeleton, useConfusables } from '../../worker/src/users/confusables.js';
import { CONFUSABLES } from '../../worker/src/users/confusables-data.js';
import { loginKey } from '../../worker/src/accounts/login-name.js';
import {
  fillLoginSkeletons,
  lookAlikeOf,
  reservedUntil,
  runSkeletonBackfill,
  SKELETON_JOB,
} from '../../worker/src/users/login-skeletons.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { BASE_TEST_ENV, freePort } from '../harness/hosts.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** An account as stored before skeletons existed (no skeleton), created at `createdAt`. */
const legacy = (login: string, createdAt: number, deletedAt: number | null = null) => ({
  id: crypto.randomUUID(),
  login,
  loginKey: loginKey(login),
  createdAt,
  updatedAt: createdAt,
  deletedAt,
});

describe('loginSkeleton', () => {
  it('is one for logins that look alike (UTS #39 confusables, case folded), another for other logins', () => {
    const admin = loginSkeleton('admin');
    for (const alike of ['ADMIN', 'ａｄｍｉｎ', '\u0430dmin', 'adm\u0131n', 'adrnin'])
      expect(loginSkeleton(alike)).toBe(admin);
    expect(loginSkeleton('admin1')).toBe(loginSkeleton('adminl'));
    expect(loginSkeleton('admin1')).toBe(loginSkeleton('admin\u{1D7CF}'));
    expect(loginSkeleton('z\u0435d')).toBe(loginSkeleton('zed'));
    expect(loginSkeleton('\u1D22ed')).toBe(loginSkeleton('zed'));
    for (const other of ['admins', 'admin2', 'zeb', 'José']) expect(loginSkeleton(other)).not.toBe(admin);
  });
});

describe('fillLoginSkeletons', () => {
  it('fills live accounts oldest first; the newer of two look-alikes is reported and left as it was', async () => {
    const now = Date.now();
    const rows = [
      legacy('admin', now - 3000),
      legacy('\u0430dmin', now - 2000), // Cyrillic а: looks like the older `admin`
      legacy('adrnin', now - 1000), // r and n for m: a third look-alike
      legacy('\u0430dmin', now - 4000, now - 500), // deleted: not live, never a conflict
      legacy('carol', now),
    ];
    await t.db.insert(users).values(rows);
    await t.db.insert(loginReservations).values({ loginKey: 'z\u0435d', until: now + 60_000 });
    const before = await t.db.select().from(users);

    const report = [
      { login: '\u0430dmin', other: 'admin' },
      { login: 'adrnin', other: 'admin' },
    ];
    expect(await fillLoginSkeletons(t.db)).toEqual({ filled: 2, conflicts: report, complete: true });
    const skeletonOf = async (id: string) =>
      (await t.db.select({ s: users.loginSkeleton }).from(users).where(eq(users.id, id)))[0]!.s;
    expect(await skeletonOf(rows[0]!.id)).toBe(loginSkeleton('admin'));
    expect(await skeletonOf(rows[1]!.id)).toBeNull();
    expect(await skeletonOf(rows[2]!.id)).toBeNull();
    expect(await skeletonOf(rows[3]!.id)).toBeNull();
    expect(await skeletonOf(rows[4]!.id)).toBe('carol');
    // Nothing else changed: logins, keys, deletions.
    const after = await t.db.select().from(users);
    const strip = (list: typeof before) =>
      list.map(({ loginSkeleton: _, ...r }) => r).sort((a, b) => a.id.localeCompare(b.id));
    expect(strip(after)).toEqual(strip(before));
    const [reservation] = await t.db.select().from(loginReservations);
    expect(reservation?.skeleton).toBe(loginSkeleton('zed'));

    // The backfill of each process (a start) reports them, as a WARNING naming both logins, until one is
    // deleted; once per process, not at every run.
    const lines: string[] = [];
    const logger = createLogger({ threshold: () => 'INFO', write: (line) => void lines.push(line) });
    await runSkeletonBackfill(t.db, logger);
    await runSkeletonBackfill(t.db, logger);
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'WARNING');
    expect(warnings.map((w) => ({ login: w.login, other: w.other }))).toEqual(report);
    expect(warnings[0].msg).toMatch(/looks like another live account/);

    await t.db.update(users).set({ deletedAt: now }).where(eq(users.id, rows[0]!.id));
    expect(await fillLoginSkeletons(t.db)).toEqual({
      filled: 1,
      conflicts: [{ login: 'adrnin', other: '\u0430dmin' }],
      complete: true,
    });
    expect(await skeletonOf(rows[1]!.id)).toBe(loginSkeleton('admin'));
  });
});

/** `n` accounts stored before skeletons existed, logins `old-00001`..., created one millisecond apart. */
async function legacyAccounts(db: TestApp['db'], n: number, passwordHash: string | null = null) {
  const start = Date.now() - n - 10_000;
  const rows = Array.from({ length: n }, (_, i) => ({
    ...legacy(`old-${String(i + 1).padStart(5, '0')}`, start + i),
    passwordHash,
    passwordChangedAt: passwordHash === null ? null : start,
  }));
  for (let i = 0; i < rows.length; i += 200) await db.insert(users).values(rows.slice(i, i + 200));
  return rows;
}

const skeletons = async (db: TestApp['db']) =>
  new Map((await db.select({ login: users.login, s: users.loginSkeleton }).from(users)).map((r) => [r.login, r.s]));

describe('the backfill in batches', () => {
  it(
    'stops after the batch that ends past its deadline, goes on where it is needed, and two runs at ' +
      'once write each row once',
    async () => {
      const app = await createTestApp();
      try {
        const rows = await legacyAccounts(app.db, 95);
        // A deadline already passed: one batch per run.
        const first = await fillLoginSkeletons(app.db, { batchSize: 10, deadline: 0 });
        expect(first).toEqual({ filled: 10, conflicts: [], complete: false });
        const filled = await skeletons(app.db);
        expect(rows.slice(0, 10).every((r) => filled.get(r.login) === loginSkeleton(r.login))).toBe(true);
        expect(rows.slice(10).every((r) => filled.get(r.login) === null)).toBe(true);

        // Two instances at once, in batches of other sizes: between them every row is written once.
        const [a, b] = await Promise.all([
          fillLoginSkeletons(app.db, { batchSize: 7 }),
          fillLoginSkeletons(app.db, { batchSize: 5 }),
        ]);
        expect(a.complete && b.complete).toBe(true);
        expect(a.filled + b.filled).toBe(85);
        expect([...a.conflicts, ...b.conflicts]).toEqual([]);
        const after = await skeletons(app.db);
        for (const r of rows) expect(after.get(r.login)).toBe(loginSkeleton(r.login));
        // Done: a run finds nothing more to do.
        expect(await fillLoginSkeletons(app.db, { batchSize: 10 })).toEqual({
          filled: 0,
          conflicts: [],
          complete: true,
        });
      } finally {
        app.close();
      }
    },
  );

  it(
    'until an account is filled, the look-alike checks compute its skeleton: a look-alike is refused ' + 'meanwhile',
    async () => {
      const app = await createTestApp();
      try {
        await legacyAccounts(app.db, 30);
        await app.db.insert(users).values(legacy('zed', Date.now()));
        await app.db.insert(loginReservations).values({ loginKey: 'g\u043eне', until: Date.now() + 60_000 });
        // Cyrillic е, and Latin o for the Cyrillic о of the reservation: look-alikes of rows without skeletons.
        expect(await lookAlikeOf(app.db, 'z\u0435d')).toBe('zed');
        expect(await lookAlikeOf(app.db, 'old-0OO12')).toBe('old-00012');
        expect(await lookAlikeOf(app.db, 'zed')).toBeUndefined(); // its own key: not a look-alike
        expect(await lookAlikeOf(app.db, 'zeta')).toBeUndefined();
        expect(await reservedUntil(app.db, 'goне', Date.now())).toBeDefined();
        // The same answers once filled.
        await fillLoginSkeletons(app.db);
        expect(await lookAlikeOf(app.db, 'z\u0435d')).toBe('zed');
        expect(await lookAlikeOf(app.db, 'old-0OO12')).toBe('old-00012');
        expect(await reservedUntil(app.db, 'goне', Date.now())).toBeDefined();
      } finally {
        app.close();
      }
    },
  );
});

describe('a Node host on a database with skeletons to fill', () => {
  it(
    'answers before the backfill, logs in and refuses look-alikes meanwhile, fills them in the ' + 'background',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'skeleton-host-'));
      const env = {
        ...BASE_TEST_ENV,
        AUTH_TEST_CLOCK_CONTROL: 'False',
        AUTH_BIND_HOST: '127.0.0.1',
        AUTH_BIND_PORT: String(await freePort()),
        LIBSQL_URL: `file:${join(dir, 'auth.db')}`,
      };
      // An upgraded database: accounts stored before the skeleton column, 1,200 (more than two batches).
      const config = parseEnvironment(env);
      const database = openDatabase(config);
      await migrateDatabase(database.db, config.get('DB_SCHEMA'));
      const password = 'Legacy#pass1';
      const rows = await legacyAccounts(database.db, 1_200, await createNodeNativeHasher().hash(password));
      // ...and another instance holding the backfill's lease: this host must answer and be correct meanwhile.
      const lease = { name: SKELETON_JOB, holder: 'other-instance', until: Date.now() + 600_000 };
      await database.db.insert(jobLeases).values(lease);
      const lines: string[] = [];
      const host = await startNodeHost({ env, writeLog: (line) => void lines.push(line), announce: false });
      try {
        const ready = async () => {
          const res = await fetch(`${host.url}/health/ready`);
          expect(res.status).toBe(200);
          return ((await res.json()) as { loginSkeletons: { remaining: number; filling: boolean } }).loginSkeletons;
        };
        // Started without filling them first.
        expect((await skeletons(database.db)).get(rows[0]!.login)).toBeNull();
        expect(await ready()).toEqual({ remaining: 1_200, filling: true });
        const basic = (login: string, pw: string) => `Basic ${Buffer.from(`${login}:${pw}`).toString('base64')}`;
        const login = await fetch(`${host.url}/v3/login_without_session`, {
          method: 'POST',
          headers: { authorization: basic(rows[700]!.login, password) },
        });
        expect(login.status).toBe(200);
        const wrong = await fetch(`${host.url}/v3/login_without_session`, {
          method: 'POST',
          headers: { authorization: basic(rows[701]!.login, 'Wrong#pass1') },
        });
        expect(wrong.status).toBe(401);
        const admin = basic(BASE_TEST_ENV.AUTH_BOOTSTRAP_ADMIN_LOGIN!, BASE_TEST_ENV.AUTH_BOOTSTRAP_ADMIN_PASSWORD!);
        const create = (login: string) =>
          fetch(`${host.url}/v4/users`, {
            method: 'POST',
            headers: { authorization: admin, 'content-type': 'application/json' },
            body: JSON.stringify({ login, password: 'N3w#account' }),
          });
        // old-0O700 (Latin O for zeros) looks like old-00700, which has no skeleton yet.
        const alike = await create('old-0O700');
        expect(alike.status).toBe(409);
        expect(await alike.json()).toMatchObject({ reason: 'look-alike' });
        expect((await create('new-account')).status).toBe(201);

        // The other instance's lease ends without it having filled anything: this host takes the backfill over.
        await database.db.update(jobLeases).set({ until: 0 }).where(eq(jobLeases.name, SKELETON_JOB));
        const deadline = Date.now() + 30_000;
        let state = await ready();
        while (state.remaining > 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
          state = await ready();
        }
        expect(state.remaining).toBe(0);
        const filled = await skeletons(database.db);
        for (const r of rows) expect(filled.get(r.login)).toBe(loginSkeleton(r.login));
        // Its progress is logged: what remained, and what was filled.
        const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
        expect(logged).toContainEqual(expect.objectContaining({ msg: 'filling login skeletons', remaining: 1_200 }));
        expect(logged).toContainEqual(
          expect.objectContaining({ msg: 'login skeletons filled', filled: 1_200, remaining: 0 }),
        );
        expect((await create('old-0O701')).status).toBe(409);
      } finally {
        await host.close();
        database.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("the edge host's confusables asset", () => {
  it('is the table the Node host imports, gives the same skeletons, and a text that is none is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'static-'));
    try {
      execFileSync(process.execPath, ['scripts/build-console.mjs'], {
        env: { ...process.env, AUTH_STATIC_DIR: dir },
        stdio: 'ignore',
      });
      const text = readFileSync(join(dir, CONFUSABLES_ASSET), 'utf8');
      expect(text).toBe(CONFUSABLES);
      // What an asset route answers for a missing file: refused, the table in use unchanged.
      expect(() => useConfusables('<!doctype html>')).toThrow('not a confusables table');
      expect(loginSkeleton('\u0430dmin')).toBe(loginSkeleton('admin'));
      useConfusables(text); // decoded again, from the asset's text
      expect(loginSkeleton('\u0430dmin')).toBe(loginSkeleton('admin'));
      expect(loginSkeleton('adrnin')).toBe(loginSkeleton('admin'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

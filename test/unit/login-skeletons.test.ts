/**
 * The skeleton columns of look-alike logins (worker/src/users/login-skeletons.ts), filled at start on a
 * real libSQL database that already holds look-alike live accounts: reported, never changed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginReservations, users } from '../../schema/index.js';
import { createLogger } from '../../worker/src/http/logger.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { readMeta, SCHEMA_STAMP_KEY } from '../../worker/src/store/index.js';
import { CONFUSABLES_ASSET, loginSkeleton, useConfusables } from '../../worker/src/users/confusables.js';
import { CONFUSABLES } from '../../worker/src/users/confusables-data.js';
import { loginKey } from '../../worker/src/accounts/login-name.js';
import { fillLoginSkeletons } from '../../worker/src/users/login-skeletons.js';
import { createTestApp, type TestApp } from '../harness/app.js';

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
    expect(await fillLoginSkeletons(t.db)).toEqual(report);
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

    // Every start reports them again, as a WARNING naming both logins, until one is deleted.
    const lines: string[] = [];
    const logger = createLogger({ threshold: () => 'INFO', write: (line) => void lines.push(line) });
    await migrateDatabase(t.db, (await readMeta(t.db, SCHEMA_STAMP_KEY))!, logger);
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'WARNING');
    expect(warnings.map((w) => ({ login: w.login, other: w.other }))).toEqual(report);
    expect(warnings[0].msg).toMatch(/looks like another live account/);

    await t.db.update(users).set({ deletedAt: now }).where(eq(users.id, rows[0]!.id));
    expect(await fillLoginSkeletons(t.db)).toEqual([{ login: 'adrnin', other: '\u0430dmin' }]);
    expect(await skeletonOf(rows[1]!.id)).toBe(loginSkeleton('admin'));
  });
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

/**
 * The edge host's `scheduled` handler (Cron Triggers) in workerd: the bundle `wrangler deploy`
 * builds, run by Miniflare against libSQL over HTTP. (wrangler dev's own scheduled trigger does not
 * reach a worker that has static assets, so the bundle is driven directly.)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eq } from 'drizzle-orm';
import { Miniflare, Response as MfResponse } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { startLibsqlDevServer } from '../../scripts/libsql-dev-server.js';
import { auditOutbox, jobLeases, users } from '../../schema/index.js';
import { loginSkeleton } from '../../worker/src/users/confusables.js';
import { SKELETON_JOB } from '../../worker/src/users/login-skeletons.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DAY = 86_400_000;
let dir: string;
let mf: Miniflare;
let sqld: Awaited<ReturnType<typeof startLibsqlDevServer>>;
let database: ReturnType<typeof openDatabase>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'auth-cron-'));
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', join(dir, 'bundle')],
    {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
      stdio: 'ignore',
    },
  );
  sqld = await startLibsqlDevServer({ path: join(dir, 'auth.db') });
  database = openDatabase(parseEnvironment({ LIBSQL_URL: sqld.url }));
  await migrateDatabase(database.db, 'auth');
  const wasm = readdirSync(join(dir, 'bundle')).find((f) => f.endsWith('.wasm'))!;
  mf = new Miniflare({
    modules: [
      { type: 'ESModule', path: join(dir, 'bundle/index.js') },
      { type: 'CompiledWasm', path: join(dir, 'bundle', wasm) },
    ],
    modulesRoot: join(dir, 'bundle'),
    compatibilityDate: '2026-04-20',
    bindings: { LIBSQL_URL: sqld.url, SESSION_SECRET_KEY: 'cron-test-session-key-0123456789abcdef' },
    // The static assets (wrangler.toml [assets]): the files of static/, as the deployed worker has them.
    serviceBindings: {
      async ASSETS(request: { url: string }) {
        const path = join(ROOT, 'static', decodeURIComponent(new URL(request.url).pathname));
        if (!existsSync(path)) return new MfResponse('not found', { status: 404 });
        return new MfResponse(readFileSync(path));
      },
    },
  });
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
  database?.close();
  await sqld?.close();
  rmSync(dir, { recursive: true, force: true });
});

const account = (login: string, o: Partial<typeof users.$inferInsert>) => ({
  id: crypto.randomUUID(),
  login,
  loginKey: login,
  createdAt: Date.now(),
  updatedAt: Date.now(),
  ...o,
});

describe('edge scheduled handler', () => {
  it('runs the jobs: inactivity blocking and the end of super-access, each audited', async () => {
    const now = Date.now();
    await database.db
      .insert(users)
      .values([
        account('idle', { createdAt: now - 50 * DAY, lastActivityAt: now - 46 * DAY }),
        account('active', { lastActivityAt: now - DAY }),
        account('elevated', { lastActivityAt: now, superAccessUntil: now - 1000 }),
      ]);
    const worker = await mf.getWorker();
    const result = await worker.scheduled({ cron: '*/5 * * * *', scheduledTime: new Date(now) });
    expect(result.outcome).toBe('ok');

    const rows = Object.fromEntries((await database.db.select().from(users)).map((u) => [u.login, u]));
    expect(rows.idle).toMatchObject({ status: 'blocked', blockedReason: 'inactivity' });
    expect(rows.active).toMatchObject({ status: 'active' });
    expect(rows.elevated).toMatchObject({ status: 'active', superAccessUntil: null });
    const types = (await database.db.select().from(auditOutbox).where(eq(auditOutbox.stream, 'user_activity'))).map(
      (e) => `${e.type}:${e.subjectLogin}`,
    );
    expect(types).toContain('account.blocked:idle');
    const admin = (await database.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'super_access.ended'))).map(
      (e) => e.subjectLogin,
    );
    expect(admin).toEqual(['elevated']);
  });

  it('fills the login skeletons an upgrade left empty, in batches, under its lease', async () => {
    const now = Date.now();
    const legacy = Array.from({ length: 1_200 }, (_, i) => account(`old-${String(i).padStart(5, '0')}`, {}));
    for (let i = 0; i < legacy.length; i += 200) await database.db.insert(users).values(legacy.slice(i, i + 200));
    const worker = await mf.getWorker();
    const result = await worker.scheduled({ cron: '* * * * *', scheduledTime: new Date(now + 60_000) });
    expect(result.outcome).toBe('ok');
    const skeletons = new Map(
      (await database.db.select({ login: users.login, s: users.loginSkeleton }).from(users)).map((u) => [u.login, u.s]),
    );
    for (const u of legacy) expect(skeletons.get(u.login)).toBe(loginSkeleton(u.login));
    const [lease] = await database.db.select().from(jobLeases).where(eq(jobLeases.name, SKELETON_JOB));
    expect(JSON.parse(lease!.lastResult!)).toEqual({ filled: 1_200, conflicts: 0, complete: 1 });
  });
});

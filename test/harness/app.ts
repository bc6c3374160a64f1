/** The app in-process on a fresh embedded database, for tests that read the database directly. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../worker/src/app.js';
import type { AppDeps } from '../../worker/src/http/context.js';
import { createNodeNativeHasher } from '../../worker/src/auth/password-hash/node-native.js';
import { createPasswordVerifier } from '../../worker/src/auth/password-verifier.js';
import { ConfigService, parseEnvironment } from '../../worker/src/config/index.js';
import { loadSavedSettings, type Db } from '../../worker/src/store/index.js';
import { bootstrapAdmin } from '../../worker/src/users/bootstrap.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { nodeStaticFiles } from '../../worker/node/static-files.js';
import { BASE_TEST_ENV } from './hosts.js';

export interface TestApp {
  app: ReturnType<typeof createApp>;
  db: Db;
  clock: { now: number };
  /** The JSON log lines the app wrote (at AUTH_LOG_LEVEL, CRITICAL unless `env` says otherwise). */
  logs: string[];
  close(): void;
}

/** Builds the app over a temporary database, with a clock the test sets; `deps` adds e.g. a bridge client. */
export async function createTestApp(env: Record<string, string> = {}, deps: Partial<AppDeps> = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'auth-app-'));
  const config = parseEnvironment({ ...BASE_TEST_ENV, AUTH_TEST_CLOCK_CONTROL: 'False', AUTH_LOG_LEVEL: 'CRITICAL', AUTH_ACCESS_LOG_LEVEL: 'CRITICAL', ...env, LIBSQL_URL: `file:${join(dir, 'a.db')}` });
  const database = openDatabase(config);
  await migrateDatabase(database.db, config.get('DB_SCHEMA'));
  const clock = { now: Date.now() };
  const logs: string[] = [];
  const hasher = createNodeNativeHasher();
  await bootstrapAdmin(database.db, config, hasher, clock.now);
  const app = createApp({
    db: () => database.db,
    config: new ConfigService({ env: config, load: () => loadSavedSettings(database.db), ttlMs: 0 }),
    clock: () => clock.now,
    verifier: createPasswordVerifier(hasher),
    staticFiles: nodeStaticFiles('static'),
    writeLog: (line) => logs.push(line),
    ...deps,
  });
  return {
    app,
    db: database.db,
    clock,
    logs,
    close() {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

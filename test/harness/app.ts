/** The app in-process on a fresh embedded database, for tests that read the database directly. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { assembleService, type HostParts, type Service } from '../../worker/src/service.js';
import type { Db } from '../../worker/src/store/index.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { nodeStaticFiles } from '../../worker/node/static-files.js';
import { BASE_TEST_ENV } from './hosts.js';

export interface TestApp {
  app: Service['app'];
  /** The assembled service (its API-access recorder, jobs, ...). */
  service: Service;
  db: Db;
  clock: { now: number };
  /** The JSON log lines the app wrote (at AUTH_LOG_LEVEL, CRITICAL unless `env` says otherwise). */
  logs: string[];
  close(): void;
}

/**
 * Builds the app over a temporary database, with a clock the test sets; `parts` adds host parts,
 * e.g. a bridge client or the client's address, or replaces the saved settings' lifetime (0 here: each
 * request reads them).
 */
export async function createTestApp(
  env: Record<string, string> = {},
  parts: Partial<Pick<HostParts, 'clientAddress' | 'peerAddress' | 'bridge' | 'settingsTtlMs'>> = {},
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'auth-app-'));
  const config = parseEnvironment({
    ...BASE_TEST_ENV,
    AUTH_TEST_CLOCK_CONTROL: 'False',
    AUTH_LOG_LEVEL: 'CRITICAL',
    AUTH_ACCESS_LOG_LEVEL: 'CRITICAL',
    ...env,
    LIBSQL_URL: `file:${join(dir, 'a.db')}`,
  });
  const database = openDatabase(config);
  await migrateDatabase(database.db, config.get('DB_SCHEMA'));
  const clock = { now: Date.now() };
  const logs: string[] = [];
  const service = assembleService({
    env: config,
    openDb: () => database.db,
    hasher: createNodeNativeHasher(),
    hostName: 'test-host',
    staticFiles: nodeStaticFiles('static'),
    clock: () => clock.now,
    writeLog: (line) => void logs.push(line),
    settingsTtlMs: 0,
    ...parts,
  });
  await service.bootstrap();
  return {
    app: service.app,
    service,
    db: database.db,
    clock,
    logs,
    close() {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A migrated database of its own for a test file, on the Node host's embedded client (the statements and the
 * transactions the service runs there): opened before the file's tests, closed and removed after them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@libsql/client';
import { afterAll, beforeAll } from 'vitest';
import { createEmbeddedClient } from '../../worker/node/sqlite-client.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { createDb, type Db } from '../../worker/src/store/index.js';

/** The file's database and its client, set before its first test. */
export function useEmbeddedDb(prefix: string): { db: Db; client: Client } {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const t = {} as { db: Db; client: Client };
  beforeAll(async () => {
    t.client = createEmbeddedClient(join(dir, 'test.db'));
    t.db = createDb(t.client);
    await migrateDatabase(t.db, parseEnvironment({}).get('DB_SCHEMA'));
  });
  afterAll(() => {
    t.client?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return t;
}

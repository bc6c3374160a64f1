/** Applies the SQL migrations of schema/migrations and checks the DB_SCHEMA stamp (Node: host start, db:migrate). */
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/libsql/migrator';
import { createLogger, type Logger } from '../src/http/logger.js';
import type { Db } from '../src/store/db.js';
import { ensureSchemaStamp } from '../src/store/schema-stamp.js';
import { readMeta, SCHEMA_STAMP_KEY } from '../src/store/index.js';
import { runSkeletonBackfill } from '../src/users/login-skeletons.js';
import { rekeyLogins } from '../src/users/rekey-logins.js';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../schema/migrations', import.meta.url));

/**
 * Checks the stamp of an already migrated database, migrates, then stamps a new database. Warnings
 * go to `logger` (default: JSON lines on the console at INFO and above).
 */
export async function migrateDatabase(
  db: Db,
  schemaName: string,
  logger: Logger = createLogger({ threshold: () => 'INFO' }),
): Promise<void> {
  // A stamped database of another DB_SCHEMA is refused before any migration touches it.
  const stamped = await readMeta(db, SCHEMA_STAMP_KEY).catch(() => undefined);
  if (stamped !== undefined && stamped !== schemaName) await ensureSchemaStamp(db, schemaName);
  await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
  await ensureSchemaStamp(db, schemaName);
  // Login keys are data, not schema: recomputed when their definition changes (docs/security.md, "Logins").
  for (const login of await rekeyLogins(db)) {
    logger.warning('login key left unchanged: another live account has the new key; rename or delete one', { login });
  }
  // Look-alike logins (docs/security.md, "Logins"): skeletons are not filled here, where a start would wait for
  // them, but by a backfill in batches while the service answers (docs/architecture.md §6, "Backfills after an
  // upgrade"): the Node host starts it once it listens, the edge runs it from its Cron Trigger.
}

/**
 * Runs the backfill of the login skeletons to its end, batch by batch (`npm run db:migrate`, which an
 * operator waits for, and the tests' databases); logs its progress and each look-alike to `logger`.
 */
export async function fillAllLoginSkeletons(
  db: Db,
  logger: Logger = createLogger({ threshold: () => 'INFO' }),
): Promise<void> {
  while (!(await runSkeletonBackfill(db, logger)).complete);
}

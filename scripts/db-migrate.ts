/**
 * `npm run db:migrate`: applies schema/migrations to the database named by LIBSQL_URL (and
 * LIBSQL_AUTH_TOKEN), e.g. the sqld or Turso database of the edge host. Reads .env like the Node host.
 */
import { ConfigError, parseEnvironment } from '../worker/src/config/index.js';
import { loadNodeEnv } from '../worker/node/env.js';
import { openDatabase } from '../worker/node/host.js';
import { migrateDatabase } from '../worker/node/migrate.js';

try {
  const config = parseEnvironment(loadNodeEnv());
  const database = openDatabase(config);
  try {
    await migrateDatabase(database.db, config.get('DB_SCHEMA'));
  } finally {
    database.close();
  }
  const url = new URL(config.get('LIBSQL_URL'));
  console.log(`migrated ${url.protocol}//${url.host}${url.pathname} (DB_SCHEMA ${config.get('DB_SCHEMA')})`);
} catch (err) {
  console.error(
    err instanceof ConfigError
      ? `invalid configuration:\n${err.message}`
      : `migration failed: ${err instanceof Error ? err.message : String(err)}`,
  );
  process.exit(1);
}

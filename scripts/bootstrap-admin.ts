/**
 * `npm run users:bootstrap-admin`: creates the first administrator in the database of LIBSQL_URL
 * from AUTH_BOOTSTRAP_ADMIN_LOGIN and AUTH_BOOTSTRAP_ADMIN_PASSWORD (environment or .env), only
 * while no administrator exists. Useful for the edge host's remote database.
 */
import { createNodeNativeHasher } from '../worker/node/native-hasher.js';
import { ConfigError, parseEnvironment } from '../worker/src/config/index.js';
import { bootstrapAdmin } from '../worker/src/users/bootstrap.js';
import { loadNodeEnv } from '../worker/node/env.js';
import { loadOperatorBlocklist } from '../worker/node/blocklist.js';
import { openDatabase } from '../worker/node/host.js';

try {
  const config = parseEnvironment(loadNodeEnv());
  loadOperatorBlocklist(config);
  const database = openDatabase(config);
  try {
    const result = await bootstrapAdmin(database.db, config, createNodeNativeHasher(), Date.now());
    const said = {
      created: `created administrator "${config.get('AUTH_BOOTSTRAP_ADMIN_LOGIN')}"`,
      'admin-exists':
        'an administrator already exists: nothing to do (AUTH_BOOTSTRAP_ADMIN_* only create the first one). ' +
        'For a locked-out or forgotten administrator: npm run ops -- unlock <login>, or reset-password <login>',
      'not-configured': 'set AUTH_BOOTSTRAP_ADMIN_LOGIN and AUTH_BOOTSTRAP_ADMIN_PASSWORD',
    }[result];
    console.log(said);
    if (result === 'not-configured') process.exit(1);
  } finally {
    database.close();
  }
} catch (err) {
  console.error(
    err instanceof ConfigError
      ? `invalid configuration:\n${err.message}`
      : `failed: ${err instanceof Error ? err.message : String(err)}`,
  );
  process.exit(1);
}

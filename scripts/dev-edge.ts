/**
 * `npm run dev:edge`: the edge host locally. Starts the libSQL HTTP dev server on data/edge.db,
 * migrates it, then runs `wrangler dev` (workerd) against it. Ctrl+C stops both.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { parseEnvironment } from '../worker/src/config/index.js';
import { openDatabase } from '../worker/node/host.js';
import { migrateDatabase } from '../worker/node/migrate.js';
import { startLibsqlDevServer } from './libsql-dev-server.js';

mkdirSync('data', { recursive: true });
const sqld = await startLibsqlDevServer({ path: 'data/edge.db', port: 8080 });
const config = parseEnvironment({ LIBSQL_URL: sqld.url });
const database = openDatabase(config);
await migrateDatabase(database.db, config.get('DB_SCHEMA'));
database.close();
console.log(`libSQL dev server on ${sqld.url} (data/edge.db), migrated`);

const wrangler = spawn(process.execPath, ['node_modules/wrangler/bin/wrangler.js', 'dev', '--ip', '127.0.0.1', '--port', '8787', '--var', `LIBSQL_URL:${sqld.url}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
const stop = () => wrangler.kill('SIGINT');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
wrangler.on('exit', async (code) => {
  await sqld.close();
  process.exit(code ?? 0);
});

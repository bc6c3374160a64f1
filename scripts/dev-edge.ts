/**
 * `npm run dev:edge`: the edge host locally. Starts the libSQL HTTP dev server on data/edge.db,
 * migrates it, starts the development bridge and the mTLS binding emulator (workerd has no
 * `mtls_certificates` binding locally), then runs `wrangler dev` (workerd) against them.
 * Ctrl+C stops them all.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { parseEnvironment } from '../worker/src/config/index.js';
import { openDatabase } from '../worker/node/host.js';
import { migrateDatabase } from '../worker/node/migrate.js';
import { startLibsqlDevServer } from './libsql-dev-server.js';
import { startMtlsBindingEmulator } from './mtls-binding-emulator.js';
import { startEmbeddedBridge } from '../worker/node/embedded-bridge.js';

mkdirSync('data', { recursive: true });
const sqld = await startLibsqlDevServer({ path: 'data/edge.db', port: 8080 });
const config = parseEnvironment({ LIBSQL_URL: sqld.url });
const database = openDatabase(config);
await migrateDatabase(database.db, config.get('DB_SCHEMA'));
database.close();
console.log(`libSQL dev server on ${sqld.url} (data/edge.db), migrated`);
// The development bridge (mutual TLS, data/certs) and the binding emulator in front of it.
const bridge = await startEmbeddedBridge(parseEnvironment(process.env as Record<string, string>));
const emulator = bridge ? await startMtlsBindingEmulator(parseEnvironment({ AUTH_BRIDGE_URL: bridge.url })) : undefined;
if (emulator) console.log(`development bridge on ${bridge!.url}, reached by the worker through ${emulator.url}`);

const wrangler = spawn(process.execPath, ['node_modules/wrangler/bin/wrangler.js', 'dev', '--ip', '127.0.0.1', '--port', '8787', '--var', `LIBSQL_URL:${sqld.url}`, ...(emulator ? ['--var', `AUTH_BRIDGE_URL:${emulator.url}`] : []), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
const stop = () => wrangler.kill('SIGINT');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
wrangler.on('exit', async (code) => {
  await sqld.close();
  await emulator?.close();
  await bridge?.close();
  process.exit(code ?? 0);
});

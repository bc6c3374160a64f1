/**
 * `npm run dev:edge`: the edge host locally. Starts the libSQL HTTP dev server on data/edge.db,
 * migrates it, starts the development bridge and the mTLS binding emulator (workerd has no
 * `mtls_certificates` binding locally), then runs `wrangler dev` (workerd) against them.
 * Ctrl+C stops them all. Ports: DEV_EDGE_PORT (wrangler dev, 8787) and DEV_EDGE_LIBSQL_PORT (the
 * libSQL dev server, 8080), from the environment or `.env`; both are checked before anything starts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { parseEnvironment } from '../worker/src/config/index.js';
import { adminExists } from '../worker/src/accounts/lookup.js';
import { FIRST_RUN_PATH } from '../worker/src/users/bootstrap.js';
import { issueFirstRunCode } from '../worker/src/first-run/code.js';
import { assertPortFree, describeListenError } from '../worker/node/console.js';
import { loadNodeEnv } from '../worker/node/env.js';
import { openDatabase } from '../worker/node/host.js';
import { fillAllLoginSkeletons, migrateDatabase } from '../worker/node/migrate.js';
import { startLibsqlDevServer } from './libsql-dev-server.js';
import { startMtlsBindingEmulator } from './mtls-binding-emulator.js';
import { startEmbeddedBridge } from '../worker/node/embedded-bridge.js';

/** Stops with a plain message (no stack trace): something the person running it can fix. */
function fail(message: string): never {
  console.error(`dev:edge cannot start: ${message}`);
  process.exit(1);
}

/** A port from the environment: DEV_EDGE_PORT and DEV_EDGE_LIBSQL_PORT. */
function portFrom(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    fail(`${name} must be a port number (1..65535), received "${raw}"`);
  }
  return port;
}

/** What to do while the database has no administrator (the worker reads .dev.vars, not .env). */
function noAdminHint(firstRunUrl: string, libsqlUrl: string, code: string): string {
  const vars = existsSync('.dev.vars') ? parseEnv(readFileSync('.dev.vars', 'utf8')) : {};
  if (vars.AUTH_BOOTSTRAP_ADMIN_LOGIN && vars.AUTH_BOOTSTRAP_ADMIN_PASSWORD) {
    const login = vars.AUTH_BOOTSTRAP_ADMIN_LOGIN;
    return `no administrator yet: the worker creates "${login}" (AUTH_BOOTSTRAP_ADMIN_* in .dev.vars) at first request`;
  }
  return [
    `no administrator yet: open ${firstRunUrl} in a browser on this machine and enter the one-time code ${code},`,
    'or set AUTH_BOOTSTRAP_ADMIN_LOGIN and AUTH_BOOTSTRAP_ADMIN_PASSWORD in .dev.vars',
    '(the worker creates it at its first request),',
    `or run LIBSQL_URL=${libsqlUrl} npm run ops -- create-admin <login> while this runs`,
  ].join('\n  ');
}

const env = loadNodeEnv();
const edgePort = portFrom(env, 'DEV_EDGE_PORT', 8787);
const libsqlPort = portFrom(env, 'DEV_EDGE_LIBSQL_PORT', 8080);
try {
  await assertPortFree(libsqlPort, '127.0.0.1', 'DEV_EDGE_LIBSQL_PORT', 'the libSQL dev server');
  await assertPortFree(edgePort, '127.0.0.1', 'DEV_EDGE_PORT', 'wrangler dev');
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}

mkdirSync('data', { recursive: true });
const sqld = await startLibsqlDevServer({ path: 'data/edge.db', port: libsqlPort }).catch((err: unknown) =>
  fail(describeListenError(err, libsqlPort, 'DEV_EDGE_LIBSQL_PORT', 'the libSQL dev server').message),
);
const config = parseEnvironment({ LIBSQL_URL: sqld.url });
const database = openDatabase(config);
await migrateDatabase(database.db, config.get('DB_SCHEMA'));
// wrangler dev fires no Cron Trigger by itself: a development database's backfill runs here, to its end.
await fillAllLoginSkeletons(database.db);
const hasAdmin = await adminExists(database.db);
// The first-run page's one-time code (first-run/code.ts): a new one at each start, as npm start does.
const code = hasAdmin ? '' : await issueFirstRunCode(database.db);
database.close();
console.log(`libSQL dev server on ${sqld.url} (data/edge.db), migrated`);
if (!hasAdmin) {
  console.log(noAdminHint(`http://127.0.0.1:${edgePort}${config.get('ROOT_PATH')}${FIRST_RUN_PATH}`, sqld.url, code));
}
// The development bridge (mutual TLS, data/certs) and the binding emulator in front of it.
const bridge = await startEmbeddedBridge(parseEnvironment(process.env as Record<string, string>));
const emulator = bridge ? await startMtlsBindingEmulator(parseEnvironment({ AUTH_BRIDGE_URL: bridge.url })) : undefined;
if (emulator) console.log(`development bridge on ${bridge!.url}, reached by the worker through ${emulator.url}`);

// --ip 127.0.0.1: wrangler dev keeps a CF-Connecting-IP header sent by the client, and the
// first-run page trusts it as the client address; on loopback only this machine can send one.
const wranglerArgs = ['dev', '--ip', '127.0.0.1', '--port', String(edgePort), '--var', `LIBSQL_URL:${sqld.url}`];
if (emulator) wranglerArgs.push('--var', `AUTH_BRIDGE_URL:${emulator.url}`);
const wranglerCli = 'node_modules/wrangler/bin/wrangler.js';
// The service reads nothing of `request.cf`: wrangler's placeholder will do, and no fetch of Cloudflare's
// cf.json is tried (offline, each of wrangler dev's two runtimes printed its failed DNS lookup's stack;
// docs/development.md, "The edge host locally"). CLOUDFLARE_CF_FETCH_ENABLED set in the environment wins.
const wrangler = spawn(process.execPath, [wranglerCli, ...wranglerArgs, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...process.env },
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

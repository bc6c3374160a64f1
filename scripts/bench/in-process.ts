/**
 * In-process cost of one request (app.fetch, no network, no load generator): a quick way to see
 * what a change of the hot path does, and to profile it (node --cpu-prof --import tsx ...).
 *
 *   taskset -c 0 npx tsx scripts/bench/in-process.ts KIND [requests=20000]
 *
 * KIND: bearer, cookie, live, login (Basic), session-login, device-login (a session login of a returning
 * browser, which sends the device cookie its first login got).
 *
 * With a kind ending in `-overhead` (login-overhead, session-login-overhead), the password check
 * answers at once (no argon2id): what the service itself costs per login, on top of the hash.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../worker/src/app.js';
import { createApiAccessRecorder } from '../../worker/src/audit/api-access.js';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { createPasswordVerifier } from '../../worker/src/passwords/verifier.js';
import { ConfigService, parseEnvironment } from '../../worker/src/config/index.js';
import { loadSavedSettings } from '../../worker/src/store/index.js';
import { bootstrapAdmin } from '../../worker/src/users/bootstrap.js';
import { nodeHmacSha256, openDatabase, prepareEmbedded } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { nodeStaticFiles } from '../../worker/node/static-files.js';
import { ONE_ADDRESS_ENV } from './node-host.js';

const requested = process.argv[2] ?? 'bearer';
const overhead = requested.endsWith('-overhead');
const kind = overhead ? requested.slice(0, -'-overhead'.length) : requested;
const n = Number(process.argv[3] ?? 20000);

/** The app as the Node host builds it (production defaults, logs kept in memory), on a fresh database. */
async function build() {
  const dir = mkdtempSync(join(tmpdir(), 'auth-inproc-'));
  const env = parseEnvironment({
    LIBSQL_URL: `file:${join(dir, 'a.db')}`,
    AUTH_ROOT_PATH: '/api/auth',
    SESSION_SECRET_KEY: 'in-process-bench-session-key-0123456789',
    AUTH_BOOTSTRAP_ADMIN_LOGIN: 'admin',
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: 'Adm#1passWord',
    // One address sends every login (the bound would answer 429 after its burst).
    ...ONE_ADDRESS_ENV,
  });
  const database = openDatabase(env);
  await prepareEmbedded(database.db);
  await migrateDatabase(database.db, env.get('DB_SCHEMA'));
  const native = createNodeNativeHasher();
  await bootstrapAdmin(database.db, env, native, Date.now());
  // -overhead: the check of the (right) password costs nothing; a wrong one still fails.
  const hasher = overhead ? { ...native, verify: async (_phc: string, pw: string) => pw === 'Adm#1passWord' } : native;
  const logs: string[] = [];
  const app = createApp({
    db: () => database.db,
    lazyDb: database.lazyDb,
    config: new ConfigService({ env, load: () => loadSavedSettings(database.db) }),
    clock: Date.now,
    verifier: createPasswordVerifier(hasher),
    // As the Node host signs tokens.
    hmacSha256: nodeHmacSha256,
    staticFiles: nodeStaticFiles('static'),
    writeLog: (line) => logs.push(line),
    hostName: 'in-process',
    // API-access events on, as in production (AUTH_AUDIT_API_ACCESS; IN_PROCESS_API_AUDIT=off: none).
    ...(process.env.IN_PROCESS_API_AUDIT === 'off'
      ? {}
      : { apiAccess: createApiAccessRecorder({ db: database.lazyDb, host: 'in-process' }) }),
  });
  return { app, logs, close: () => (database.close(), rmSync(dir, { recursive: true, force: true })) };
}

const t = await build();
const base = 'http://127.0.0.1/api/auth';
const basic = 'Basic ' + Buffer.from('admin:Adm#1passWord').toString('base64');
let headers: Record<string, string> = {};
let path = '/v4/users/me';
if (kind === 'bearer') {
  const r = await t.app.fetch(
    new Request(`${base}/v4/users/me/tokens`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: '{"name":"x"}',
    }),
  );
  const { token } = (await r.json()) as { token: string };
  headers = { authorization: `Bearer ${token}` };
} else if (kind === 'cookie') {
  const r = await t.app.fetch(
    new Request(`${base}/v3/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: 'admin', password: 'Adm#1passWord' }),
    }),
  );
  headers = { cookie: r.headers.getSetCookie()[0]!.split(';')[0]! };
} else if (kind === 'login') {
  path = '/v3/login_without_session';
  headers = { authorization: basic };
} else if (kind === 'session-login') {
  path = '/v3/login';
  headers = { 'content-type': 'application/json' };
} else if (kind === 'device-login') {
  path = '/v3/login';
  const r = await t.app.fetch(
    new Request(`${base}/v3/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: 'admin', password: 'Adm#1passWord' }),
    }),
  );
  const device = r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('auth_device='));
  if (!device) throw new Error('no device cookie');
  headers = { 'content-type': 'application/json', cookie: device };
} else path = '/health/live';
const once = async () => {
  const post = kind === 'login' || kind === 'session-login' || kind === 'device-login';
  const body =
    kind === 'session-login' || kind === 'device-login'
      ? JSON.stringify({ login: 'admin', password: 'Adm#1passWord' })
      : undefined;
  const res = await t.app.fetch(new Request(`${base}${path}`, { headers, method: post ? 'POST' : 'GET', body }));
  if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
  await res.text();
};
const slow = kind.endsWith('login') && !overhead;
for (let i = 0; i < (slow ? 5 : 2000); i++) await once();
t.logs.length = 0;
const start = performance.now();
const cpu0 = process.cpuUsage();
for (let i = 0; i < n; i++) {
  await once();
  if (t.logs.length > 1000) t.logs.length = 0;
}
const us = ((performance.now() - start) * 1000) / n;
const cpu = process.cpuUsage(cpu0);
const cpuUs = (cpu.user + cpu.system) / n;
console.log(
  `${requested}: ${cpuUs.toFixed(1)} us CPU (${us.toFixed(1)} us wall) per request in-process (router: ` +
    `${(t.app as unknown as { router: { name: string } }).router.name})`,
);
t.close();
process.exit(0);

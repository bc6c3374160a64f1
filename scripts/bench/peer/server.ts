/**
 * The reference peer of `npm run bench`: better-auth (email and password, the bearer plugin) with
 * its SQLite adapter over better-sqlite3, on @hono/node-server like our Node host, started pinned
 * to the host's core. Passwords are hashed with the same argon2id backend and parameters as ours,
 * so login throughput compares the frameworks, not the hash functions (better-auth's default is
 * scrypt). Rate limiting and telemetry are off. Creates one account, prints `LISTENING <port>`.
 *
 * Environment: BENCH_PEER_DB (file), BENCH_PEER_EMAIL, BENCH_PEER_PASSWORD, BENCH_PEER_SECRET,
 * BENCH_PEER_COOKIE_CACHE=1 (cache the session in a signed cookie, better-auth's fast path).
 */
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { bearer } from 'better-auth/plugins/bearer';
import { createNodeNativeHasher } from '../../../worker/node/native-hasher.js';

const need = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: this server is started by scripts/bench/run.ts`);
  return v;
};

const port = Number(process.env.BENCH_PORT ?? 0);
const hasher = createNodeNativeHasher();
const sqlite = new Database(need('BENCH_PEER_DB'));
// The journal mode better-auth's documentation recommends for SQLite; ours runs WAL too.
sqlite.pragma('journal_mode = WAL');

const baseURL = `http://127.0.0.1:${port}`;
const auth = betterAuth({
  database: sqlite,
  secret: need('BENCH_PEER_SECRET'),
  baseURL,
  trustedOrigins: [baseURL],
  emailAndPassword: {
    enabled: true,
    password: {
      hash: (password) => hasher.hash(password),
      verify: ({ hash, password }) => hasher.verify(hash, password),
    },
  },
  session: process.env.BENCH_PEER_COOKIE_CACHE === '1' ? { cookieCache: { enabled: true, maxAge: 300 } } : {},
  plugins: [bearer()],
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
});

const { runMigrations } = await getMigrations(auth.options);
await runMigrations();
await auth.api.signUpEmail({
  body: { email: need('BENCH_PEER_EMAIL'), password: need('BENCH_PEER_PASSWORD'), name: 'bench' },
});

const server = serve({ fetch: auth.handler, port, hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`LISTENING ${info.port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));

/**
 * Starts the service on either host for the HTTP suites: the Node host (`dist/node/main.js`,
 * as `npm start` runs it) or the edge host (`wrangler dev`, workerd, with libSQL over HTTP from the
 * dev server). Each host gets its own temporary database.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startLibsqlDevServer } from '../../scripts/libsql-dev-server.js';
import { startMtlsBindingEmulator, type MtlsBindingEmulator } from '../../scripts/mtls-binding-emulator.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';

export type HostKind = 'node' | 'edge';

export interface RunningHost {
  kind: HostKind;
  /** Base URL including ROOT_PATH, e.g. http://127.0.0.1:40123/api/auth */
  url: string;
  /** Origin only, e.g. http://127.0.0.1:40123 */
  origin: string;
  /** The host's database (a file: URL, or the libSQL dev server's http:// URL), for tests that read it. */
  libsqlUrl: string;
  /** Everything the process printed so far (logs). */
  output(): string;
  /** The child process (Node host) for signal tests. */
  child: ChildProcess;
  stop(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, '../..');

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

/** Whether something accepts TCP connections on a loopback port. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function waitFor(
  child: ChildProcess,
  out: () => string,
  pattern: RegExp,
  timeoutMs: number,
): Promise<RegExpMatchArray> {
  return new Promise((res, rej) => {
    const timer = setTimeout(() => done(new Error(`host did not start within ${timeoutMs} ms:\n${out()}`)), timeoutMs);
    const check = () => {
      const m = out().match(pattern);
      if (m) done(undefined, m);
    };
    const onExit = (code: number | null) => done(new Error(`host exited with ${code}:\n${out()}`));
    function done(err?: Error, m?: RegExpMatchArray) {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      child.off('exit', onExit);
      if (err) rej(err);
      else res(m!);
    }
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.on('exit', onExit);
    check();
  });
}

function capture(child: ChildProcess): () => string {
  let text = '';
  child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  return () => text;
}

/** Stops a child; with `group`, its whole process group (wrangler starts workerd below it). */
function stopChild(child: ChildProcess, group = false): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (group && child.pid) process.kill(-child.pid, sig);
      else child.kill(sig);
    } catch {
      // already gone
    }
  };
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (group) signal('SIGKILL');
      return res();
    }
    const t = setTimeout(() => signal('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(t);
      if (group) signal('SIGKILL');
      res();
    });
    signal('SIGTERM');
  });
}

/** Environment every test host gets unless overridden. */
export const BASE_TEST_ENV: Record<string, string> = {
  AUTH_LOG_LEVEL: 'INFO',
  AUTH_TEST_CLOCK_CONTROL: 'True',
  // Suites that need a bridge start their own (test/harness/bridge.ts); node-host.test.ts tests this one.
  AUTH_BRIDGE_EMBEDDED: 'False',
  AUTH_BOOTSTRAP_ADMIN_LOGIN: 'root-admin',
  AUTH_BOOTSTRAP_ADMIN_PASSWORD: 'Adm1n$ecret',
  SESSION_SECRET_KEY: 'test-session-secret-key-0123456789abcdef',
  // Every suite sends from 127.0.0.1: the per-address bound on password checks would throttle the
  // suites themselves. password-admission.test.ts and hash-concurrency.test.ts set their own.
  AUTH_PASSWORD_ADDRESS_IN_FLIGHT: '1000',
  AUTH_PASSWORD_ADDRESS_RATE: '100000',
  AUTH_PASSWORD_ADDRESS_BURST: '100000',
  // Every suite logs in from 127.0.0.1 with wrong passwords on purpose: the per-address throttle
  // would soon answer them all 429. Its own suite (login-throttle.test.ts) starts hosts with a small bound.
  AUTH_ADDRESS_FAILED_COUNT: '1000000',
  // The webhook suites' receivers listen on loopback over plain HTTP (docs/webhooks.md, "Targets").
  AUTH_WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
  AUTH_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
};

export interface TestHostOptions {
  /**
   * The database file to use (and keep) instead of a fresh one, so that a host can be restarted
   * on the same data with another environment (e.g. rotated keys).
   */
  database?: string;
  /** Edge host: let wrangler print the worker's own log lines (console.log), for tests that read them. */
  workerLogs?: boolean;
  /** Another running host's database (its `libsqlUrl`), already migrated: two hosts on one database. */
  libsqlUrl?: string;
}

/**
 * Whether a host's output (or its start's error) says a port it was given is taken: the Node host's own
 * words ("port N is already in use", worker/node/console.ts), or the system's (EADDRINUSE, "Address already
 * in use": wrangler, workerd).
 */
export function saysPortTaken(text: string): boolean {
  return /is already in use|Address already in use|EADDRINUSE/.test(text);
}

/**
 * Runs `start` (which picks free ports and starts a host on them) again, up to three times, when the
 * host found a port taken: a free port is free when picked, and another process (the other HTTP
 * project's hosts, when both run at once) may bind it before the host does.
 */
async function onFreePorts<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3 || !saysPortTaken(String(err))) throw err;
    }
  }
}

let nodeHostBuilt = false;
/**
 * Builds the Node host as `npm start` does (dist/node/main.js, from the sources as they are now),
 * once per test file: its start then costs a third of tsx's CPU, and every suite starts hosts of its
 * own. scripts/build-node.mjs renames whole files into place, so a host of another suite starting
 * meanwhile (the two HTTP projects at once) reads one build or the other.
 */
function buildNodeHost(): void {
  if (nodeHostBuilt) return;
  execFileSync(process.execPath, ['scripts/build-node.mjs'], { cwd: ROOT, stdio: 'inherit' });
  nodeHostBuilt = true;
}

/** Starts the Node host on a free port with a fresh embedded database (or `o.database`). */
export async function startNodeTestHost(
  env: Record<string, string> = {},
  o: TestHostOptions = {},
): Promise<RunningHost> {
  const dir = mkdtempSync(join(tmpdir(), 'auth-node-'));
  const libsqlUrl = o.libsqlUrl ?? env.LIBSQL_URL ?? `file:${o.database ?? join(dir, 'auth.db')}`;
  buildNodeHost();
  let started: { child: ChildProcess; out: () => string; m: RegExpMatchArray };
  try {
    started = await onFreePorts(async () => {
      const port = await freePort();
      const child = spawn(process.execPath, ['--enable-source-maps', 'dist/node/main.js'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          LIBSQL_URL: libsqlUrl,
          AUTH_BIND_HOST: '127.0.0.1',
          AUTH_BIND_PORT: String(port),
          ...BASE_TEST_ENV,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out = capture(child);
      try {
        // As long as the edge host's wait: with both HTTP projects at once (.ci/run), hosts start while
        // the other project's host starts or runs, and a start took more than 30 s on a loaded machine.
        return { child, out, m: await waitFor(child, out, /"msg":"serving (http:\/\/[^ ]+) /, 90_000) };
      } catch (err) {
        // A host that did not start must not outlive the test (it would load the machine).
        await stopChild(child);
        throw err;
      }
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { child, out, m } = started;
  const url = m[1]!;
  return {
    kind: 'node',
    url,
    origin: new URL(url).origin,
    libsqlUrl,
    output: out,
    child,
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts the edge host in workerd (`wrangler dev`) against a libSQL HTTP dev server. With a bridge
 * in `env` (AUTH_BRIDGE_URL and its certificates), the worker reaches it through the mTLS binding
 * emulator, the local stand-in for the `mtls_certificates` binding.
 */
export async function startEdgeTestHost(
  env: Record<string, string> = {},
  o: TestHostOptions = {},
): Promise<RunningHost> {
  const dir = mkdtempSync(join(tmpdir(), 'auth-edge-'));
  // A shared database is the other host's libSQL dev server: neither started nor migrated here.
  const sqld = o.libsqlUrl
    ? { url: o.libsqlUrl, close: async () => {} }
    : await startLibsqlDevServer({ path: o.database ?? join(dir, 'auth.db') });
  let emulator: MtlsBindingEmulator | undefined;
  if (env.AUTH_BRIDGE_URL) emulator = await startMtlsBindingEmulator(parseEnvironment(env));
  const { AUTH_BRIDGE_TLS_CERT: _c, AUTH_BRIDGE_TLS_KEY: _k, AUTH_BRIDGE_TLS_CA: _a, ...workerEnv } = env;
  const vars: Record<string, string> = {
    ...BASE_TEST_ENV,
    ...workerEnv,
    LIBSQL_URL: sqld.url,
    ...(emulator ? { AUTH_BRIDGE_URL: emulator.url } : {}),
  };
  // Migrations run from Node, as `npm run db:migrate` does for a remote database.
  const config = parseEnvironment(vars);
  if (!o.libsqlUrl) {
    const database = openDatabase(config);
    await migrateDatabase(database.db, config.get('DB_SCHEMA'));
    database.close();
  }

  // Its own copy of the static assets: `wrangler dev` watches its assets folder and restarts the
  // worker on any change there, and other suites write into static/ while this host runs (a test's
  // blocklist filter, the console build of the other HTTP project when both run at once).
  const assets = join(dir, 'static');
  cpSync(join(ROOT, 'static'), assets, { recursive: true });
  const wrangler = join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  let started: { child: ChildProcess; out: () => string; port: number };
  try {
    started = await onFreePorts(async () => {
      const port = await freePort();
      const inspector = await freePort();
      const args = [
        'dev',
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--inspector-port',
        String(inspector),
        '--assets',
        assets,
        '--show-interactive-dev-session=false',
        '--log-level',
        o.workerLogs ? 'log' : 'info',
      ];
      for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`);
      const child = spawn(process.execPath, [wrangler, ...args], {
        cwd: ROOT,
        detached: true,
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out = capture(child);
      try {
        await waitFor(child, out, /Ready on http:\/\/[^\s]+/, 90_000);
      } catch (err) {
        await stopChild(child, true);
        throw err;
      }
      return { child, out, port };
    });
  } catch (err) {
    await sqld.close();
    await emulator?.close();
    throw err;
  }
  const { child, out, port } = started;
  const origin = `http://127.0.0.1:${port}`;
  const root = config.get('ROOT_PATH');
  return {
    kind: 'edge',
    url: `${origin}${root}`,
    origin,
    libsqlUrl: sqld.url,
    output: out,
    child,
    async stop() {
      await stopChild(child, true);
      await sqld.close();
      await emulator?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a host of the given kind. */
export function startTestHost(
  kind: HostKind,
  env: Record<string, string> = {},
  o: TestHostOptions = {},
): Promise<RunningHost> {
  return kind === 'node' ? startNodeTestHost(env, o) : startEdgeTestHost(env, o);
}

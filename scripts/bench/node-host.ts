/**
 * The Node host under test: `node dist/node/main.js`, built once per run by scripts/build-node.mjs
 * (what `npm start` runs; BENCH_HOST=tsx runs `node --import tsx worker/node/main.ts` instead), pinned
 * to core 0, with a fresh temporary embedded database (or a given one), a bootstrap administrator,
 * and the production defaults of logging: LOG_LEVEL and ACCESS_LOG_LEVEL at INFO, every line
 * written to a file (stdout redirected to it, as a service manager would), not thrown away.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../test/harness/hosts.js';
import { captureOutput, exited, spawnPinned, stopProcess, tail } from './processes.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const ROOT_PATH = '/api/auth';
export const ADMIN_LOGIN = 'bench-admin';

/** Core of the service under test; the load generator uses LOAD_CORE. */
export const HOST_CORE = 0;
export const LOAD_CORE = 1;

/**
 * A password passing the default policy (8-20 characters; at least one of $@#%, one digit, one
 * lower- and one upper-case letter; only letters, digits and $@#%): 16 characters.
 */
export function policyPassword(): string {
  const pick = (set: string, n: number) => Array.from({ length: n }, () => set[randomInt(set.length)]).join('');
  return `Bn#7${pick('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 12)}`;
}

/** The log levels of every benchmarked host: INFO, production's default, unless BENCH_LOG_LEVEL says otherwise. */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'INFO';

/** The environment every benchmarked host (Node or edge) gets, for the same administrator. */
export function benchServiceEnv(adminPassword: string): Record<string, string> {
  return {
    AUTH_ROOT_PATH: ROOT_PATH,
    // Production defaults: an access log line per request (the Node host writes it to a file).
    // BENCH_LOG_LEVEL=ERROR measures without them, the protocol the hot path's targets were first set
    // with (docs/performance.md, "Logins and the hot path").
    AUTH_LOG_LEVEL: LOG_LEVEL,
    AUTH_ACCESS_LOG_LEVEL: LOG_LEVEL,
    SESSION_SECRET_KEY: randomBytes(30).toString('base64url'), // 40 characters
    AUTH_BOOTSTRAP_ADMIN_LOGIN: ADMIN_LOGIN,
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
    // Lockout: up to 100 attempts may be in flight or failed per login within the window (the
    // maximum); 10 concurrent logins of one account would exceed the default of 3.
    AUTH_FAILED_COUNT: '100',
    // The edge test harness enables the test clock by default; measure the production setup.
    AUTH_TEST_CLOCK_CONTROL: 'False',
  };
}

/**
 * The per-address admission bounds raised (docs/security-admission.md): for a scenario where one address,
 * 127.0.0.1, plays every client, whose logins the bounds would answer 429 (what they cost is the attack
 * scenario's). Nothing else is changed.
 */
export const ONE_ADDRESS_ENV: Readonly<Record<string, string>> = {
  AUTH_PASSWORD_ADDRESS_IN_FLIGHT: '1000',
  AUTH_PASSWORD_ADDRESS_RATE: '100000',
  AUTH_PASSWORD_ADDRESS_BURST: '100000',
};

export interface BenchHost {
  /** e.g. http://127.0.0.1:40123/api/auth */
  base: string;
  child: ChildProcess;
  pinned: boolean;
  /** the database file */
  dbFile: string;
  /** the file the host's stdout (its JSON log lines) goes to */
  logFile: string;
  /** Milliseconds from the spawn to the host's "serving" log line (by its time), when it logged one. */
  listeningMs: number | undefined;
  /** What the host printed on stderr, and its log file from byte `from` on. */
  output(from?: number): string;
  /** The size of the log file so far (bytes). */
  logSize(): number;
  stop(): Promise<void>;
}

export interface BenchHostOptions {
  /** Use this database file (kept by stop()) instead of a fresh temporary one. */
  dbFile?: string;
  /**
   * Wait for the "serving" log line only, never probing /health/live: the host's first request is then
   * the caller's (the far-db scenario measures it).
   */
  noProbe?: boolean;
  /** How long the start may take (default 30 s). */
  startTimeoutMs?: number;
}

/** Polls GET {base}/health/live until it answers 200 (or the child exits, or time runs out). */
async function waitUntilLive(
  base: string,
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
  probe = true,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited(child))
      throw new Error(`the Node host exited with ${child.exitCode ?? child.signalCode}:\n${tail(output())}`);
    // The "serving http://..." line is INFO: accept it when shown, else rely on the probe.
    if (/"msg":"serving http:\/\//.test(output())) return;
    if (probe)
      try {
        const res = await fetch(`${base}/health/live`, { signal: AbortSignal.timeout(1_000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the Node host did not answer within ${timeoutMs} ms:\n${tail(output())}`);
}

let built = false;
/** The host's entry: the compiled host as `npm start` runs it (built once), or the sources under tsx. */
function hostEntry(): string[] {
  const via = process.env.BENCH_HOST ?? 'dist';
  if (via === 'tsx') return ['--import', 'tsx', 'worker/node/main.ts'];
  if (via !== 'dist') throw new Error(`BENCH_HOST must be dist or tsx, not "${via}"`);
  if (!built) execFileSync(process.execPath, ['scripts/build-node.mjs'], { cwd: ROOT, stdio: 'inherit' });
  built = true;
  return ['--enable-source-maps', 'dist/node/main.js'];
}

/** Starts the Node host pinned to HOST_CORE on a free loopback port, with a fresh database by default. */
export async function startBenchNodeHost(env: Record<string, string>, o: BenchHostOptions = {}): Promise<BenchHost> {
  const dir = mkdtempSync(join(tmpdir(), 'auth-bench-'));
  const dbFile = o.dbFile ?? join(dir, 'auth.db');
  const logFile = join(dir, 'host.log');
  const logFd = openSync(logFile, 'a');
  const port = await freePort();
  // BENCH_CPU_PROF=dir: a V8 CPU profile of the host, written to dir when it stops (summed by
  // scripts/bench/profile-summary.ts).
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`]
    : [];
  const entry = hostEntry();
  const spawnedAt = Date.now();
  const child = spawnPinned(HOST_CORE, process.execPath, [...prof, ...entry], {
    cwd: ROOT,
    env: {
      // Nothing else from our environment: stray AUTH_* variables would change what is measured.
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LIBSQL_URL: `file:${dbFile}`,
      AUTH_BIND_HOST: '127.0.0.1',
      AUTH_BIND_PORT: String(port),
      // A .env file in the project could set these; the benchmark wants one plain process.
      AUTH_WORKERS: '1',
      AUTH_RELOAD: 'False',
      ...env,
    },
    stdio: ['ignore', logFd, 'pipe'],
  });
  closeSync(logFd); // the child has its own copy
  const stderr = captureOutput(child);
  const logSize = () => statSync(logFile, { throwIfNoEntry: false })?.size ?? 0;
  const output = (from = 0) => {
    let log = '';
    try {
      log = readFileSync(logFile).subarray(from).toString();
    } catch {
      // removed by stop()
    }
    return `${stderr()}${log}`;
  };
  const base = `http://127.0.0.1:${port}${ROOT_PATH}`;
  const stop = async () => {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilLive(base, child, output, o.startTimeoutMs ?? 30_000, !o.noProbe);
  } catch (err) {
    await stop();
    throw err;
  }
  const serving = /\{[^\n]*"msg":"serving http:\/\/[^\n]*/.exec(output())?.[0];
  const servingAt = serving ? Date.parse((JSON.parse(serving) as { time?: string }).time ?? '') : Number.NaN;
  const listeningMs = Number.isNaN(servingAt) ? undefined : servingAt - spawnedAt;
  return { base, child, pinned: child.spawnfile === 'taskset', dbFile, logFile, listeningMs, output, logSize, stop };
}

/**
 * What the data costs:
 *   memory   the host's RSS at idle (just started) and under load, and per 10,000 live sessions:
 *            10,000 seeded accounts with a session each, every session used twice (a sweep of
 *            cookie requests), RSS after minus RSS before.
 *   growth   for each size of BENCH_GROWTH_SIZES (default 10,000, 100,000, 1,000,000 accounts,
 *            each with a session and an API token, seeded with SQL), a host on that database:
 *            its start (spawn to listening) and first answer (a Bearer request sent as it listens),
 *            Bearer and cookie requests/s, sequential login p50, database size, RSS idle and under
 *            load; then a host on the same database with every seeded account's login skeleton
 *            cleared (a deployment upgraded past the migration that added the column): its start
 *            and first answer while the backfill runs, a login of a not yet filled account, and the
 *            time until readiness reports nothing left to fill. The cost per request, and of a start,
 *            must not grow with the number of accounts.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { runJob } from './load.js';
import { benchServiceEnv, ONE_ADDRESS_ENV, startBenchNodeHost, type BenchHost } from './node-host.js';
import { rssKiB, rssSampler } from './processes.js';
import type { ScenarioResult } from './report.js';
import { basic, expectStatus, loadScenario, ScenarioError, type BenchConfig } from './scenarios.js';
import { clearSkeletons, seedAccounts, sessionCookie } from './seed.js';
import { median, round } from './stats.js';

type Register = (stop: () => Promise<void>) => () => Promise<void>;
type Report = (r: ScenarioResult) => void;

const SESSION_SWEEP = 10_000;
const mib = (kib: number | undefined) => (kib === undefined ? undefined : round(kib / 1024));
const settle = () => new Promise((r) => setTimeout(r, 1_000));

/** The password hash every seeded account gets, and its password. */
async function seededPassword(): Promise<{ password: string; hash: string }> {
  const password = 'Bn#7seededPassw0rd';
  return { password, hash: await createNodeNativeHasher().hash(password) };
}

const WARMUP_SESSIONS = 1_000;

/**
 * memory: a fresh host's RSS at idle; then 1,000 seeded sessions used twice (so that the code of
 * the path is compiled and the caches are in use), RSS; then 10,000 other sessions used twice,
 * RSS again: the difference is what 10,000 live sessions cost (the credential cache and the verified
 * cookies hold up to 10,000 each, SQLite's page cache grows with the rows read).
 */
export async function memoryPerSessions(
  config: BenchConfig,
  adminPassword: string,
  register: Register,
): Promise<ScenarioResult> {
  const env = benchServiceEnv(adminPassword);
  const host = await startBenchNodeHost(env);
  const stop = register(host.stop);
  try {
    const pid = host.child.pid!;
    await settle();
    const idle = rssKiB(pid);
    const { hash } = await seededPassword();
    const now = Date.now();
    const seeded = seedAccounts(host.dbFile, WARMUP_SESSIONS + SESSION_SWEEP, {
      passwordHash: hash,
      now,
      offset: 50_000_000,
      listSessions: true,
    });
    const cookies = await Promise.all(
      seeded.sessions!.map(async (x) => ({
        cookie: await sessionCookie(env.SESSION_SECRET_KEY!, x.id, x.userId, now + 86_400_000),
      })),
    );
    await expectStatus(
      `${host.base}/v4/users/me`,
      { headers: cookies[0]! },
      200,
      'GET /v4/users/me (a seeded session)',
    );
    const sweep = (headers: Record<string, string>[]) =>
      runJob({ kind: 'sweep', url: `${host.base}/v4/users/me`, headers, concurrency: config.connections, rounds: 2 });
    const warm = await sweep(cookies.slice(0, WARMUP_SESSIONS));
    await settle();
    const before = rssKiB(pid);
    const sampler = rssSampler(pid);
    const measured = await sweep(cookies.slice(WARMUP_SESSIONS));
    const peak = sampler.stop();
    await settle();
    const after = rssKiB(pid);
    const non2xx = warm.non2xx + measured.non2xx;
    const flag = non2xx > 0 ? `MEASUREMENT INVALID: ${non2xx} non-2xx (${JSON.stringify(measured.statusCodes)}); ` : '';
    const perTenK =
      before !== undefined && after !== undefined ? ((after - before) * 10_000) / SESSION_SWEEP : undefined;
    return {
      scenario: 'memory',
      status: non2xx > 0 ? 'flagged' : 'ok',
      message:
        `${flag}RSS idle ${mib(idle)} MiB; ` +
        `after ${WARMUP_SESSIONS} sessions used twice ${mib(before)} MiB; after ${SESSION_SWEEP} more used ` +
        `twice ${mib(after)} MiB ` +
        `(peak ${mib(peak)}): ${mib(perTenK)} MiB per 10,000 live sessions`,
      rssMaxKiB: peak,
      details: {
        idleRssMiB: mib(idle),
        beforeRssMiB: mib(before),
        afterRssMiB: mib(after),
        peakRssMiB: mib(peak),
        perTenThousandSessionsMiB: mib(perTenK),
        sessions: SESSION_SWEEP,
        sweepSeconds: round(measured.seconds),
        seedSeconds: round(seeded.seconds),
      },
    };
  } finally {
    await stop();
  }
}

/** Sizes of the growth scenario (BENCH_GROWTH_SIZES, comma-separated). */
export function growthSizes(): number[] {
  const raw = process.env.BENCH_GROWTH_SIZES ?? '10000,100000,1000000';
  const sizes = raw.split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 10))
    throw new Error(`BENCH_GROWTH_SIZES must list integers >= 10, not "${raw}"`);
  return sizes;
}

const LOGIN_SAMPLES = 20;
/** A start, a first answer or a backfill taking longer than this fails the step. */
const START_TIMEOUT_MS = 600_000;
const BACKFILL_TIMEOUT_MS = 30 * 60_000;

/** Starts a host on `dbFile` whose first request is a Bearer GET /v4/users/me: its start and that answer's time. */
async function timedStart(
  env: Record<string, string>,
  dbFile: string,
  token: string,
  what: string,
): Promise<{ host: BenchHost; listeningMs: number | undefined; firstAnswerMs: number }> {
  const host = await startBenchNodeHost(env, { dbFile, noProbe: true, startTimeoutMs: START_TIMEOUT_MS });
  const t0 = performance.now();
  try {
    await expectStatus(
      `${host.base}/v4/users/me`,
      { headers: { authorization: `Bearer ${token}` } },
      200,
      `${what}: the first request, GET /v4/users/me (Bearer)`,
    );
  } catch (err) {
    await host.stop();
    throw err;
  }
  return { host, listeningMs: host.listeningMs, firstAnswerMs: round(performance.now() - t0) };
}

/** GET /health/ready's report of the login skeletons' backfill. */
async function skeletonState(base: string): Promise<{ remaining: number; filling: boolean }> {
  const res = await expectStatus(`${base}/health/ready`, {}, 200, 'GET /health/ready');
  const body = (await res.json()) as { loginSkeletons?: { remaining: number; filling: boolean } | null };
  if (!body.loginSkeletons) throw new ScenarioError('GET /health/ready: no loginSkeletons report');
  return body.loginSkeletons;
}

/** growth: one host per size on a seeded database. */
export async function growth(
  config: BenchConfig,
  adminPassword: string,
  register: Register,
  report: Report,
): Promise<void> {
  const { password, hash } = await seededPassword();
  for (const n of growthSizes()) {
    const dir = mkdtempSync(join(tmpdir(), 'auth-bench-growth-'));
    const dbFile = join(dir, 'auth.db');
    let host: BenchHost | undefined;
    try {
      console.log(`> growth ${n.toLocaleString('en')} accounts`);
      // One address, 127.0.0.1, sends every login sample.
      const env = { ...benchServiceEnv(adminPassword), ...ONE_ADDRESS_ENV };
      // A first start migrates the database and creates the administrator.
      const first = await startBenchNodeHost(env, { dbFile });
      await first.stop();
      const now = Date.now();
      const seeded = seedAccounts(dbFile, n, { passwordHash: hash, now });
      const dbBytes = ['', '-wal'].reduce(
        (sum, ext) => sum + (statSync(`${dbFile}${ext}`, { throwIfNoEntry: false })?.size ?? 0),
        0,
      );
      const { probe } = seeded;
      const started = await timedStart(env, dbFile, probe.token, `growth ${n}`);
      host = started.host;
      const stop = register(host.stop);
      let details: Record<string, number | undefined>;
      try {
        const pid = host.child.pid!;
        await settle();
        const idle = rssKiB(pid);
        const bearerHeaders = { authorization: `Bearer ${probe.token}` };
        const cookieHeaders = {
          cookie: await sessionCookie(env.SESSION_SECRET_KEY!, probe.sessionId, probe.userId, now + 86_400_000),
        };
        const me = `${host.base}/v4/users/me`;
        await expectStatus(
          me,
          { headers: bearerHeaders },
          200,
          `growth ${n}: GET /v4/users/me (Bearer of a seeded account)`,
        );
        await expectStatus(
          me,
          { headers: cookieHeaders },
          200,
          `growth ${n}: GET /v4/users/me (cookie of a seeded session)`,
        );
        const bearer = await loadScenario(config, pid, `growth-${n}-bearer`, { url: me, headers: bearerHeaders });
        const cookie = await loadScenario(config, pid, `growth-${n}-cookie`, { url: me, headers: cookieHeaders });
        const auth = basic(probe.login, password);
        const timing = await runJob({
          kind: 'timing',
          url: `${host.base}/v3/login_without_session`,
          method: 'POST',
          a: Array(LOGIN_SAMPLES / 2 + 2).fill(auth),
          b: Array(LOGIN_SAMPLES / 2 + 2).fill(auth),
          warmupPairs: 2,
        });
        const samples = [...timing.a, ...timing.b];
        const failedLogins = samples.filter((s) => s.status !== 200).length;
        if (failedLogins > 0)
          throw new ScenarioError(
            `growth ${n}: ${failedLogins} of ${samples.length} logins of ${probe.login} did not answer 200`,
          );
        const loginP50 = round(median(samples.map((s) => s.ms)));
        details = {
          accounts: n,
          startMs: started.listeningMs,
          firstAnswerMs: started.firstAnswerMs,
          seedSeconds: round(seeded.seconds),
          dbMiB: round(dbBytes / 1024 / 1024),
          idleRssMiB: mib(idle),
          loadRssMiB: mib(Math.max(bearer.rssMaxKiB ?? 0, cookie.rssMaxKiB ?? 0)),
          bearerPerSec: bearer.requestsPerSec,
          bearerP99Ms: bearer.p99Ms,
          bearerCpuUs: bearer.cpuPerRequestUs,
          cookiePerSec: cookie.requestsPerSec,
          cookieP99Ms: cookie.p99Ms,
          cookieCpuUs: cookie.cpuPerRequestUs,
          loginP50Ms: loginP50,
        };
        for (const r of [bearer, cookie]) report({ ...r, details: { ...r.details, ...details } });
        if (bearer.status !== 'ok' || cookie.status !== 'ok') {
          report({ scenario: `growth-${n}`, status: 'flagged', message: 'Bearer or cookie load flagged', details });
          continue;
        }
      } finally {
        await stop();
      }
      // The same database as a deployment upgraded past the migration that added the skeleton column.
      const clearSeconds = clearSkeletons(dbFile, n);
      const spawned = Date.now();
      const pending = await timedStart(env, dbFile, probe.token, `growth ${n} (backfill pending)`);
      host = pending.host;
      const stopPending = register(host.stop);
      try {
        const during = await skeletonState(host.base);
        // A login of an account not filled yet (the probe is in the middle, filled after half the others).
        const login = await fetch(`${host.base}/v3/login_without_session`, {
          method: 'POST',
          headers: { authorization: basic(probe.login, password) },
        });
        const loginStatus = login.status;
        await login.arrayBuffer();
        const afterLogin = await skeletonState(host.base);
        if (loginStatus !== 200)
          throw new ScenarioError(`growth ${n}: a login during the backfill answered ${loginStatus}, not 200`);
        let state = afterLogin;
        const deadline = Date.now() + BACKFILL_TIMEOUT_MS;
        while (state.remaining > 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 200));
          state = await skeletonState(host.base);
        }
        if (state.remaining > 0)
          throw new ScenarioError(`growth ${n}: ${state.remaining} skeletons still unfilled after the backfill's time`);
        details = {
          ...details,
          clearSeconds: round(clearSeconds),
          pendingStartMs: pending.listeningMs,
          pendingFirstAnswerMs: pending.firstAnswerMs,
          remainingAtFirstAnswer: during.remaining,
          remainingAfterLogin: afterLogin.remaining,
          backfillSeconds: round((Date.now() - spawned) / 1000),
        };
      } finally {
        await stopPending();
      }
      const d = details;
      report({
        scenario: `growth-${n}`,
        status: 'ok',
        message:
          `${n.toLocaleString('en')} accounts (seeded in ${d.seedSeconds} s, database ${d.dbMiB} MiB): start ` +
          `${d.startMs} ms, first answer ${d.firstAnswerMs} ms; Bearer ${d.bearerPerSec}/s (${d.bearerCpuUs} us CPU ` +
          `each), cookie ${d.cookiePerSec}/s (${d.cookieCpuUs} us), login p50 ${d.loginP50Ms} ms, RSS idle ` +
          `${d.idleRssMiB} MiB / under load ${d.loadRssMiB} MiB; every skeleton to fill: start ${d.pendingStartMs} ` +
          `ms, first answer ${d.pendingFirstAnswerMs} ms (${d.remainingAtFirstAnswer} to fill; a login then ` +
          `answered 200, ${d.remainingAfterLogin} left), all filled ${d.backfillSeconds} s after the spawn`,
        details,
      });
    } catch (err) {
      report({
        scenario: `growth-${n}`,
        status: 'failed',
        message: err instanceof Error ? (err.stack ?? err.message) : String(err),
      });
    } finally {
      await host?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

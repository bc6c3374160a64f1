/**
 * What the data costs:
 *   memory   the host's RSS at idle (just started) and under load, and per 10,000 live sessions:
 *            10,000 seeded accounts with a session each, every session used twice (a sweep of
 *            cookie requests), RSS after minus RSS before.
 *   growth   for each size of BENCH_GROWTH_SIZES (default 10,000, 100,000, 1,000,000 accounts,
 *            each with a session and an API token, seeded with SQL), a host on that database:
 *            Bearer and cookie requests/s, sequential login p50, database size, RSS idle and under
 *            load. The cost per request must not grow with the number of accounts.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { runJob } from './load.js';
import { benchServiceEnv, startBenchNodeHost, type BenchHost } from './node-host.js';
import { rssKiB, rssSampler } from './processes.js';
import type { ScenarioResult } from './report.js';
import { basic, expectStatus, loadScenario, ScenarioError, type BenchConfig } from './scenarios.js';
import { seedAccounts, sessionCookie } from './seed.js';
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
      const env = benchServiceEnv(adminPassword);
      // A first start migrates the database and creates the administrator.
      const first = await startBenchNodeHost(env, { dbFile });
      await first.stop();
      const now = Date.now();
      const seeded = seedAccounts(dbFile, n, { passwordHash: hash, now });
      const dbBytes = ['', '-wal'].reduce(
        (sum, ext) => sum + (statSync(`${dbFile}${ext}`, { throwIfNoEntry: false })?.size ?? 0),
        0,
      );
      host = await startBenchNodeHost(env, { dbFile });
      const stop = register(host.stop);
      try {
        const pid = host.child.pid!;
        await settle();
        const idle = rssKiB(pid);
        const { probe } = seeded;
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
        const details = {
          accounts: n,
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
        report({
          scenario: `growth-${n}`,
          status: bearer.status === 'ok' && cookie.status === 'ok' ? 'ok' : 'flagged',
          message:
            `${n.toLocaleString('en')} accounts (seeded in ${details.seedSeconds} s, database ${details.dbMiB} ` +
            `MiB): Bearer ${details.bearerPerSec}/s (${details.bearerCpuUs} us CPU each), cookie ` +
            `${details.cookiePerSec}/s (${details.cookieCpuUs} us), login p50 ${loginP50} ms, RSS idle ` +
            `${details.idleRssMiB} MiB / under load ${details.loadRssMiB} MiB`,
          details,
        });
      } finally {
        await stop();
      }
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

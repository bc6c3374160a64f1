/**
 * edge-cpu: CPU time the edge host (workerd under `wrangler dev`) spends per Basic login and per
 * Bearer request (GET /v4/users/me with an API token), the figures that matter against the
 * Workers CPU-time limits (targets: a login <= 50 ms, a Bearer request <= 1 ms). Measured from
 * /proc/<pid>/stat (utime+stime) of the workerd processes below wrangler, over N sequential
 * requests, minus N liveness probes (request handling, routing, the proxy worker) as the baseline.
 *
 * Not included: the libSQL dev server, which runs inside this benchmark process (on the edge, the
 * database is another service), and wrangler's own Node process.
 */
import { startEdgeTestHost, type RunningHost } from '../../test/harness/hosts.js';
import { ADMIN_LOGIN, benchServiceEnv, HOST_CORE } from './node-host.js';
import { clockTicksPerSecond, cpuTicks, descendants, pinRunning } from './processes.js';
import type { ScenarioResult } from './report.js';
import { basic, createToken, expectStatus, ScenarioError } from './scenarios.js';
import { round } from './stats.js';

const WARMUP_REQUESTS = 5;
/** Lets work that continues after a response (waitUntil, timers) land in the right phase. */
const SETTLE_MS = 500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The workerd processes below wrangler (pid `root`), pinned to HOST_CORE like the Node host. */
function workerdPids(root: number): { pids: number[]; pinned: boolean } {
  const pids = descendants(root)
    .filter((p) => p.comm === 'workerd')
    .map((p) => p.pid)
    .sort((a, b) => a - b);
  if (pids.length === 0) throw new ScenarioError(`no workerd process found below wrangler (pid ${root})`);
  return { pids, pinned: pids.map((pid) => pinRunning(pid, HOST_CORE)).every(Boolean) };
}

interface Phase {
  ticks: number;
  wallMs: number;
  pids: number[];
  pinned: boolean;
}

/**
 * Makes WARMUP_REQUESTS unmeasured requests (the first requests of an isolate compile code and
 * the WebAssembly hasher), then `request` n times one after another; returns the CPU ticks
 * workerd used during the n. wrangler restarts workerd when a source file changes (others edit
 * worker/ while this runs): a phase during which the set of workerd processes changed is
 * repeated, warm-up included, up to three times.
 */
async function cpuOf(root: number, n: number, request: () => Promise<Response>, what: string): Promise<Phase> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const { pids, pinned } = workerdPids(root);
    const run = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const res = await request();
        await res.arrayBuffer();
        if (res.status !== 200)
          throw new ScenarioError(
            `edge ${what}: request ${i + 1} of ${count} answered ${res.status}; the CPU figure would be wrong`,
          );
      }
    };
    await run(WARMUP_REQUESTS);
    await sleep(SETTLE_MS);
    const before = cpuTicks(pids);
    const start = performance.now();
    await run(n);
    const wallMs = performance.now() - start;
    await sleep(SETTLE_MS);
    const ticks = cpuTicks(pids) - before;
    if (workerdPids(root).pids.join() === pids.join()) return { ticks, wallMs, pids, pinned };
    console.log(`  workerd restarted during the ${what} phase (wrangler reloads on source changes); repeating it`);
  }
  throw new ScenarioError(
    `workerd restarted during three ${what} phases in a row: is someone editing worker/? Try again later.`,
  );
}

/**
 * Starts the edge host, measures, stops it. `register` receives the host's stop function at once,
 * so an interrupted benchmark can still stop it.
 */
export async function edgeCpu(
  adminPassword: string,
  n: number,
  register: (stop: () => Promise<void>) => void,
): Promise<ScenarioResult> {
  let host: RunningHost | undefined;
  try {
    host = await startEdgeTestHost(benchServiceEnv(adminPassword));
    register(host.stop);
    const root = host.child.pid!;
    const login = () =>
      fetch(`${host!.url}/v3/login_without_session`, {
        method: 'POST',
        headers: { authorization: basic(ADMIN_LOGIN, adminPassword) },
      });
    const live = () => fetch(`${host!.url}/health/live`);
    await expectStatus(
      `${host.url}/v3/login_without_session`,
      { method: 'POST', headers: { authorization: basic(ADMIN_LOGIN, adminPassword) } },
      200,
      'edge: POST /v3/login_without_session (Basic, bootstrap admin)',
    );
    const logins = await cpuOf(root, n, login, 'login');
    const token = await createToken(host.url, ADMIN_LOGIN, adminPassword);
    const bearerRequest = () => fetch(`${host!.url}/v4/users/me`, { headers: { authorization: `Bearer ${token}` } });
    // A Bearer request costs far less than a login: more of them, for a figure above the resolution.
    const bearerN = n * 10;
    const bearers = await cpuOf(root, bearerN, bearerRequest, 'bearer');
    const probes = await cpuOf(root, bearerN, live, 'liveness');
    const pids = [...new Set([...logins.pids, ...bearers.pids, ...probes.pids])];
    const pinned = logins.pinned && bearers.pinned && probes.pinned;
    const tick = 1000 / clockTicksPerSecond(); // ms per clock tick
    const perProbeMs = (probes.ticks * tick) / bearerN;
    const perLoginMs = (logins.ticks * tick) / n - perProbeMs;
    const perBearerMs = (bearers.ticks * tick) / bearerN - perProbeMs;
    const details = {
      logins: n,
      workerdPids: pids,
      // the liveness phase ran in other workerd processes than the logins (a reload in between)
      bearerRequests: bearerN,
      restartedBetweenPhases: logins.pids.join() !== probes.pids.join() || bearers.pids.join() !== probes.pids.join(),
      pinnedToCore: pinned ? HOST_CORE : null,
      loginCpuMs: round(logins.ticks * tick),
      bearerCpuMs: round(bearers.ticks * tick),
      livenessCpuMs: round(probes.ticks * tick),
      cpuPerLoginMs: round(perLoginMs),
      cpuPerBearerMs: round(perBearerMs),
      cpuPerLivenessMs: round(perProbeMs),
      // one clock tick of error per process and phase
      resolutionMs: round((2 * logins.pids.length * tick) / n),
      bearerResolutionMs: round((2 * bearers.pids.length * tick) / bearerN),
      meanLoginWallMs: round(logins.wallMs / n),
      meanBearerWallMs: round(bearers.wallMs / bearerN),
      meanLivenessWallMs: round(probes.wallMs / bearerN),
    };
    // A login verifies an argon2id hash (m=19 MiB, t=2): tens of ms. Far less means the CPU was
    // spent in processes we did not watch, e.g. a workerd restarted unnoticed.
    const implausible = perLoginMs < 5;
    const flag = implausible ? 'MEASUREMENT INVALID (implausibly low: the CPU went to processes not measured): ' : '';
    return {
      scenario: 'edge-cpu',
      status: implausible ? 'flagged' : 'ok',
      message:
        `${flag}workerd CPU per login ${details.cpuPerLoginMs} ms ` +
        `(±${details.resolutionMs}; target <= 50), per Bearer request ${details.cpuPerBearerMs} ms ` +
        `(±${details.bearerResolutionMs}; target <= 1), ` +
        `after ${details.cpuPerLivenessMs} ms per liveness probe as the baseline; wall ` +
        `${details.meanLoginWallMs} ms/login, ${details.meanBearerWallMs} ` +
        `ms/Bearer${pinned ? '' : '; workerd NOT pinned'}`,
      details,
    };
  } finally {
    await host?.stop();
  }
}

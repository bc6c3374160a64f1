/**
 * edge-cpu: CPU time the edge host (workerd under `wrangler dev`) spends per Basic login, the
 * figure that matters against the Workers CPU-time limits. Measured from /proc/<pid>/stat
 * (utime+stime) of the workerd processes below wrangler, over N sequential logins, minus N
 * liveness probes (request handling, routing, the proxy worker) as the baseline.
 *
 * Not included: the libSQL dev server, which runs inside this benchmark process (on the edge, the
 * database is another service), and wrangler's own Node process.
 */
import { startEdgeTestHost, type RunningHost } from '../../test/harness/hosts.js';
import { ADMIN_LOGIN, benchServiceEnv, HOST_CORE } from './node-host.js';
import { clockTicksPerSecond, cpuTicks, descendants, pinRunning } from './processes.js';
import type { ScenarioResult } from './report.js';
import { basic, expectStatus, ScenarioError } from './scenarios.js';
import { round } from './stats.js';

const WARMUP_REQUESTS = 5;
/** Lets work that continues after a response (waitUntil, timers) land in the right phase. */
const SETTLE_MS = 500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `request` n times one after another; returns the CPU ticks the pids used meanwhile. */
async function cpuOf(pids: number[], n: number, request: () => Promise<Response>, what: string): Promise<{ ticks: number; wallMs: number }> {
  await sleep(SETTLE_MS);
  const before = cpuTicks(pids);
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const res = await request();
    await res.arrayBuffer();
    if (res.status !== 200) throw new ScenarioError(`${what}: request ${i + 1} of ${n} answered ${res.status}; the CPU figure would be wrong`);
  }
  const wallMs = performance.now() - start;
  await sleep(SETTLE_MS);
  return { ticks: cpuTicks(pids) - before, wallMs };
}

/**
 * Starts the edge host, measures, stops it. `register` receives the host's stop function at once,
 * so an interrupted benchmark can still stop it.
 */
export async function edgeCpu(adminPassword: string, n: number, register: (stop: () => Promise<void>) => void): Promise<ScenarioResult> {
  let host: RunningHost | undefined;
  try {
    host = await startEdgeTestHost(benchServiceEnv(adminPassword));
    register(host.stop);
    const root = host.child.pid!;
    const workerd = descendants(root).filter((p) => p.comm === 'workerd');
    if (workerd.length === 0) {
      const seen = descendants(root).map((p) => `${p.pid} ${p.comm}`).join(', ');
      throw new ScenarioError(`no workerd process found below wrangler (pid ${root}); descendants: ${seen || 'none'}`);
    }
    const pids = workerd.map((p) => p.pid);
    // Like the Node host: the service on core 0 (wrangler starts it, so pin it once running).
    const pinned = pids.map((pid) => pinRunning(pid, HOST_CORE)).every(Boolean);

    const login = () => fetch(`${host!.url}/v3/login_without_session`, { method: 'POST', headers: { authorization: basic(ADMIN_LOGIN, adminPassword) } });
    const live = () => fetch(`${host!.url}/health/live`);
    await expectStatus(`${host.url}/v3/login_without_session`, { method: 'POST', headers: { authorization: basic(ADMIN_LOGIN, adminPassword) } }, 200, 'edge: POST /v3/login_without_session (Basic, bootstrap admin)');
    // Warm-up: the first requests compile code (and the WebAssembly hasher).
    await cpuOf(pids, WARMUP_REQUESTS, login, 'edge warm-up login');
    await cpuOf(pids, WARMUP_REQUESTS, live, 'edge warm-up liveness');

    const logins = await cpuOf(pids, n, login, 'edge login');
    const probes = await cpuOf(pids, n, live, 'edge liveness');
    const tick = 1000 / clockTicksPerSecond(); // ms per clock tick
    const perLoginMs = ((logins.ticks - probes.ticks) * tick) / n;
    const details = {
      logins: n,
      workerdPids: pids,
      pinnedToCore: pinned ? HOST_CORE : null,
      loginCpuMs: round(logins.ticks * tick),
      livenessCpuMs: round(probes.ticks * tick),
      cpuPerLoginMs: round(perLoginMs),
      cpuPerLivenessMs: round((probes.ticks * tick) / n),
      // one clock tick of error per process and phase
      resolutionMs: round((2 * pids.length * tick) / n),
      meanLoginWallMs: round(logins.wallMs / n),
      meanLivenessWallMs: round(probes.wallMs / n),
    };
    return {
      scenario: 'edge-cpu',
      status: 'ok',
      message: `workerd CPU per login ${details.cpuPerLoginMs} ms (±${details.resolutionMs}) = (${details.loginCpuMs} - ${details.livenessCpuMs} ms baseline) / ${n}; wall ${details.meanLoginWallMs} ms/login${pinned ? '' : '; workerd NOT pinned'}`,
      details,
    };
  } finally {
    await host?.stop();
  }
}

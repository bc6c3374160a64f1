/**
 * edge-start: the CPU an edge isolate spends to start and to answer its first request, measured in workerd
 * itself (`workerd serve`, the runtime wrangler runs) on the deployed script (`wrangler deploy --dry-run
 * --outdir`: the script and its WebAssembly module, in a workerd configuration of their own).
 *
 * workerd loads a worker's modules before it listens: its main thread's CPU when the socket accepts
 * (/proc/PID/task/PID/schedstat), less an empty worker's (workerd's own start, measured the same way), is the
 * script's start: parsing, compiling and running its top-level code. Then the CPU of the first
 * `GET ROOT_PATH/health/live` (the app built from the bindings, the code it runs compiled) and of a second.
 * Target: start + first answer <= 40 ms (docs/performance.md, "The edge bundle"). The median of EDGE_START_RUNS
 * starts (5) of each worker, alternating. Unlike `wrangler check startup`'s profile, this counts everything the
 * thread does (a sampling profiler misses the compiling before its first sample).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, isListening } from '../../test/harness/hosts.js';
import { buildEdgeScript } from './edge-build.js';
import { ROOT, ROOT_PATH } from './node-host.js';
import type { ScenarioResult } from './report.js';
import { ScenarioError } from './scenarios.js';
import { median, round } from './stats.js';

/** The workerd binary of the package wrangler runs (the `workerd` package exports its path). */
const workerdBinary: string = createRequire(import.meta.url)('workerd').default;

/** wrangler.toml's compatibility date: the worker runs as deployed. */
const COMPATIBILITY_DATE = /^compatibility_date = "([\d-]+)"/m.exec(
  readFileSync(join(ROOT, 'wrangler.toml'), 'utf8'),
)![1]!;

/** The target for an isolate's start and first answer, in ms of CPU. */
const TARGET_MS = 40;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU ms of the process's main thread (its task of the same id). */
function mainThreadMs(pid: number): number {
  const [ns] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ');
  return Number(ns) / 1e6;
}

/** A workerd configuration serving `modules` (name, kind, file) with a text binding per variable. */
function config(modules: [string, 'esModule' | 'wasm', string][], vars: Record<string, string>): string {
  const list = modules.map(
    ([name, kind, file]) => `(name = ${JSON.stringify(name)}, ${kind} = embed ${JSON.stringify(file)})`,
  );
  const bindings = Object.entries(vars).map(([k, v]) => `(name = ${JSON.stringify(k)}, text = ${JSON.stringify(v)})`);
  return [
    'using Workerd = import "/workerd/workerd.capnp";',
    'const config :Workerd.Config = (',
    '  services = [ (name = "main", worker = .w) ],',
    '  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],',
    ');',
    'const w :Workerd.Worker = (',
    `  modules = [ ${list.join(', ')} ],`,
    `  compatibilityDate = "${COMPATIBILITY_DATE}",`,
    `  bindings = [ ${bindings.join(', ')} ],`,
    ');',
    '',
  ].join('\n');
}

interface Start {
  /** main-thread CPU ms when the socket accepts */
  ready: number;
  first: number;
  second: number;
}

/** Starts workerd on `configFile`, measures its start and two answers of `path`, stops it. */
async function measure(configFile: string, path: string): Promise<Start> {
  const port = await freePort();
  const child = spawn(workerdBinary, ['serve', configFile, '--socket-addr', `http=127.0.0.1:${port}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const deadline = Date.now() + 30_000;
    while (!(await isListening(port))) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new ScenarioError(`workerd did not listen on ${port}: ${stderr.slice(-500)}`);
      await sleep(2);
    }
    const pid = child.pid!;
    const ready = mainThreadMs(pid);
    const answer = async () => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      await res.arrayBuffer();
      if (res.status !== 200)
        throw new ScenarioError(`workerd: GET ${path} answered ${res.status}: ${stderr.slice(-500)}`);
      return mainThreadMs(pid);
    };
    const afterFirst = await answer();
    const afterSecond = await answer();
    return { ready, first: afterFirst - ready, second: afterSecond - afterFirst };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
  }
}

/** The edge-start scenario: `runs` starts of the service's script and of an empty worker, alternating. */
export async function edgeStart(runs: number): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-start-'));
  try {
    const size = await buildEdgeScript(dir);
    const files = readdirSync(dir);
    const modules: [string, 'esModule' | 'wasm', string][] = [
      ['index.js', 'esModule', 'index.js'],
      ...files.filter((f) => f.endsWith('.wasm')).map((f): [string, 'wasm', string] => [f, 'wasm', f]),
    ];
    // Liveness reads nothing: no database need answer (nothing listens on port 9).
    writeFileSync(join(dir, 'service.capnp'), config(modules, { LIBSQL_URL: 'http://127.0.0.1:9' }));
    writeFileSync(join(dir, 'empty.js'), 'export default { fetch() { return new Response("ok"); } };\n');
    writeFileSync(join(dir, 'empty.capnp'), config([['index.js', 'esModule', 'empty.js']], {}));
    const service: Start[] = [];
    const empty: Start[] = [];
    for (let i = 0; i < runs; i++) {
      empty.push(await measure(join(dir, 'empty.capnp'), '/'));
      service.push(await measure(join(dir, 'service.capnp'), `${ROOT_PATH}/health/live`));
    }
    const m = (xs: Start[], k: keyof Start) => round(median(xs.map((x) => x[k])));
    const start = round(m(service, 'ready') - m(empty, 'ready'));
    const first = m(service, 'first');
    const met = start + first <= TARGET_MS;
    const summary =
      `script ${size.gzipKiB} KiB gzipped; start ${start} ms (workerd's own ${m(empty, 'ready')} ms apart), ` +
      `first answer ${first} ms, second ${m(service, 'second')} ms (CPU of workerd's main thread, medians of ` +
      `${runs}); start + first answer ${round(start + first)} ms: target <= ${TARGET_MS} ${met ? 'met' : 'MISSED'}`;
    return {
      scenario: 'edge-start',
      status: 'ok',
      message: summary,
      details: {
        size,
        startMs: start,
        firstAnswerMs: first,
        secondAnswerMs: m(service, 'second'),
        workerdOwnMs: m(empty, 'ready'),
        runs: { service, empty },
        targets: { 'edge-start.startAndFirstAnswer': met },
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The load generator, as seen from the orchestrator: each run is a separate Node process
 * (scripts/bench/load-worker.ts) pinned to LOAD_CORE, so the client never competes with the host
 * under test for its core. The job goes in through the environment, the result comes back as one
 * JSON line on stdout.
 */
import { resolve } from 'node:path';
import { LOAD_CORE, ROOT } from './node-host.js';
import { captureOutput, spawnPinned, stopProcess, tail } from './processes.js';

/** Closed-loop load with autocannon (each connection sends its next request on the answer): warm-up, then the measured run. */
export interface LoadJob {
  kind: 'load';
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export interface LoadResult {
  /** responses per second over the measured run */
  requestsPerSec: number;
  /** responses received in the measured run */
  responses: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** connection errors and timeouts (no response at all) */
  errors: number;
  /** count per status code, e.g. { "200": 1234 } */
  statusCodes: Record<string, number>;
}

/** Sequential requests on one keep-alive connection, alternating A and B as A B B A A B B A ... */
export interface TimingJob {
  kind: 'timing';
  url: string;
  method: 'GET' | 'POST';
  /** Authorization header of each A request, and of each B request (same length). */
  a: string[];
  b: string[];
  /** The first `warmupPairs` pairs are made but not reported. */
  warmupPairs: number;
}

export interface TimingSample {
  status: number;
  ms: number;
}

export interface TimingResult {
  a: TimingSample[];
  b: TimingSample[];
}

export type Job = LoadJob | TimingJob;

const WORKER = resolve(ROOT, 'scripts/bench/load-worker.ts');

/** Runs a job in a fresh, pinned load process. */
export function runJob(job: LoadJob): Promise<LoadResult>;
export function runJob(job: TimingJob): Promise<TimingResult>;
export async function runJob(job: Job): Promise<LoadResult | TimingResult> {
  const child = spawnPinned(LOAD_CORE, process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: { ...process.env, BENCH_JOB: JSON.stringify(job) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  let stdout = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  try {
    const code = await new Promise<number | null>((res, rej) => {
      child.once('error', rej);
      child.once('exit', (c) => res(c));
    });
    const last = stdout.trim().split('\n').pop() ?? '';
    if (code !== 0 || !last.startsWith('{')) throw new Error(`the load generator failed (exit ${code}):\n${tail(output())}`);
    return JSON.parse(last) as LoadResult | TimingResult;
  } finally {
    await stopProcess(child); // no-op once it has exited; kills it if we got here by an exception
  }
}

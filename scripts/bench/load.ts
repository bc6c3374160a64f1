/**
 * The load generator, as seen from the orchestrator: each run is a separate Node process
 * (scripts/bench/load-worker.ts) pinned to LOAD_CORE, so the client never competes with the host
 * under test for its core. The job goes in through the environment; on stdout come the line
 * MEASURING when the measured part starts (after the warm-up), then the result as one JSON line.
 */
import { resolve } from 'node:path';
import { LOAD_CORE, ROOT } from './node-host.js';
import { captureOutput, spawnPinned, stopProcess, tail } from './processes.js';
import { MEASURING, type Job, type LoadJob, type LoadResult, type TimingJob, type TimingResult } from './protocol.js';

const WORKER = resolve(ROOT, 'scripts/bench/load-worker.ts');

/** Runs a job in a fresh, pinned load process; `onMeasuring` is called when the warm-up is over. */
export function runJob(job: LoadJob, onMeasuring?: () => void): Promise<LoadResult>;
export function runJob(job: TimingJob, onMeasuring?: () => void): Promise<TimingResult>;
export async function runJob(job: Job, onMeasuring?: () => void): Promise<LoadResult | TimingResult> {
  const child = spawnPinned(LOAD_CORE, process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: { ...process.env, BENCH_JOB: JSON.stringify(job) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  let stdout = '';
  child.stdout?.on('data', (d: Buffer) => {
    const before = stdout.length;
    stdout += d.toString();
    if (stdout.indexOf(`${MEASURING}\n`, Math.max(0, before - MEASURING.length)) >= 0 && onMeasuring) {
      onMeasuring();
      onMeasuring = undefined; // once
    }
  });
  try {
    const code = await new Promise<number | null>((res, rej) => {
      child.once('error', rej);
      child.once('close', (c) => res(c)); // after stdout has been read to the end
    });
    const last = stdout.trim().split('\n').pop() ?? '';
    if (code !== 0 || !last.startsWith('{')) throw new Error(`the load generator failed (exit ${code}):\n${tail(output())}`);
    return JSON.parse(last) as LoadResult | TimingResult;
  } finally {
    await stopProcess(child); // no-op once it has exited; kills it if we got here by an exception
  }
}

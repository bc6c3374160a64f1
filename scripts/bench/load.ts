/**
 * The load generator, as seen from the orchestrator: each run is a separate Node process
 * (scripts/bench/load-worker.ts) pinned to LOAD_CORE, so the client never competes with the host
 * under test for its core. The job goes in through the environment; on stdout come the line
 * MEASURING when the measured part starts (after the warm-up), then the result as one JSON line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { LOAD_CORE, ROOT } from './node-host.js';
import { captureOutput, spawnPinned, stopProcess, tail } from './processes.js';
import {
  MEASURING,
  type Job,
  type LoadJob,
  type LoadResult,
  type SweepJob,
  type SweepResult,
  type TimingJob,
  type TimingResult,
} from './protocol.js';

const WORKER = resolve(ROOT, 'scripts/bench/load-worker.ts');

/** Runs a job in a fresh, pinned load process; `onMeasuring` is called when the warm-up is over. */
export function runJob(job: LoadJob, onMeasuring?: () => void): Promise<LoadResult>;
export function runJob(job: TimingJob, onMeasuring?: () => void): Promise<TimingResult>;
export function runJob(job: SweepJob, onMeasuring?: () => void): Promise<SweepResult>;
export async function runJob(job: Job, onMeasuring?: () => void): Promise<LoadResult | TimingResult | SweepResult> {
  // An environment string may hold 128 KiB at most (Linux): a larger job goes through a file.
  const text = JSON.stringify(job);
  const file = text.length > 64 * 1024 ? join(mkdtempSync(join(tmpdir(), 'auth-bench-job-')), 'job.json') : undefined;
  if (file) writeFileSync(file, text);
  const child = spawnPinned(LOAD_CORE, process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: { ...process.env, ...(file ? { BENCH_JOB_FILE: file } : { BENCH_JOB: text }) },
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
    if (code !== 0 || !last.startsWith('{'))
      throw new Error(`the load generator failed (exit ${code}):\n${tail(output())}`);
    return JSON.parse(last) as LoadResult | TimingResult | SweepResult;
  } finally {
    await stopProcess(child); // no-op once it has exited; kills it if we got here by an exception
    if (file) rmSync(dirname(file), { recursive: true, force: true });
  }
}

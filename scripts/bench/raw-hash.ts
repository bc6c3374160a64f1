/**
 * The raw argon2id worker (scripts/bench/hash-worker.ts) pinned to the host's core: spawned for one
 * measure (hash-rate.ts), or kept running in its serve mode for the login scenarios, which alternate
 * raw runs with their own (scenarios.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { HOST_CORE, ROOT } from './node-host.js';
import { captureOutput, spawnPinned, stopProcess, tail } from './processes.js';

/** A raw argon2id run of a started hash worker. */
export interface RawHashRun {
  perSec: number;
  cpuMs: number;
}

/** A hash worker kept running (pinned to HOST_CORE, idle between runs) to measure on demand. */
export interface HashWorker {
  /** Verifies with `inFlight` at a time for `seconds`. */
  measure(inFlight: number, seconds: number): Promise<RawHashRun>;
  stop(): Promise<void>;
}

/** Spawns scripts/bench/hash-worker.ts pinned to HOST_CORE, with `env` (its BENCH_HASH_* settings). */
export function spawnHashWorker(env: Record<string, string>, stdin: 'pipe' | 'ignore'): ChildProcess {
  return spawnPinned(HOST_CORE, process.execPath, ['--import', 'tsx', resolve(ROOT, 'scripts/bench/hash-worker.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: [stdin, 'pipe', 'pipe'],
  });
}

/** Starts scripts/bench/hash-worker.ts in its serve mode (BENCH_HASH_SERVE=1), pinned to HOST_CORE. */
export async function startHashWorker(): Promise<HashWorker> {
  const child = spawnHashWorker({ BENCH_HASH_SERVE: '1' }, 'pipe');
  const output = captureOutput(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (what: string): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error(`the hash worker ended before ${what}:\n${tail(output())}`);
    return line.value;
  };
  try {
    if ((await next('it was ready')) !== 'READY') throw new Error(`the hash worker failed:\n${tail(output())}`);
  } catch (err) {
    await stopProcess(child);
    throw err;
  }
  return {
    async measure(inFlight, seconds) {
      child.stdin!.write(`${inFlight} ${seconds}\n`);
      return JSON.parse(await next('its answer')) as RawHashRun;
    },
    stop: () => stopProcess(child),
  };
}

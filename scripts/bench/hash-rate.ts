/**
 * hash-rate: the raw argon2id verification rate on the host's core, one at a time and with as
 * many in flight as the load has connections: the limit that password logins are compared with.
 */
import { captureOutput, stopProcess, tail } from './processes.js';
import { spawnHashWorker } from './raw-hash.js';
import type { ScenarioResult } from './report.js';
import type { BenchConfig } from './scenarios.js';
import { round } from './stats.js';

/** Runs the hash worker once (raw-hash.ts). */
export async function hashRate(config: BenchConfig): Promise<ScenarioResult> {
  const child = spawnHashWorker(
    {
      BENCH_HASH_SECONDS: String(config.durationSeconds),
      BENCH_HASH_WARMUP: String(config.warmupSeconds),
      BENCH_HASH_CONCURRENCY: String(config.connections),
    },
    'ignore',
  );
  const output = captureOutput(child);
  try {
    const code = await new Promise<number | null>((res, rej) => {
      child.once('error', rej);
      child.once('close', res);
    });
    const last = output().trim().split('\n').pop() ?? '';
    if (code !== 0 || !last.startsWith('{'))
      throw new Error(`the hash worker failed (exit ${code}):\n${tail(output())}`);
    const r = JSON.parse(last) as {
      sequentialPerSec: number;
      concurrentPerSec: number;
      concurrency: number;
      cpuMsPerHash: number;
      cpuMsPerHashSequential: number;
    };
    return {
      scenario: 'hash-rate',
      status: 'ok',
      message:
        `raw argon2id verifications on the host's core: ${round(r.sequentialPerSec)}/s one at a time, ` +
        `${round(r.concurrentPerSec)}/s with ` +
        `${r.concurrency} in flight; CPU ${round(r.cpuMsPerHash)} ms per verification ` +
        `(${round(r.cpuMsPerHashSequential)} ms one at a time)`,
      requestsPerSec: round(r.concurrentPerSec),
      cpuPerRequestUs: round(r.cpuMsPerHash * 1000),
      details: {
        sequentialPerSec: round(r.sequentialPerSec),
        concurrentPerSec: round(r.concurrentPerSec),
        concurrency: r.concurrency,
        cpuMsPerHash: round(r.cpuMsPerHash),
        cpuMsPerHashSequential: round(r.cpuMsPerHashSequential),
      },
    };
  } finally {
    await stopProcess(child);
  }
}

/**
 * The raw argon2id rate, the ceiling of password logins: this process (started pinned to the
 * host's core by hash-rate.ts) verifies one password hash of the service's parameters with the
 * Node host's backend for BENCH_HASH_SECONDS, one at a time, then with BENCH_HASH_CONCURRENCY
 * verifications in flight (the libuv thread pool runs them, on the same pinned core). Prints one
 * JSON line: verifications per second of each, and the CPU time per verification (a figure that
 * another load on the machine disturbs less than the rate).
 *
 * With BENCH_HASH_SERVE=1 it waits instead for lines "IN_FLIGHT SECONDS" on stdin and answers each
 * with one JSON line ({ perSec, cpuMs }): the login scenarios alternate such runs with their own
 * (raw-hash.ts `startHashWorker`), so that both are measured under the same conditions.
 */
import { createInterface } from 'node:readline';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';

const seconds = Number(process.env.BENCH_HASH_SECONDS ?? 5);
const warmupSeconds = Number(process.env.BENCH_HASH_WARMUP ?? 1);
const concurrency = Number(process.env.BENCH_HASH_CONCURRENCY ?? 10);
const hasher = createNodeNativeHasher();
const password = 'Bn#7correctHorse9';
const phc = await hasher.hash(password);

/** Verifications per second with `inFlight` at a time, over `s` seconds, and CPU ms per verification. */
async function rate(inFlight: number, s: number): Promise<{ perSec: number; cpuMs: number }> {
  const end = performance.now() + s * 1000;
  let done = 0;
  const lane = async () => {
    while (performance.now() < end) {
      if (!(await hasher.verify(phc, password))) throw new Error('argon2id verify failed');
      done++;
    }
  };
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: inFlight }, lane));
  const cpu = process.cpuUsage(cpu0);
  return { perSec: done / ((performance.now() - start) / 1000), cpuMs: (cpu.user + cpu.system) / 1000 / done };
}

if (process.env.BENCH_HASH_SERVE === '1') {
  process.stdout.write('READY\n');
  for await (const line of createInterface({ input: process.stdin })) {
    const [inFlight, s] = line.trim().split(/\s+/).map(Number);
    if (!(inFlight! > 0 && s! > 0)) throw new Error(`expected "IN_FLIGHT SECONDS", got "${line}"`);
    process.stdout.write(`${JSON.stringify(await rate(inFlight!, s!))}\n`);
  }
} else {
  await rate(concurrency, warmupSeconds);
  const sequential = await rate(1, seconds);
  const concurrent = await rate(concurrency, seconds);
  const result = {
    sequentialPerSec: sequential.perSec,
    concurrentPerSec: concurrent.perSec,
    concurrency,
    cpuMsPerHash: concurrent.cpuMs,
    cpuMsPerHashSequential: sequential.cpuMs,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

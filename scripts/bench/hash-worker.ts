/**
 * The raw argon2id rate, the ceiling of password logins: this process (started pinned to the
 * host's core by hash-rate.ts) verifies one password hash of the service's parameters with the
 * Node host's backend for BENCH_HASH_SECONDS, one at a time, then with BENCH_HASH_CONCURRENCY
 * verifications in flight (the libuv thread pool runs them, on the same pinned core). Prints one
 * JSON line: verifications per second of each.
 */
import { createNodeNativeHasher } from '../../worker/src/auth/password-hash/node-native.js';

const seconds = Number(process.env.BENCH_HASH_SECONDS ?? 5);
const warmupSeconds = Number(process.env.BENCH_HASH_WARMUP ?? 1);
const concurrency = Number(process.env.BENCH_HASH_CONCURRENCY ?? 10);
const hasher = createNodeNativeHasher();
const password = 'Bn#7correctHorse9';
const phc = await hasher.hash(password);

/** Verifications per second with `inFlight` at a time, over `s` seconds. */
async function rate(inFlight: number, s: number): Promise<number> {
  const end = performance.now() + s * 1000;
  let done = 0;
  const lane = async () => {
    while (performance.now() < end) {
      if (!(await hasher.verify(phc, password))) throw new Error('argon2id verify failed');
      done++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, lane));
  return done / ((performance.now() - start) / 1000);
}

await rate(concurrency, warmupSeconds);
const sequentialPerSec = await rate(1, seconds);
const concurrentPerSec = await rate(concurrency, seconds);
process.stdout.write(`${JSON.stringify({ sequentialPerSec, concurrentPerSec, concurrency })}\n`);

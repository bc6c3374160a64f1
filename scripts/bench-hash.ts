/**
 * ms per argon2id hash (OWASP parameters m=19456 KiB, t=2, p=1) for each
 * password-hash backend on Node. Sequential calls, one warm-up each.
 *
 *   npx tsx scripts/bench-hash.ts [iterations=10]
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DEFAULT_ARGON2_PARAMS, createNobleHasher, createWasmHasher } from '../worker/src/passwords/hash/index.js';
import type { PasswordHasher } from '../worker/src/passwords/hash/index.js';
import { createNodeNativeHasher } from '../worker/node/native-hasher.js';

const iterations = Number(process.argv[2] ?? 10);
if (!Number.isInteger(iterations) || iterations < 1) throw new Error('iterations must be a positive integer');

const require = createRequire(import.meta.url);
const wasmModule = new WebAssembly.Module(readFileSync(require.resolve('@phi-ag/argon2/argon2.wasm')));

const hashers: PasswordHasher[] = [createNodeNativeHasher(), createWasmHasher(wasmModule), createNobleHasher()];
const password = 'correct horse battery staple';
const { memoryCost, timeCost, parallelism } = DEFAULT_ARGON2_PARAMS;

console.log(
  `argon2id m=${memoryCost} KiB, t=${timeCost}, p=${parallelism}; ${iterations} iterations; Node ${process.version}`,
);
console.log('backend        hash ms (mean / min / max)    verify ms (mean)');
for (const hasher of hashers) {
  const phc = await hasher.hash(password); // warm-up (JIT, wasm memory growth)
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await hasher.hash(password);
    times.push(performance.now() - start);
  }
  let verifyTotal = 0;
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    if (!(await hasher.verify(phc, password))) throw new Error(`${hasher.name}: verify failed`);
    verifyTotal += performance.now() - start;
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const fmt = (n: number): string => n.toFixed(1).padStart(7);
  console.log(
    `${hasher.name.padEnd(12)} ${fmt(mean)} / ${fmt(Math.min(...times))} / ${fmt(Math.max(...times))}    ` +
      `${fmt(verifyTotal / iterations)}`,
  );
}

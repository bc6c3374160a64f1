/**
 * Node-only backend: the `argon2` npm package (native binding of the
 * reference C implementation, runs on libuv's thread pool so it does not
 * block the event loop). Never import this from Worker code: it is not
 * re-exported from index.ts for that reason.
 *
 * We ask the binding for the raw hash (`raw: true`) with our own salt and let
 * the shared core build/parse the PHC string and compare in constant time, so
 * its output is byte-for-byte the format of the other backends (the package's
 * own PHC output is the same format; the tests check both directions).
 */
import { Buffer } from 'node:buffer';
import { availableParallelism } from 'node:os';
import { argon2id, hash as argon2Hash } from 'argon2';
import { DEFAULT_ARGON2_PARAMS, createArgon2idHasher } from '../src/passwords/hash/phc.js';
import type { Argon2DeriveInput, HasherOptions, PasswordHasher } from '../src/passwords/hash/types.js';

export async function nativeArgon2id(input: Argon2DeriveInput): Promise<Uint8Array> {
  const raw = await argon2Hash(Buffer.from(input.password), {
    raw: true,
    type: argon2id,
    version: 0x13,
    salt: Buffer.from(input.salt),
    memoryCost: input.memoryCost,
    timeCost: input.timeCost,
    parallelism: input.parallelism,
    hashLength: input.hashLength,
  });
  return new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
}

export function createNodeNativeHasher(options: HasherOptions = {}): PasswordHasher {
  return createArgon2idHasher('node-native', nativeArgon2id, options.params ?? DEFAULT_ARGON2_PARAMS);
}

/**
 * How many hashes to run at once: one per core the process may use (its CPU affinity, e.g. a
 * container's or `taskset`'s), and at most libuv's threads but two, which file access and WebCrypto
 * share (UV_THREADPOOL_SIZE, 4 by default). More than one per core only makes them take turns: each
 * argon2id pass walks 19 MiB, and two on one core evict each other from the cache, so each costs
 * more CPU (on one core, 22 ms one at a time against 26 ms two at a time, measured by npm run bench, scenario
 * hash-rate).
 */
export function nativeHashConcurrency(
  cores = availableParallelism(),
  threads = Number(process.env.UV_THREADPOOL_SIZE) || 4,
): number {
  return Math.max(1, Math.min(cores, threads - 2));
}

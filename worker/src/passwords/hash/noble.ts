/**
 * Portable reference backend: pure TypeScript argon2id from @noble/hashes
 * (audited, no WASM, no native code). Slowest backend, but it runs anywhere,
 * so it is the fallback on Workers when the WASM backend is unavailable.
 *
 * Runtime-neutral: Web APIs only, no `node:` imports, no Buffer.
 */
import { argon2idAsync } from '@noble/hashes/argon2.js';
import { DEFAULT_ARGON2_PARAMS, createArgon2idHasher } from './phc.js';
import type { Argon2DeriveInput, HasherOptions, PasswordHasher } from './types.js';

/** Raw argon2id via noble. The async variant yields to the event loop every few ms instead of blocking. */
export async function nobleArgon2id(input: Argon2DeriveInput): Promise<Uint8Array> {
  return argon2idAsync(input.password, input.salt, {
    m: input.memoryCost,
    t: input.timeCost,
    p: input.parallelism,
    dkLen: input.hashLength,
    version: 0x13,
  });
}

export function createNobleHasher(options: HasherOptions = {}): PasswordHasher {
  return createArgon2idHasher('noble', nobleArgon2id, options.params ?? DEFAULT_ARGON2_PARAMS);
}

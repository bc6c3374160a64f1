/**
 * Edge backend: the reference argon2 C implementation (phc-winner-argon2)
 * compiled to WebAssembly with SIMD, as shipped in `@phi-ag/argon2`
 * (`@phi-ag/argon2/argon2.wasm`, ~29 KB, no imports).
 *
 * workerd forbids compiling WebAssembly at run time, so the module is never
 * compiled here: the caller passes a precompiled `WebAssembly.Module`.
 * In the Worker, wrangler turns the import into one at build time:
 *
 *   import argon2Wasm from '@phi-ag/argon2/argon2.wasm';
 *   const hasher = createEdgeHasher(argon2Wasm);
 *
 * On Node (tests, bench): `new WebAssembly.Module(readFileSync(path))`.
 *
 * We call the C exports (`malloc`, `argon2_hash`, `free`) directly instead of
 * the package's JS wrapper: that wrapper (0.5.28) passes the UTF-16
 * `password.length` as the byte length, so non-ASCII passwords are
 * truncated ("é" and "Ã" hash the same). Here the length is that of the
 * UTF-8 bytes. The package version is pinned exactly because this depends on
 * the binary's export list; a known-answer test at start-up rejects a
 * binary that does not compute argon2id correctly.
 *
 * Runtime-neutral: Web APIs only.
 */
import { createNobleHasher } from './noble.js';
import { DEFAULT_ARGON2_PARAMS, constantTimeEqual, createArgon2idHasher } from './phc.js';
import type { Argon2DeriveInput, Argon2idDerive, HasherOptions, PasswordHasher } from './types.js';

type WasmFn = (...args: number[]) => number;

interface Argon2WasmExports {
  readonly memory: WebAssembly.Memory;
  readonly initialize: WasmFn;
  readonly malloc: WasmFn;
  readonly free: WasmFn;
  /** argon2.h: argon2_hash(t, m, p, pwd, pwdlen, salt, saltlen, hash, hashlen, encoded, encodedlen, type, version) */
  readonly argon2Hash: WasmFn;
  readonly errorMessage: WasmFn;
}

const ARGON2_ID = 2; // argon2_type Argon2_id
const ARGON2_VERSION_13 = 0x13;

function getExports(instance: WebAssembly.Instance): Argon2WasmExports {
  const exports = instance.exports;
  const fn = (name: string): WasmFn => {
    const value = exports[name];
    if (typeof value !== 'function') throw new Error(`argon2 wasm: missing export ${name}`);
    return value as WasmFn;
  };
  const memory = exports['memory'];
  if (!(memory instanceof WebAssembly.Memory)) throw new Error('argon2 wasm: missing memory export');
  return {
    memory,
    initialize: fn('_initialize'),
    malloc: fn('malloc'),
    free: fn('free'),
    argon2Hash: fn('argon2_hash'),
    errorMessage: fn('argon2_error_message'),
  };
}

function createWasmDerive(module: WebAssembly.Module): Argon2idDerive {
  // Synchronous instantiation of an already compiled module: allowed in
  // workerd (only compilation is), and keeps the factory synchronous.
  const wasm = getExports(new WebAssembly.Instance(module, {}));
  wasm.initialize();

  // Always take a fresh view: the memory grows (argon2 mallocs m KiB), which detaches old buffers.
  const heap = (): Uint8Array => new Uint8Array(wasm.memory.buffer);

  const alloc = (size: number): number => {
    const ptr = wasm.malloc(Math.max(size, 1));
    if (ptr === 0) throw new Error('argon2 wasm: out of memory');
    return ptr;
  };

  const cString = (ptr: number): string => {
    const bytes = heap();
    let end = ptr;
    while (end < bytes.length && bytes[end] !== 0) end++;
    return new TextDecoder().decode(bytes.subarray(ptr, end));
  };

  const derive = (input: Argon2DeriveInput): Uint8Array => {
    const pwdPtr = alloc(input.password.length);
    let saltPtr = 0;
    let hashPtr = 0;
    try {
      saltPtr = alloc(input.salt.length);
      hashPtr = alloc(input.hashLength);
      heap().set(input.password, pwdPtr);
      heap().set(input.salt, saltPtr);
      const rc = wasm.argon2Hash(
        input.timeCost,
        input.memoryCost,
        input.parallelism,
        pwdPtr,
        input.password.length, // UTF-8 byte length, not string length
        saltPtr,
        input.salt.length,
        hashPtr,
        input.hashLength,
        0, // no encoded output: the shared core writes the PHC string
        0,
        ARGON2_ID,
        ARGON2_VERSION_13,
      );
      if (rc !== 0) throw new Error(`argon2 wasm: ${cString(wasm.errorMessage(rc))} (${rc})`);
      return heap().slice(hashPtr, hashPtr + input.hashLength);
    } finally {
      // The instance lives as long as the isolate: wipe the password and the
      // derived hash from its heap before handing the chunks back to malloc.
      const bytes = heap();
      bytes.fill(0, pwdPtr, pwdPtr + input.password.length);
      wasm.free(pwdPtr);
      if (saltPtr !== 0) wasm.free(saltPtr);
      if (hashPtr !== 0) {
        bytes.fill(0, hashPtr, hashPtr + input.hashLength);
        wasm.free(hashPtr);
      }
    }
  };

  selfTest(derive);
  return async (input) => derive(input);
}

// Known answer (same output from the `argon2` package and @noble/hashes):
// argon2id("argon2id self-test", "password-hash-kat", m=8, t=1, p=1, 32 bytes). Cheap (8 KiB, 1 pass).
const KAT_HASH = '30567387f4be8f963fdfcc26f0914b0cd269d3b70fb58820cfddf3e4998c6331';

function selfTest(derive: (input: Argon2DeriveInput) => Uint8Array): void {
  const utf8 = new TextEncoder();
  const out = derive({
    password: utf8.encode('argon2id self-test'),
    salt: utf8.encode('password-hash-kat'),
    memoryCost: 8,
    timeCost: 1,
    parallelism: 1,
    hashLength: 32,
  });
  const expected = new Uint8Array(KAT_HASH.match(/../g)!.map((h) => parseInt(h, 16)));
  if (!constantTimeEqual(out, expected)) throw new Error('argon2 wasm: known-answer self-test failed');
}

/**
 * WASM backend from a precompiled `@phi-ag/argon2/argon2.wasm` module.
 * Throws if the module cannot be instantiated or fails the self-test.
 */
export function createWasmHasher(module: WebAssembly.Module, options: HasherOptions = {}): PasswordHasher {
  return createArgon2idHasher('wasm', createWasmDerive(module), options.params ?? DEFAULT_ARGON2_PARAMS);
}

export interface EdgeHasherOptions extends HasherOptions {
  /** Called when the WASM backend cannot be used and noble is returned instead (for logging). */
  readonly onWasmUnavailable?: (error: unknown) => void;
}

/**
 * The Worker's hasher: WASM when `module` is given and works, otherwise the
 * (slower, ~10x) pure-JS noble backend. Both read and write the same PHC
 * strings, so falling back never invalidates stored hashes.
 */
export function createEdgeHasher(module?: WebAssembly.Module, options: EdgeHasherOptions = {}): PasswordHasher {
  if (module !== undefined) {
    try {
      return createWasmHasher(module, options);
    } catch (error) {
      options.onWasmUnavailable?.(error);
      return createNobleHasher(options);
    }
  }
  options.onWasmUnavailable?.(new Error('no argon2 WebAssembly.Module provided'));
  return createNobleHasher(options);
}

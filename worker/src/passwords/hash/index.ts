/**
 * argon2id password hashing with interchangeable backends that all read and
 * write the same PHC strings.
 *
 * Runtime-neutral exports only. The Node-native backend is the Node host's
 * (`worker/node/native-hasher.ts`), so that the Worker bundle never pulls in
 * the native `argon2` package.
 */
export type {
  Argon2DeriveInput,
  Argon2Params,
  Argon2idDerive,
  HasherOptions,
  PasswordHasher,
} from './types.js';
export {
  ARGON2_LIMITS,
  ARGON2_VERSION,
  DEFAULT_ARGON2_PARAMS,
  PhcParseError,
  assertValidParams,
  constantTimeEqual,
  createArgon2idHasher,
  decodeB64,
  encodeB64,
  encodePassword,
  encodePhc,
  needsRehash,
  parsePhc,
  tryParsePhc,
} from './phc.js';
export type { ParsedPhc } from './phc.js';
export { createNobleHasher, nobleArgon2id } from './noble.js';
export { createEdgeHasher, createWasmHasher } from './wasm.js';
export type { EdgeHasherOptions } from './wasm.js';

/**
 * PHC string format for argon2id, plus the backend-independent hasher core.
 *
 * Why PHC: the string is self-describing (algorithm, version, cost parameters,
 * salt and hash in one column), it is what the reference implementation, the
 * `argon2` npm package, libsodium, PHP, Python etc. read and write, and it lets
 * us raise the costs later: old rows keep verifying with their own parameters
 * and `needsRehash` tells us when to upgrade them on the next successful login.
 *
 *   $argon2id$v=19$m=19456,t=2,p=1$<salt: base64, no padding>$<hash: base64, no padding>
 *
 * Runtime-neutral: Web APIs only (crypto.getRandomValues, TextEncoder).
 */
import type { Argon2DeriveInput, Argon2Params, Argon2idDerive, PasswordHasher } from './types.js';

/**
 * OWASP Password Storage Cheat Sheet minimum for argon2id: 19 MiB, 2 passes,
 * 1 lane; 16-byte salt, 32-byte hash.
 */
export const DEFAULT_ARGON2_PARAMS: Argon2Params = Object.freeze({
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
  hashLength: 32,
  saltLength: 16,
});

/**
 * What the parser accepts. The lower bounds are argon2's own (RFC 9106); the
 * upper bounds are ours: a corrupted row must not make a login allocate
 * gigabytes or spin for minutes. `memoryCost` must also be >= 8 * parallelism.
 */
export const ARGON2_LIMITS = Object.freeze({
  memoryCost: { min: 8, max: 262144 }, // KiB: up to 256 MiB
  timeCost: { min: 1, max: 32 },
  parallelism: { min: 1, max: 16 },
  saltLength: { min: 8, max: 64 },
  hashLength: { min: 16, max: 64 },
});

export const ARGON2_VERSION = 0x13; // 19: the current (and only supported) version

/** A parsed argon2id v=19 PHC string. */
export interface ParsedPhc {
  readonly memoryCost: number;
  readonly timeCost: number;
  readonly parallelism: number;
  readonly salt: Uint8Array;
  readonly hash: Uint8Array;
}

export class PhcParseError extends Error {
  override readonly name = 'PhcParseError';
}

const B64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_LOOKUP: ReadonlyMap<string, number> = new Map(Array.from(B64_ALPHABET, (ch, i) => [ch, i] as const));

/** Standard base64 alphabet without padding, as PHC prescribes. */
export function encodeB64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out +=
      B64_ALPHABET[n >>> 18]! + B64_ALPHABET[(n >>> 12) & 63]! + B64_ALPHABET[(n >>> 6) & 63]! + B64_ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64_ALPHABET[n >>> 18]! + B64_ALPHABET[(n >>> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64_ALPHABET[n >>> 18]! + B64_ALPHABET[(n >>> 12) & 63]! + B64_ALPHABET[(n >>> 6) & 63]!;
  }
  return out;
}

/**
 * Strict decoder: standard alphabet only, no padding, no whitespace, and the
 * unused low bits of the last character must be zero, so every byte string
 * has exactly one accepted encoding.
 */
export function decodeB64(text: string): Uint8Array {
  if (text.length % 4 === 1) throw new PhcParseError('invalid base64 length');
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let j = 0;
  for (const ch of text) {
    const v = B64_LOOKUP.get(ch);
    if (v === undefined) throw new PhcParseError('invalid base64 character');
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >>> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  if (acc !== 0) throw new PhcParseError('non-canonical base64 (trailing bits set)');
  return out;
}

function inRange(value: number, range: { readonly min: number; readonly max: number }): boolean {
  return Number.isSafeInteger(value) && value >= range.min && value <= range.max;
}

/** Throws RangeError unless the parameters are within `ARGON2_LIMITS`. */
export function assertValidParams(params: Argon2Params): void {
  for (const key of ['memoryCost', 'timeCost', 'parallelism', 'saltLength', 'hashLength'] as const) {
    if (!inRange(params[key], ARGON2_LIMITS[key])) {
      throw new RangeError(`argon2 ${key} out of range: ${String(params[key])}`);
    }
  }
  if (params.memoryCost < 8 * params.parallelism) {
    throw new RangeError('argon2 memoryCost must be at least 8 * parallelism KiB');
  }
}

function checkParsed(phc: ParsedPhc): void {
  try {
    assertValidParams({
      memoryCost: phc.memoryCost,
      timeCost: phc.timeCost,
      parallelism: phc.parallelism,
      saltLength: phc.salt.length,
      hashLength: phc.hash.length,
    });
  } catch (error) {
    throw new PhcParseError(error instanceof Error ? error.message : 'invalid parameters');
  }
}

export function encodePhc(phc: ParsedPhc): string {
  checkParsed(phc);
  return (
    `$argon2id$v=${ARGON2_VERSION}$m=${phc.memoryCost},t=${phc.timeCost},p=${phc.parallelism}` +
    `$${encodeB64(phc.salt)}$${encodeB64(phc.hash)}`
  );
}

// Decimal without sign or leading zeros (PHC rule), at most 10 digits.
const DECIMAL = '(?<DIGITS>0|[1-9][0-9]{0,9})';
const param = (key: string): string => DECIMAL.replace('DIGITS', key);
// We write the reference order m,t,p. We also read m,p,t because that is what
// the `argon2` npm package's own `hash()` writes (@phc/format), so hashes made
// with it directly (e.g. by older code or tooling) still verify.
const PARAMS_RES = [
  new RegExp(`^m=${param('m')},t=${param('t')},p=${param('p')}$`),
  new RegExp(`^m=${param('m')},p=${param('p')},t=${param('t')}$`),
];

/**
 * Strict parser: exactly `$argon2id$v=19$m=..,t=..,p=..$salt$hash` (or the
 * `m,p,t` order, see above), no optional PHC fields (keyid/data), canonical
 * base64, parameters within `ARGON2_LIMITS`. Anything else throws
 * `PhcParseError`.
 */
export function parsePhc(phc: string): ParsedPhc {
  if (typeof phc !== 'string') throw new PhcParseError('PHC string expected');
  const fields = phc.split('$');
  if (fields.length !== 6 || fields[0] !== '') throw new PhcParseError('expected 5 $-separated fields');
  const [, algorithm, version, params, salt, hash] = fields as [string, string, string, string, string, string];
  if (algorithm !== 'argon2id') throw new PhcParseError(`unsupported algorithm: ${algorithm.slice(0, 20)}`);
  if (version !== `v=${ARGON2_VERSION}`) throw new PhcParseError('unsupported argon2 version');
  const groups = PARAMS_RES.map((re) => re.exec(params)?.groups).find((g) => g !== undefined);
  if (!groups) throw new PhcParseError('malformed parameters (expected m=..,t=..,p=..)');
  if (salt === '' || hash === '') throw new PhcParseError('missing salt or hash');
  const parsed: ParsedPhc = {
    memoryCost: Number(groups['m']),
    timeCost: Number(groups['t']),
    parallelism: Number(groups['p']),
    salt: decodeB64(salt),
    hash: decodeB64(hash),
  };
  checkParsed(parsed);
  return parsed;
}

/** `parsePhc` that returns undefined instead of throwing. */
export function tryParsePhc(phc: string): ParsedPhc | undefined {
  try {
    return parsePhc(phc);
  } catch {
    return undefined;
  }
}

/**
 * True when the stored hash should be replaced (after a successful verify)
 * because it was made with other parameters than `params`, or because it is
 * not a valid argon2id PHC string at all.
 */
export function needsRehash(phc: string, params: Argon2Params = DEFAULT_ARGON2_PARAMS): boolean {
  const parsed = tryParsePhc(phc);
  if (!parsed) return true;
  return (
    parsed.memoryCost !== params.memoryCost ||
    parsed.timeCost !== params.timeCost ||
    parsed.parallelism !== params.parallelism ||
    parsed.hash.length !== params.hashLength ||
    parsed.salt.length !== params.saltLength
  );
}

/**
 * Compares without an early exit so the time taken does not depend on where
 * the first differing byte is (no timing oracle on the stored hash). The
 * length is not secret (it is in the PHC string), so a length mismatch may
 * return early.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

// A lone (unpaired) surrogate; in a /u regex a valid pair is one code point and does not match.
const LONE_SURROGATE = /\p{Surrogate}/u;
const utf8 = new TextEncoder();

/**
 * Password bytes: the UTF-8 encoding of the string exactly as given. No
 * Unicode normalisation happens here: "é" as U+00E9 (NFC) and as
 * U+0065 U+0301 (NFD) are different passwords; callers that want them equal
 * must normalise (e.g. `password.normalize('NFC')`) before hashing AND
 * verifying. Strings with lone surrogates are rejected because UTF-8 cannot
 * represent them (TextEncoder would silently map them to U+FFFD, making
 * distinct strings collide).
 */
export function encodePassword(password: string): Uint8Array {
  if (typeof password !== 'string') throw new TypeError('password must be a string');
  if (LONE_SURROGATE.test(password)) throw new TypeError('password is not well-formed UTF-16');
  return utf8.encode(password);
}

/**
 * Builds a `PasswordHasher` around a backend's raw argon2id. All backends
 * share this, so salt generation, PHC encoding, strict parsing and the
 * constant-time comparison are identical everywhere.
 */
export function createArgon2idHasher(
  name: string,
  derive: Argon2idDerive,
  params: Argon2Params = DEFAULT_ARGON2_PARAMS,
): PasswordHasher {
  assertValidParams(params);
  const current: Argon2Params = Object.freeze({ ...params });

  return Object.freeze({
    name,
    async hash(password: string): Promise<string> {
      const input: Argon2DeriveInput = {
        password: encodePassword(password),
        salt: crypto.getRandomValues(new Uint8Array(current.saltLength)),
        memoryCost: current.memoryCost,
        timeCost: current.timeCost,
        parallelism: current.parallelism,
        hashLength: current.hashLength,
      };
      const hash = await derive(input);
      if (hash.length !== current.hashLength) throw new Error(`${name}: backend returned ${hash.length} bytes`);
      return encodePhc({ ...input, hash });
    },
    async verify(phc: string, password: string): Promise<boolean> {
      // The PHC comes from our database: malformed means corrupted, which is
      // a failed login, not an exception.
      const parsed = tryParsePhc(phc);
      if (!parsed) return false;
      let bytes: Uint8Array;
      try {
        bytes = encodePassword(password);
      } catch {
        return false; // cannot have been hashed by `hash()`
      }
      const derived = await derive({
        password: bytes,
        salt: parsed.salt,
        memoryCost: parsed.memoryCost,
        timeCost: parsed.timeCost,
        parallelism: parsed.parallelism,
        hashLength: parsed.hash.length,
      });
      return constantTimeEqual(derived, parsed.hash);
    },
  });
}

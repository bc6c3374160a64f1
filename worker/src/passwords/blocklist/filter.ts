/**
 * The compact form of a password blocklist (docs/security.md, "Password blocklist"): a Bloom filter over the
 * lower-cased UTF-8 passwords, so that a list of any size costs a fixed number of bits per entry and a
 * lookup costs `k` bit tests. A filter never misses a listed password; an unlisted one is reported as
 * listed with the false-positive rate chosen at compile time (`npm run blocklist:compile`), which only
 * refuses a good password. Pure: Web APIs only, the same code compiles the file (Node) and reads it
 * (both hosts).
 *
 * File format (little-endian): "PWBF", version 1, k (1 byte), 2 reserved bytes, m (bits, uint32),
 * n (entries, uint32), then the m bits (bit i is bit i % 8 of byte i / 8).
 */

const MAGIC = [0x50, 0x57, 0x42, 0x46]; // "PWBF"
const VERSION = 1;
const HEADER = 16;
const encoder = new TextEncoder();

/** A set of passwords that answers membership, case-insensitively. */
export interface PasswordSet {
  has(password: string): boolean;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Two independent 32-bit hashes of the lower-cased password (FNV-1a with two bases, then mixed). */
function hashPair(password: string): [number, number] {
  const bytes = encoder.encode(password.toLowerCase());
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (const byte of bytes) {
    a = Math.imul(a ^ byte, 0x01000193);
    b = Math.imul(b ^ byte, 0x01000193) ^ (b >>> 15);
  }
  // h2 odd, so the probe sequence h1 + i*h2 (Kirsch–Mitzenmacher) never repeats a step of 0.
  return [fmix32(a), fmix32(b ^ bytes.length) | 1];
}

/** The bits and hash count for `n` entries at false-positive rate `fpr` (the textbook optimum). */
export function filterShape(n: number, fpr: number): { m: number; k: number } {
  const m = Math.max(64, Math.ceil((-Math.max(n, 1) * Math.log(fpr)) / Math.LN2 ** 2));
  if (m >= 2 ** 32) throw new Error('the list is too large for one filter: raise the false-positive rate');
  const k = Math.min(30, Math.max(1, Math.round((m / Math.max(n, 1)) * Math.LN2)));
  return { m, k };
}

/** A filter read from (or compiled into) its file bytes. */
export class BloomFilter implements PasswordSet {
  readonly m: number;
  readonly k: number;
  readonly n: number;
  private readonly bits: Uint8Array;

  constructor(readonly bytes: Uint8Array) {
    if (bytes.length < HEADER || MAGIC.some((b, i) => bytes[i] !== b))
      throw new Error('not a password filter (compile the list with npm run blocklist:compile)');
    if (bytes[4] !== VERSION) throw new Error(`password filter version ${bytes[4]} is not supported (expected 1)`);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.k = bytes[5]!;
    this.m = view.getUint32(8, true);
    this.n = view.getUint32(12, true);
    if (this.k < 1 || this.m < 1 || bytes.length !== HEADER + Math.ceil(this.m / 8))
      throw new Error('the password filter is truncated or damaged');
    this.bits = bytes.subarray(HEADER);
  }

  /**
   * An empty filter sized for `n` entries at false-positive rate `fpr`, to `add` them to (a list read
   * line by line: its size is counted first, so a file of any size never sits in memory).
   */
  static create(n: number, fpr: number): BloomFilter {
    const { m, k } = filterShape(n, fpr);
    const bytes = new Uint8Array(HEADER + Math.ceil(m / 8));
    bytes.set(MAGIC, 0);
    bytes[4] = VERSION;
    bytes[5] = k;
    const view = new DataView(bytes.buffer);
    view.setUint32(8, m, true);
    view.setUint32(12, n, true);
    return new BloomFilter(bytes);
  }

  /** A filter of `passwords` (any case; duplicates and empty ones are ignored) at false-positive rate `fpr`. */
  static compile(passwords: Iterable<string>, fpr: number): BloomFilter {
    const keys = new Set<string>();
    for (const p of passwords) if (p !== '') keys.add(p.toLowerCase());
    const filter = BloomFilter.create(keys.size, fpr);
    for (const key of keys) filter.add(key);
    return filter;
  }

  /** Adds a password (compiling only; a loaded filter is never changed). */
  add(password: string): void {
    const [h1, h2] = hashPair(password);
    for (let i = 0; i < this.k; i++) {
      const bit = ((h1 + Math.imul(i, h2)) >>> 0) % this.m;
      this.bits[bit >>> 3]! |= 1 << (bit & 7);
    }
  }

  /** The false-positive rate this filter has with its entries: (1 - e^(-kn/m))^k. */
  get falsePositiveRate(): number {
    return (1 - Math.exp((-this.k * this.n) / this.m)) ** this.k;
  }

  has(password: string): boolean {
    const [h1, h2] = hashPair(password);
    for (let i = 0; i < this.k; i++) {
      const bit = ((h1 + Math.imul(i, h2)) >>> 0) % this.m;
      if ((this.bits[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }
}

/** Bytes from base64 (the bundled filter is a base64 string so that every bundler takes it as it is). */
export function fromBase64(text: string): Uint8Array {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

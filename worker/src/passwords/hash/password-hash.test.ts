import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { argon2id as nativeType, hash as nativePackageHash, verify as nativePackageVerify } from 'argon2';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_ARGON2_PARAMS,
  PhcParseError,
  constantTimeEqual,
  createEdgeHasher,
  createNobleHasher,
  createWasmHasher,
  decodeB64,
  encodeB64,
  encodePhc,
  needsRehash,
  parsePhc,
} from './index.js';
import type { Argon2Params, PasswordHasher } from './index.js';
import { createNodeNativeHasher } from '../../../node/native-hasher.js';

const require = createRequire(import.meta.url);
const wasmBytes = readFileSync(require.resolve('@phi-ag/argon2/argon2.wasm'));
// On Node the test compiles the module itself; in workerd wrangler does it at build time.
const wasmModule = new WebAssembly.Module(wasmBytes);

// Cheap parameters for the many-case tests; the matrix uses the real defaults.
const FAST: Argon2Params = { ...DEFAULT_ARGON2_PARAMS, memoryCost: 64, timeCost: 1 };

const backends = (params: Argon2Params = DEFAULT_ARGON2_PARAMS): PasswordHasher[] => [
  createNobleHasher({ params }),
  createNodeNativeHasher({ params }),
  createWasmHasher(wasmModule, { params }),
];

const PHC_RE = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/;
const SLOW = 60_000; // noble at OWASP parameters is ~0.3-0.5 s per derivation

/** Rewrites one part of a PHC string (for tampering tests). */
function tamper(
  phc: string,
  change: { salt?: (b: Uint8Array) => void; hash?: (b: Uint8Array) => void; params?: string },
): string {
  const fields = phc.split('$');
  const salt = decodeB64(fields[4]!);
  const hash = decodeB64(fields[5]!);
  change.salt?.(salt);
  change.hash?.(hash);
  return ['', fields[1], fields[2], change.params ?? fields[3], encodeB64(salt), encodeB64(hash)].join('$');
}

describe('3x3 backend matrix at OWASP parameters', () => {
  const hashers = backends();
  const password = 'correct horse battery staple';
  const hashes = new Map<string, string>();

  beforeAll(async () => {
    for (const h of hashers) hashes.set(h.name, await h.hash(password));
  }, SLOW);

  it('produces the PHC format with m=19456,t=2,p=1, 16-byte salt, 32-byte hash', () => {
    expect([...hashes.keys()]).toEqual(['noble', 'node-native', 'wasm']);
    for (const phc of hashes.values()) {
      expect(phc).toMatch(PHC_RE);
      const parsed = parsePhc(phc);
      expect(parsed.salt).toHaveLength(16);
      expect(parsed.hash).toHaveLength(32);
      expect(needsRehash(phc)).toBe(false);
    }
  });

  for (const producer of ['noble', 'node-native', 'wasm']) {
    for (const verifier of hashers) {
      it(
        `${verifier.name} verifies ${producer}'s hash; wrong password is false`,
        async () => {
          const phc = hashes.get(producer)!;
          expect(await verifier.verify(phc, password)).toBe(true);
          expect(await verifier.verify(phc, password + ' ')).toBe(false);
        },
        SLOW,
      );
    }
  }

  it('the argon2 package itself verifies every backend hash', async () => {
    for (const phc of hashes.values()) {
      expect(await nativePackageVerify(phc, password)).toBe(true);
      expect(await nativePackageVerify(phc, 'nope')).toBe(false);
    }
  });

  it(
    "every backend verifies the argon2 package's own PHC output (m,p,t order)",
    async () => {
      const phc = await nativePackageHash(password, {
        type: nativeType,
        memoryCost: 19456,
        timeCost: 2,
        parallelism: 1,
      });
      expect(phc).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
      expect(needsRehash(phc)).toBe(false);
      for (const h of hashers) expect(await h.verify(phc, password)).toBe(true);
      expect(await hashers[0]!.verify(phc, 'nope')).toBe(false);
    },
    SLOW,
  );

  it(
    'tampered PHC strings are rejected by every backend',
    async () => {
      for (const h of hashers) {
        const phc = hashes.get(h.name)!;
        const tampered = [
          tamper(phc, { hash: (b) => void (b[0]! ^= 0x01) }),
          tamper(phc, { hash: (b) => void (b[31]! ^= 0x80) }),
          tamper(phc, { salt: (b) => void (b[5]! ^= 0x10) }),
          tamper(phc, { params: 'm=19456,t=3,p=1' }),
          tamper(phc, { params: 'm=19464,t=2,p=1' }),
          tamper(phc, { params: 'm=19456,t=2,p=2' }),
        ];
        for (const bad of tampered) {
          expect(bad).not.toBe(phc);
          expect(await h.verify(bad, password), `${h.name}: ${bad}`).toBe(false);
        }
      }
    },
    SLOW,
  );

  it('each hash uses a fresh random salt', async () => {
    const wasm = hashers[2]!;
    const a = parsePhc(await wasm.hash(password));
    const b = parsePhc(await wasm.hash(password));
    expect(constantTimeEqual(a.salt, b.salt)).toBe(false);
    expect(constantTimeEqual(a.hash, b.hash)).toBe(false);
  });
});

describe('malformed PHC in verify', () => {
  const malformed = [
    '',
    'not a hash',
    '$argon2id$',
    '$argon2i$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$' + 'A'.repeat(43),
    '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA',
    '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$***',
    '$argon2id$v=19$m=4294967295,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$' + 'A'.repeat(43),
  ];

  for (const h of backends(FAST)) {
    it(`${h.name} returns false and never throws`, async () => {
      for (const phc of malformed) await expect(h.verify(phc, 'x')).resolves.toBe(false);
      // Untyped callers (JSON bodies) may pass non-strings.
      await expect(h.verify(undefined as unknown as string, 'x')).resolves.toBe(false);
      await expect(h.verify(await h.hash('x'), null as unknown as string)).resolves.toBe(false);
    });
  }
});

describe('password encoding: UTF-8 bytes of the string as given, no normalisation', () => {
  const nfc = 'Ünïcødé 🔑 пароль パスワード'.normalize('NFC');
  const nfd = nfc.normalize('NFD');

  it('NFC and NFD are different passwords, consistently across backends', async () => {
    expect(nfc).not.toBe(nfd);
    const hashers = backends(FAST);
    for (const producer of hashers) {
      const phc = await producer.hash(nfc);
      for (const verifier of hashers) {
        expect(await verifier.verify(phc, nfc)).toBe(true);
        expect(await verifier.verify(phc, nfd)).toBe(false);
        // A caller that normalises gets equality.
        expect(await verifier.verify(phc, nfd.normalize('NFC'))).toBe(true);
      }
    }
  });

  it('hashes all UTF-8 bytes (no UTF-16 length truncation: "é" and "Ã" share the first byte 0xC3)', async () => {
    for (const h of backends(FAST)) {
      const phc = await h.hash('é');
      expect(await h.verify(phc, 'Ã')).toBe(false);
      expect(await h.verify(phc, 'é')).toBe(true);
    }
  });

  it('matches the argon2 package fed with the UTF-8 bytes (known answer)', async () => {
    const salt = new Uint8Array(16).fill(7);
    const raw = await nativePackageHash(Buffer.from(nfc, 'utf8'), {
      raw: true,
      type: nativeType,
      salt: Buffer.from(salt),
      memoryCost: FAST.memoryCost,
      timeCost: 1,
      parallelism: 1,
      hashLength: 32,
    });
    const phc = encodePhc({
      memoryCost: FAST.memoryCost,
      timeCost: 1,
      parallelism: 1,
      salt,
      hash: new Uint8Array(raw),
    });
    for (const h of backends(FAST)) expect(await h.verify(phc, nfc)).toBe(true);
  });

  it('rejects lone surrogates in hash() and returns false in verify()', async () => {
    for (const h of backends(FAST)) {
      await expect(h.hash('abc\uD800')).rejects.toThrow(TypeError);
      // TextEncoder would turn the lone surrogate into U+FFFD; it must not match it.
      const phc = await h.hash('abc\uFFFD');
      await expect(h.verify(phc, 'abc\uD800')).resolves.toBe(false);
    }
  });

  it('empty password works (policy on minimum length belongs to the caller)', async () => {
    const hashers = backends(FAST);
    const phc = await hashers[2]!.hash('');
    for (const h of hashers) {
      expect(await h.verify(phc, '')).toBe(true);
      expect(await h.verify(phc, ' ')).toBe(false);
    }
  });

  it('long passwords are hashed in full (no bcrypt-style 72-byte truncation)', async () => {
    const long = 'ä'.repeat(50_000) + '🔑'.repeat(1_000); // 104 000 UTF-8 bytes
    const hashers = backends(FAST);
    for (const producer of hashers) {
      const phc = await producer.hash(long);
      for (const verifier of hashers) {
        expect(await verifier.verify(phc, long)).toBe(true);
        expect(await verifier.verify(phc, long.slice(0, -2) + '🔒')).toBe(false);
        expect(await verifier.verify(phc, long.slice(0, 72))).toBe(false);
      }
    }
  });
});

describe('needsRehash', () => {
  const phc = encodePhc({
    memoryCost: 19456,
    timeCost: 2,
    parallelism: 1,
    salt: new Uint8Array(16),
    hash: new Uint8Array(32),
  });

  it('is false for the current parameters', () => {
    expect(needsRehash(phc)).toBe(false);
    expect(needsRehash(phc, DEFAULT_ARGON2_PARAMS)).toBe(false);
    expect(needsRehash(phc.replace('m=19456,t=2,p=1', 'm=19456,p=1,t=2'))).toBe(false);
  });

  it('is true when any parameter differs', () => {
    expect(needsRehash(phc, { ...DEFAULT_ARGON2_PARAMS, memoryCost: 47104 })).toBe(true);
    expect(needsRehash(phc, { ...DEFAULT_ARGON2_PARAMS, timeCost: 3 })).toBe(true);
    expect(needsRehash(phc, { ...DEFAULT_ARGON2_PARAMS, parallelism: 2 })).toBe(true);
    expect(needsRehash(phc, { ...DEFAULT_ARGON2_PARAMS, hashLength: 64 })).toBe(true);
    expect(needsRehash(phc, { ...DEFAULT_ARGON2_PARAMS, saltLength: 32 })).toBe(true);
  });

  it('is true for hashes made with weaker parameters and for unparseable strings', async () => {
    expect(needsRehash(await createWasmHasher(wasmModule, { params: FAST }).hash('x'))).toBe(true);
    expect(needsRehash('$2b$10$abcdefghijklmnopqrstuu')).toBe(true);
    expect(needsRehash('')).toBe(true);
  });
});

describe('parsePhc', () => {
  const salt = 'c29tZXNhbHRzb21lc2FsdA'; // 16 bytes
  const hash = 'A'.repeat(43); // 32 zero bytes
  const ok = `$argon2id$v=19$m=19456,t=2,p=1$${salt}$${hash}`;

  it('parses a valid string and round-trips through encodePhc', () => {
    const parsed = parsePhc(ok);
    expect(parsed).toMatchObject({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(new TextDecoder().decode(parsed.salt)).toBe('somesaltsomesalt');
    expect(parsed.hash).toEqual(new Uint8Array(32));
    expect(encodePhc(parsed)).toBe(ok);
  });

  const bad: Record<string, string> = {
    empty: '',
    'no leading $': ok.slice(1),
    'wrong algorithm argon2i': ok.replace('argon2id', 'argon2i'),
    'wrong algorithm argon2d': ok.replace('argon2id', 'argon2d'),
    'wrong algorithm scrypt': ok.replace('argon2id', 'scrypt'),
    'uppercase algorithm': ok.replace('argon2id', 'Argon2id'),
    'version 16': ok.replace('v=19', 'v=16'),
    'missing version': ok.replace('$v=19', ''),
    'missing params': ok.replace('$m=19456,t=2,p=1', ''),
    'missing hash': `$argon2id$v=19$m=19456,t=2,p=1$${salt}`,
    'empty hash': `$argon2id$v=19$m=19456,t=2,p=1$${salt}$`,
    'empty salt': `$argon2id$v=19$m=19456,t=2,p=1$$${hash}`,
    'extra field': `${ok}$AAAA`,
    'trailing newline': `${ok}\n`,
    'leading space': ` ${ok}`,
    'missing t': ok.replace(',t=2', ''),
    'duplicate m': ok.replace('t=2', 'm=2'),
    'unknown order t,m,p': ok.replace('m=19456,t=2,p=1', 't=2,m=19456,p=1'),
    'keyid param': ok.replace('p=1', 'p=1,keyid=AAAA'),
    'data param': ok.replace('p=1', 'p=1,data=AAAA'),
    'spaces in params': ok.replace('m=19456,t=2', 'm=19456, t=2'),
    'leading zero': ok.replace('m=19456', 'm=019456'),
    sign: ok.replace('t=2', 't=+2'),
    'hex number': ok.replace('t=2', 't=0x2'),
    'm=0': ok.replace('m=19456', 'm=0'),
    'm below 8*p': ok.replace('m=19456,t=2,p=1', 'm=15,t=2,p=2'),
    'm too large': ok.replace('m=19456', 'm=262145'),
    'm 11 digits': ok.replace('m=19456', 'm=10000000000'),
    't=0': ok.replace('t=2', 't=0'),
    't too large': ok.replace('t=2', 't=33'),
    'p=0': ok.replace('p=1', 'p=0'),
    'p too large': ok.replace('p=1', 'p=17'),
    'base64 padding': ok.replace(salt, `${salt}==`),
    'base64url alphabet': ok.replace(hash, `${'A'.repeat(42)}_`),
    'base64 bad char': ok.replace(hash, `${'A'.repeat(42)}*`),
    'base64 length % 4 == 1': ok.replace(hash, 'A'.repeat(45)),
    'non-canonical base64 trailing bits': ok.replace(hash, `${'A'.repeat(42)}B`),
    'salt too short (7 bytes)': ok.replace(salt, encodeB64(new Uint8Array(7))),
    'salt too long (65 bytes)': ok.replace(salt, encodeB64(new Uint8Array(65))),
    'hash too short (15 bytes)': ok.replace(hash, encodeB64(new Uint8Array(15))),
    'hash too long (65 bytes)': ok.replace(hash, encodeB64(new Uint8Array(65))),
  };

  for (const [label, phc] of Object.entries(bad)) {
    it(`rejects: ${label}`, () => {
      expect(() => parsePhc(phc)).toThrow(PhcParseError);
    });
  }

  it('rejects non-strings', () => {
    expect(() => parsePhc(42 as unknown as string)).toThrow(PhcParseError);
  });

  it('accepts the boundaries of the limits', () => {
    const at = (params: string, s = salt, h = hash): string => `$argon2id$v=19$${params}$${s}$${h}`;
    expect(() => parsePhc(at('m=8,t=1,p=1'))).not.toThrow();
    expect(() => parsePhc(at('m=262144,t=32,p=16'))).not.toThrow();
    expect(() => parsePhc(at('m=128,t=1,p=16'))).not.toThrow();
    expect(() =>
      parsePhc(at('m=8,t=1,p=1', encodeB64(new Uint8Array(8)), encodeB64(new Uint8Array(16)))),
    ).not.toThrow();
    expect(() =>
      parsePhc(at('m=8,t=1,p=1', encodeB64(new Uint8Array(64)), encodeB64(new Uint8Array(64)))),
    ).not.toThrow();
  });
});

describe('helpers', () => {
  it('base64 matches Node for all tail lengths and rejects what Node would silently accept', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = crypto.getRandomValues(new Uint8Array(n));
      const expected = Buffer.from(bytes).toString('base64').replace(/=+$/, '');
      expect(encodeB64(bytes)).toBe(expected);
      expect(decodeB64(expected)).toEqual(bytes);
    }
    expect(() => decodeB64('AB')).toThrow(PhcParseError); // 'B' leaves non-zero trailing bits
    expect(() => decodeB64('AA==')).toThrow(PhcParseError);
  });

  it('constantTimeEqual', () => {
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });

  it('factories reject parameters outside the limits', () => {
    expect(() => createNobleHasher({ params: { ...DEFAULT_ARGON2_PARAMS, memoryCost: 4 } })).toThrow(RangeError);
    expect(() => createNodeNativeHasher({ params: { ...DEFAULT_ARGON2_PARAMS, timeCost: 0 } })).toThrow(RangeError);
    expect(() => createWasmHasher(wasmModule, { params: { ...DEFAULT_ARGON2_PARAMS, saltLength: 4 } })).toThrow(
      RangeError,
    );
    expect(() => createNobleHasher({ params: { ...DEFAULT_ARGON2_PARAMS, parallelism: 1.5 } })).toThrow(RangeError);
  });
});

describe('createEdgeHasher', () => {
  it('uses WASM when the module works', () => {
    const errors: unknown[] = [];
    expect(createEdgeHasher(wasmModule, { onWasmUnavailable: (e) => errors.push(e) }).name).toBe('wasm');
    expect(errors).toEqual([]);
  });

  it('falls back to noble without a module', () => {
    const errors: unknown[] = [];
    expect(createEdgeHasher(undefined, { onWasmUnavailable: (e) => errors.push(e) }).name).toBe('noble');
    expect(errors).toHaveLength(1);
  });

  it('falls back to noble when the module is not an argon2 build', async () => {
    const errors: unknown[] = [];
    const empty = new WebAssembly.Module(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
    const hasher = createEdgeHasher(empty, { params: FAST, onWasmUnavailable: (e) => errors.push(e) });
    expect(hasher.name).toBe('noble');
    expect(String(errors[0])).toMatch(/missing (export|memory)/);
    expect(await hasher.verify(await hasher.hash('pw'), 'pw')).toBe(true);
  });
});

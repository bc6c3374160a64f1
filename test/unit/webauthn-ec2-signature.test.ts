/**
 * The edge build's DER reader for passkey ECDSA signatures (worker/edge-aliases/webauthn-ec2-signature.js,
 * docs/performance.md, "The edge bundle") answers as @simplewebauthn/server's own unwrapEC2Signature, which
 * the Node host runs: the same r || s for every signature the library reads, a refusal for what it refuses,
 * and a refusal for anything but one SEQUENCE of two INTEGERs.
 */
import { randomBytes, webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { unwrapEC2Signature as edge } from '../../worker/edge-aliases/webauthn-ec2-signature.js';

// The library's own function (not exported by the package: imported by its file).
const LIBRARY_FILE = '../../node_modules/@simplewebauthn/server/esm/helpers/iso/isoCrypto/unwrapEC2Signature.js';
const { unwrapEC2Signature: library } = (await import(new URL(LIBRARY_FILE, import.meta.url).href)) as {
  unwrapEC2Signature: (signature: Uint8Array, crv: number) => Uint8Array;
};

const CURVES = [
  { crv: 1, name: 'P-256', n: 32, hash: 'SHA-256' },
  { crv: 2, name: 'P-384', n: 48, hash: 'SHA-384' },
  { crv: 3, name: 'P-521', n: 66, hash: 'SHA-512' },
] as const;

const derLength = (n: number) => (n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff]);
const tlv = (tag: number, content: Uint8Array) => new Uint8Array([tag, ...derLength(content.length), ...content]);
/** DER of an unsigned integer's bytes: leading zeros dropped, a zero added before a high bit. */
function derInteger(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const v = bytes.subarray(i);
  return tlv(0x02, v[0]! & 0x80 ? new Uint8Array([0, ...v]) : v);
}
const derSignature = (r: Uint8Array, s: Uint8Array) => tlv(0x30, new Uint8Array([...derInteger(r), ...derInteger(s)]));

function outcome(
  f: (sig: Uint8Array<ArrayBuffer>, crv: number) => Uint8Array,
  sig: Uint8Array<ArrayBuffer>,
  crv: number,
): string {
  try {
    return Buffer.from(f(sig, crv)).toString('hex');
  } catch {
    return 'refused';
  }
}

describe('the edge build reads an ECDSA signature as the library does', () => {
  it('signed by WebCrypto on each curve: the same r || s, and it verifies', async () => {
    for (const c of CURVES) {
      const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: c.name }, false, ['sign', 'verify']);
      for (let i = 0; i < 40; i++) {
        const data = randomBytes(64);
        const raw = new Uint8Array(await webcrypto.subtle.sign({ name: 'ECDSA', hash: c.hash }, keys.privateKey, data));
        const der = derSignature(raw.subarray(0, c.n), raw.subarray(c.n));
        const unwrapped = edge(der, c.crv);
        expect(Buffer.from(unwrapped).toString('hex')).toBe(Buffer.from(library(der, c.crv)).toString('hex'));
        expect(Buffer.from(unwrapped)).toEqual(Buffer.from(raw));
        expect(await webcrypto.subtle.verify({ name: 'ECDSA', hash: c.hash }, keys.publicKey, unwrapped, data)).toBe(
          true,
        );
      }
    }
  });

  it('short, long and high-bit components, and encodings that are not minimal: the same outcome', () => {
    for (const c of CURVES) {
      for (let i = 0; i < 300; i++) {
        const part = () => {
          const b = randomBytes(1 + Math.floor(Math.random() * (c.n + 2)));
          if (i % 3 === 0) b[0] = 0;
          if (i % 5 === 0) b[0] = 0x80 | b[0]!;
          return new Uint8Array(b);
        };
        const [r, s] = [part(), part()];
        // Minimal DER, and the raw bytes as they are (a leading zero kept, a high bit unsigned).
        for (const sig of [derSignature(r, s), tlv(0x30, new Uint8Array([...tlv(2, r), ...tlv(2, s)]))]) {
          expect(outcome(edge, sig, c.crv)).toBe(outcome(library, sig, c.crv));
        }
      }
    }
  });

  it('refuses what is not one SEQUENCE of two INTEGERs, and curves it does not know', () => {
    const r = new Uint8Array(32).fill(7);
    const good = derSignature(r, r);
    expect(outcome(edge, good, 1)).not.toBe('refused');
    const cases: Uint8Array<ArrayBuffer>[] = [
      new Uint8Array(),
      good.subarray(0, good.length - 1), // truncated
      new Uint8Array([...good, 0]), // a trailing byte
      new Uint8Array([0x31, ...good.subarray(1)]), // a SET
      tlv(0x30, new Uint8Array([...tlv(2, r)])), // one INTEGER
      tlv(0x30, new Uint8Array([...tlv(2, r), ...tlv(4, r)])), // an OCTET STRING for s
      tlv(0x30, new Uint8Array([...tlv(2, r), ...tlv(2, r), ...tlv(2, r)])), // three
      tlv(0x30, new Uint8Array([...tlv(2, new Uint8Array()), ...tlv(2, r)])), // an empty INTEGER
      new Uint8Array([0x30, 0x84, 0, 0, 0, 68, ...good.subarray(2)]), // a four-byte length
    ];
    for (const sig of cases) expect(outcome(edge, sig, 1), Buffer.from(sig).toString('hex')).toBe('refused');
    expect(outcome(edge, good, 6)).toBe('refused');
  });
});

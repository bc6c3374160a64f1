// The edge build's stand-in for @simplewebauthn/server's unwrapEC2Signature (wrangler.toml [alias],
// docs/performance.md, "The edge bundle"): an ECDSA signature's DER SEQUENCE of two INTEGERs (r, s) as the
// fixed-length r || s that WebCrypto verifies. The library reads it with @peculiar/asn1-schema, which brings
// asn1js and the X.509 schemas (about 120 KB of the script, and 15 ms of an isolate's start) for these few
// bytes. Same result as the library's for every signature (test/unit/webauthn-ec2-signature.test.ts);
// anything but one SEQUENCE of two INTEGERs throws, and the verification is refused.
const COMPONENT_LENGTH = { 1: 32, 2: 48, 3: 66 }; // COSE crv P-256, P-384, P-521

function fail(why) {
  throw new Error(`Malformed EC2 signature: ${why}`);
}

/** The definite length at `at` (short form, or long form of one or two bytes): [length, next offset]. */
function lengthAt(bytes, at) {
  const first = bytes[at];
  if (first === undefined) fail('truncated');
  if (first < 0x80) return [first, at + 1];
  const n = first & 0x7f;
  if (n < 1 || n > 2 || at + n >= bytes.length) fail('length');
  let length = 0;
  for (let i = 1; i <= n; i++) length = (length << 8) | bytes[at + i];
  return [length, at + 1 + n];
}

/** The content of the INTEGER at `at`: [bytes, next offset]. */
function integerAt(bytes, at) {
  if (bytes[at] !== 0x02) fail('INTEGER expected');
  const [length, start] = lengthAt(bytes, at + 1);
  if (length === 0 || start + length > bytes.length) fail('INTEGER length');
  return [bytes.subarray(start, start + length), start + length];
}

/** As the library: shorter padded with zeros, one leading zero (a positive sign) dropped, anything else refused. */
function normalized(bytes, n) {
  if (bytes.length < n) {
    const out = new Uint8Array(n);
    out.set(bytes, n - bytes.length);
    return out;
  }
  if (bytes.length === n) return bytes;
  if (bytes.length === n + 1 && bytes[0] === 0 && (bytes[1] & 0x80) === 0x80) return bytes.subarray(1);
  return fail(`component length ${bytes.length}, expected ${n}`);
}

export function unwrapEC2Signature(signature, crv) {
  const n = COMPONENT_LENGTH[crv];
  if (n === undefined) throw new Error(`Unexpected COSE crv value of ${crv} (EC2)`);
  if (signature[0] !== 0x30) fail('SEQUENCE expected');
  const [length, start] = lengthAt(signature, 1);
  if (start + length !== signature.length) fail('SEQUENCE length');
  const [r, next] = integerAt(signature, start);
  const [s, end] = integerAt(signature, next);
  if (end !== signature.length) fail('trailing bytes');
  const out = new Uint8Array(2 * n);
  out.set(normalized(r, n), 0);
  out.set(normalized(s, n), n);
  return out;
}

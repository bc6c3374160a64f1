/**
 * A passkey on a software authenticator: a P-256 key in WebCrypto, the `none` attestation, user presence
 * and verification, a counter that grows, signatures DER-encoded as authenticators send them. It answers
 * the options of a registration (`create`) and of a sign-in (`get`) with what a browser hands back from
 * navigator.credentials, as JSON. For counting a ceremony's round trips without a browser
 * (test/unit/passkey-round-trips.test.ts, the far-db bench); what a browser does is tested with
 * Chromium's virtual authenticator (test/http/passkeys-browser.test.ts).
 */
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

/** A new passkey of relying party `rpId`; `origin` is the page's that runs each ceremony. */
export async function softAuthenticator(rpId: string) {
  const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey));
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, raw.slice(1, 33)],
      [-3, raw.slice(33, 65)],
    ]),
  );
  const id = crypto.getRandomValues(new Uint8Array(16));
  const rpIdHash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(rpId)));
  let counter = 0;
  const authData = (flags: number, rest: Uint8Array[] = []) => {
    const count = new Uint8Array(4);
    new DataView(count.buffer).setUint32(0, counter);
    return concat([rpIdHash, Uint8Array.of(flags), count, ...rest]);
  };
  const clientData = (type: string, challenge: string, origin: string) =>
    new TextEncoder().encode(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  const b64 = (bytes: Uint8Array) => isoBase64URL.fromBuffer(bytes as Uint8Array<ArrayBuffer>);
  return {
    /** The response to registration options (user presence and verification, attested credential data). */
    create(challenge: string, origin: string) {
      const length = Uint8Array.of(0, id.length);
      const data = authData(0x45, [new Uint8Array(16), length, id, cose]);
      const attestationObject = isoCBOR.encode(
        new Map<string, unknown>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', data],
        ]) as never,
      );
      return {
        id: b64(id),
        rawId: b64(id),
        type: 'public-key',
        response: {
          clientDataJSON: b64(clientData('webauthn.create', challenge, origin)),
          attestationObject: b64(attestationObject),
          transports: ['internal'],
        },
        clientExtensionResults: {},
      };
    },
    /** The response to sign-in options: the next counter, signed (ECDSA, DER as WebAuthn carries it). */
    async get(challenge: string, userHandle: string, origin: string) {
      counter += 1;
      const data = authData(0x05);
      const client = clientData('webauthn.get', challenge, origin);
      const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', client));
      const p1363 = new Uint8Array(
        await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, concat([data, hash])),
      );
      return {
        id: b64(id),
        rawId: b64(id),
        type: 'public-key',
        response: {
          clientDataJSON: b64(client),
          authenticatorData: b64(data),
          signature: b64(derSignature(p1363)),
          userHandle,
        },
        clientExtensionResults: {},
      };
    },
  };
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** An ECDSA signature r || s (WebCrypto) as the DER SEQUENCE of two INTEGERs an authenticator sends. */
function derSignature(p1363: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i += 1;
    const trimmed = bytes.slice(i);
    const value = trimmed[0]! & 0x80 ? concat([Uint8Array.of(0), trimmed]) : trimmed;
    return concat([Uint8Array.of(0x02, value.length), value]);
  };
  const half = p1363.length / 2;
  const body = concat([integer(p1363.slice(0, half)), integer(p1363.slice(half))]);
  return concat([Uint8Array.of(0x30, body.length), body]);
}

/**
 * Standard Webhooks signatures (docs/webhooks.md, "On the wire"): secrets `whsec_<base64 of 32 random bytes>`,
 * and `v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>` where the key is the secret's
 * base64 part decoded. Web Crypto only, so both hosts sign alike.
 */

const PREFIX = 'whsec_';
/** Random bytes of a new secret (the specification allows 24 to 64). */
export const SECRET_BYTES = 32;

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** A new signing secret, shown once. */
export function newSigningSecret(): string {
  return PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/** The signature of one message with one secret: `v1,<base64>`. */
export async function signMessage(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const raw = fromBase64(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  const key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

/** The `webhook-signature` header: one signature per secret, space-separated (a rotation's overlap: two). */
export async function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Promise<string> {
  const parts = await Promise.all(secrets.map((s) => signMessage(s, id, timestamp, body)));
  return parts.join(' ');
}

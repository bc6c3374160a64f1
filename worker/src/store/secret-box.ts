/**
 * Encryption of secrets stored in libSQL (OIDC client secrets), so that a database dump alone does
 * not reveal them: AES-256-GCM with a key derived (HKDF-SHA-256) from SECRETS_ENCRYPTION_KEY, or
 * from SESSION_SECRET_KEY when that is unset. Neither key is ever stored in the database by us
 * except the edge's generated session key, which is why production should set one of them.
 */
import type { ConfigSnapshot } from '../config/index.js';
import { ProblemError } from '../http/problem.js';

const enc = new TextEncoder();
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

async function deriveKey(secret: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey('raw', enc.encode(secret), 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: enc.encode('auth-service/secret-box'), info: enc.encode('v1') },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/** The key material from the configuration; refuses when neither variable is set. */
function secretOf(config: ConfigSnapshot): string {
  const secret = config.get('SECRETS_ENCRYPTION_KEY') || config.get('SESSION_SECRET_KEY');
  if (!secret) throw new ProblemError('CONFLICT', { detail: 'set AUTH_SECRETS_ENCRYPTION_KEY (or SESSION_SECRET_KEY) to store secrets' });
  return secret;
}

/** Encrypts `plain` as `v1.<iv>.<ciphertext>` (base64). */
export async function sealSecret(config: ConfigSnapshot, plain: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await deriveKey(secretOf(config));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, enc.encode(plain)));
  return `v1.${b64(iv)}.${b64(sealed)}`;
}

/** Decrypts a value of sealSecret; a wrong key or a corrupted value is a 502-class configuration error. */
export async function openSecret(config: ConfigSnapshot, sealed: string): Promise<string> {
  const [version, iv, data] = sealed.split('.');
  try {
    if (version !== 'v1' || !iv || !data) throw new Error('format');
    const key = await deriveKey(secretOf(config));
    return new TextDecoder().decode(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: unb64(iv) }, key, unb64(data)));
  } catch (err) {
    if (err instanceof ProblemError) throw err;
    throw new ProblemError('BAD_GATEWAY', { detail: 'a stored secret cannot be decrypted (was the encryption key changed?)' });
  }
}

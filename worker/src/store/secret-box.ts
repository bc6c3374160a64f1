/**
 * Encryption of secrets stored in libSQL (LDAP service passwords, OIDC client secrets), so that a
 * database dump alone does not reveal them: AES-256-GCM with a key derived (HKDF-SHA-256) from
 * SECRETS_ENCRYPTION_KEY, or from SESSION_SECRET_KEY when that is unset. Neither key is ever stored
 * in the database by us except the edge's generated session key, which is why production should
 * set one of them. With neither set, the Node host passes a key it keeps beside the database
 * (docs/operations.md, "Keys the Node host keeps"); the edge then refuses to seal.
 *
 * Rotation: values are sealed with the current key only, but opened with any of the current and
 * previous keys (SECRETS_ENCRYPTION_KEY, SECRETS_ENCRYPTION_KEY_PREVIOUS, SESSION_SECRET_KEY,
 * SESSION_SECRET_KEY_PREVIOUS: the session keys too, so that records sealed before a dedicated
 * key was set still open). A value opened with an older key is re-sealed with the current one by
 * the caller (resealed on read, and by the periodic job), so the previous key can then be dropped.
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

/**
 * Whether this host can seal secrets: a key is configured. The Node host always has one (it keeps a
 * generated key beside the database: docs/operations.md, "Keys the Node host keeps"); the edge host
 * needs AUTH_SECRETS_ENCRYPTION_KEY or SESSION_SECRET_KEY (docs/security.md, "Key rotation").
 */
export function canSealSecrets(config: ConfigSnapshot): boolean {
  return config.get('SECRETS_ENCRYPTION_KEY') !== '' || config.get('SESSION_SECRET_KEY') !== '';
}

/** The key that seals: SECRETS_ENCRYPTION_KEY, else SESSION_SECRET_KEY; 503 when neither is set. */
function sealingSecret(config: ConfigSnapshot): string {
  const secret = config.get('SECRETS_ENCRYPTION_KEY') || config.get('SESSION_SECRET_KEY');
  if (!secret)
    throw new ProblemError('SERVICE_UNAVAILABLE', {
      detail:
        'this host cannot store secrets: no key seals them. Set AUTH_SECRETS_ENCRYPTION_KEY (32 characters or ' +
        'more; or SESSION_SECRET_KEY) in its environment',
      log: { msg: 'a secret was not stored: AUTH_SECRETS_ENCRYPTION_KEY is not set', level: 'INFO' },
    });
  return secret;
}

/** The keys that open, the sealing key first, then the previous ones (each once). */
function openingSecrets(config: ConfigSnapshot): string[] {
  const all = [
    sealingSecret(config),
    config.get('SECRETS_ENCRYPTION_KEY_PREVIOUS'),
    config.get('SESSION_SECRET_KEY'),
    config.get('SESSION_SECRET_KEY_PREVIOUS'),
  ];
  return [...new Set(all.filter((k) => k !== ''))];
}

/** The sentence of the API description of a route that stores a sealed secret (its 503). */
export const SEALING_UNAVAILABLE =
  '503 when this host has no key to seal the secret with (an edge host without AUTH_SECRETS_ENCRYPTION_KEY ' +
  'or SESSION_SECRET_KEY).';

/** Whether `value` has the form of a sealed value (`v1.<iv>.<ciphertext>`). */
export function isSealed(value: string): boolean {
  return /^v1\.[A-Za-z0-9+/]+={0,2}\.[A-Za-z0-9+/]+={0,2}$/.test(value);
}

/** Encrypts `plain` as `v1.<iv>.<ciphertext>` (base64). */
export async function sealSecret(config: ConfigSnapshot, plain: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await deriveKey(sealingSecret(config));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, enc.encode(plain)));
  return `v1.${b64(iv)}.${b64(sealed)}`;
}

/** The plain text, and whether it was sealed with another key than the current sealing key. */
async function unseal(config: ConfigSnapshot, sealed: string): Promise<{ plain: string; stale: boolean }> {
  const secrets = openingSecrets(config);
  const [version, iv, data] = sealed.split('.');
  if (version === 'v1' && iv && data) {
    for (const [i, secret] of secrets.entries()) {
      try {
        const key = await deriveKey(secret);
        const bytes = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: unb64(iv) }, key, unb64(data));
        const plain = new TextDecoder().decode(bytes);
        return { plain, stale: i > 0 };
      } catch {
        // AES-GCM authenticates: a wrong key fails here, and the next one is tried.
      }
    }
  }
  throw new ProblemError('BAD_GATEWAY', {
    detail: 'a stored secret cannot be decrypted (was the encryption key changed without keeping the previous one?)',
  });
}

/**
 * Decrypts a value of sealSecret with the current key or a previous one; a value that no key
 * opens (or a corrupted one) is a 502-class configuration error. When a previous key opened it,
 * `reseal` receives the value sealed with the current key, for the caller to store in place of the
 * old one (a failure to store is ignored: the next read tries again).
 */
export async function openSecret(
  config: ConfigSnapshot,
  sealed: string,
  reseal?: (fresh: string) => Promise<unknown>,
): Promise<string> {
  const { plain, stale } = await unseal(config, sealed);
  if (stale && reseal) await reseal(await sealSecret(config, plain)).catch(() => {});
  return plain;
}

/** The value sealed with the current key when `sealed` was sealed with a previous one, else null. */
export async function resealIfStale(config: ConfigSnapshot, sealed: string): Promise<string | null> {
  const { plain, stale } = await unseal(config, sealed);
  return stale ? sealSecret(config, plain) : null;
}

/**
 * Signing keys of session cookies, access tokens and pending merges (DESIGN.md §3): HS256 keyed by
 * SESSION_SECRET_KEY; SESSION_SECRET_KEY_PREVIOUS is still accepted for verification during a
 * rotation. Without SESSION_SECRET_KEY, the Node host passes the key it generated at start; the
 * edge host, whose isolates come and go, keeps one generated key in libSQL (never one per isolate).
 */
import { SignJWT, errors, jwtVerify, type JWTPayload } from 'jose';
import type { ConfigSnapshot } from '../config/index.js';
import { claimMeta, type Db } from '../store/index.js';

export interface SessionKeys {
  current: Uint8Array;
  previous: Uint8Array | undefined;
}

const encode = (s: string) => new TextEncoder().encode(s);

/** Resolves the keys; `generated` is the Node host's key of this start, when it made one. */
export function sessionKeyResolver(config: ConfigSnapshot, generated?: string): (db: Db) => Promise<SessionKeys> {
  const previous = config.get('SESSION_SECRET_KEY_PREVIOUS') ? encode(config.get('SESSION_SECRET_KEY_PREVIOUS')) : undefined;
  const fixed = config.get('SESSION_SECRET_KEY') || generated;
  let keys: SessionKeys | undefined = fixed ? { current: encode(fixed), previous } : undefined;
  return async (db) => {
    if (keys) return keys;
    // First request of an edge isolate without the secret: the key kept in libSQL (made once).
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const candidate = btoa(String.fromCharCode(...bytes));
    keys = { current: encode(await claimMeta(db, 'session_secret_key', candidate)), previous };
    return keys;
  };
}

/** Signs claims with the current key. */
export async function signClaims(keys: SessionKeys, claims: JWTPayload, expiresAt: number, audience: string): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setAudience(audience)
    .setExpirationTime(Math.floor(expiresAt / 1000))
    .sign(keys.current);
}

/**
 * Verifies a token with the current key, then the previous one. Only HS256 is accepted (explicit
 * algorithm allowlist: no "none", no confusion with asymmetric keys). Any failure (tampered,
 * expired, foreign key, garbage) is undefined, never an exception.
 */
export async function verifyClaims(keys: SessionKeys, token: string, audience: string, now: number): Promise<JWTPayload | undefined> {
  for (const key of [keys.current, keys.previous]) {
    if (!key) continue;
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], audience, currentDate: new Date(now) });
      return payload;
    } catch (err) {
      if (err instanceof errors.JWSSignatureVerificationFailed) continue;
      return undefined;
    }
  }
  return undefined;
}

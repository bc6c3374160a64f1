/**
 * Signing keys of session cookies, access tokens and pending merges (architecture.md §4): HS256 keyed by
 * SESSION_SECRET_KEY; SESSION_SECRET_KEY_PREVIOUS is still accepted for verification during a
 * rotation. Without SESSION_SECRET_KEY, the Node host generates one at start (node/main.ts); the
 * edge host, whose isolates come and go, keeps one generated key in libSQL (never one per isolate).
 */
import { SignJWT, base64url, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import type { ConfigSnapshot } from '../config/index.js';
import { claimMeta, type Db } from '../store/index.js';

export interface SessionKeys {
  current: CryptoKey;
  previous: CryptoKey | undefined;
  /** The current key's HMAC-SHA256, synchronous, where the host offers one (AppDeps.hmacSha256). */
  signNow?: (data: Uint8Array) => Uint8Array;
}

/**
 * A host's synchronous HMAC-SHA256 for a key. On Node, WebCrypto runs every HMAC as a job on libuv's
 * thread pool, which the password hashes also use: a session login signs two tokens, and the two
 * hand-overs cost more than the HMACs (architecture.md §6).
 */
export type HmacSha256 = (key: Uint8Array) => (data: Uint8Array) => Uint8Array;

/** Imports a secret once as an HMAC key (importing it at every verification costs more than the HMAC). */
function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
}

/** Resolves the keys; `hmac`: the host's synchronous HMAC, when it has one. */
export function sessionKeyResolver(config: ConfigSnapshot, hmac?: HmacSha256): (db: Db) => Promise<SessionKeys> {
  const previousSecret = config.get('SESSION_SECRET_KEY_PREVIOUS');
  const fixed = config.get('SESSION_SECRET_KEY');
  // The resolved keys are cached as values, never as a shared promise: on Workers a request must
  // not wait on another request's work.
  let keys: SessionKeys | undefined;
  return async (db) => {
    if (keys) return keys;
    let secret = fixed;
    if (!secret) {
      // An edge isolate without the secret: the key kept in libSQL (generated once, by whoever is first).
      const candidate = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
      secret = await claimMeta(db, 'session_secret_key', candidate);
    }
    keys = {
      current: await hmacKey(secret),
      previous: previousSecret ? await hmacKey(previousSecret) : undefined,
      signNow: hmac?.(new TextEncoder().encode(secret)),
    };
    return keys;
  };
}

/**
 * Tokens whose signature was verified, so a session's every request does not pay an HMAC (on Node,
 * WebCrypto runs it on the thread pool). Only verified tokens enter; expiry is still checked at each
 * use, and whether the session lives is always asked of the database. Bounded; oldest out first.
 */
const verified = new Map<string, { payload: JWTPayload; audience: string; keys: SessionKeys }>();
const VERIFIED_MAX = 10_000;
function remember(token: string, entry: { payload: JWTPayload; audience: string; keys: SessionKeys }): void {
  if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
  verified.set(token, entry);
}

const JWT_HEADER = base64url.encode(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

/**
 * Signs claims with the current key. With the host's synchronous HMAC (`signNow`) the token is
 * put together here, byte for byte what jose's SignJWT makes (session-keys.test.ts compares them):
 * the same header, the claims followed by iat, aud and exp. `remember`: the token is kept as
 * verified, so the client's first request with it needs no HMAC (a session's token only: tokens
 * anyone may have signed, such as a passkey challenge's, would push sessions' tokens out).
 */
export async function signClaims(
  keys: SessionKeys,
  claims: JWTPayload,
  expiresAt: number,
  audience: string,
  o: { remember?: boolean } = {},
): Promise<string> {
  let token: string;
  let payload: JWTPayload | undefined;
  if (keys.signNow) {
    payload = { ...claims, iat: Math.floor(Date.now() / 1000), aud: audience, exp: Math.floor(expiresAt / 1000) };
    const input = `${JWT_HEADER}.${base64url.encode(JSON.stringify(payload))}`;
    token = `${input}.${base64url.encode(keys.signNow(new TextEncoder().encode(input)))}`;
  } else {
    token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt()
      .setAudience(audience)
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(keys.current);
  }
  if (o.remember) remember(token, { payload: payload ?? decodeJwt(token), audience, keys });
  return token;
}

/**
 * Verifies a token with the current key, then the previous one. Only HS256 is accepted (explicit
 * algorithm allowlist: no "none", no confusion with asymmetric keys). Any failure (tampered,
 * expired, foreign key, garbage) is undefined, never an exception.
 */
export async function verifyClaims(
  keys: SessionKeys,
  token: string,
  audience: string,
  now: number,
): Promise<JWTPayload | undefined> {
  const cached = verified.get(token);
  if (cached && cached.audience === audience && cached.keys === keys) {
    return typeof cached.payload.exp === 'number' && cached.payload.exp * 1000 > now ? cached.payload : undefined;
  }
  for (const key of [keys.current, keys.previous]) {
    if (!key) continue;
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], audience, currentDate: new Date(now) });
      remember(token, { payload, audience, keys });
      return payload;
    } catch (err) {
      if (err instanceof errors.JWSSignatureVerificationFailed) continue;
      return undefined;
    }
  }
  return undefined;
}

/**
 * Verifies a token's signature and audience as verifyClaims does, but accepts it past its expiry:
 * only to tell the holder of a genuine token of an ended session what happened (or to let it log
 * out again), never to authenticate.
 */
export async function verifyClaimsIgnoringExpiry(
  keys: SessionKeys,
  token: string,
  audience: string,
  now: number,
): Promise<JWTPayload | undefined> {
  let exp: unknown;
  try {
    exp = decodeJwt(token).exp;
  } catch {
    return undefined;
  }
  return verifyClaims(keys, token, audience, typeof exp === 'number' ? Math.min(now, exp * 1000 - 1) : now);
}

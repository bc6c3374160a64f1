/**
 * WebAuthn challenges (docs/security-passkeys.md, "Challenges"): a challenge is a signed token (the
 * session keys, HS256) naming its purpose, the account it was made for (registration, second factor)
 * and a random id, valid for CHALLENGE_TTL_MS. Nothing is stored when one is handed out, so options
 * asked for by anyone cost no write; the first response checked against it writes its id to
 * `passkey_challenges_used`, and any later response to the same challenge is refused (single use).
 */
import { lt } from 'drizzle-orm';
import { passkeyChallengesUsed } from '../../../schema/index.js';
import type { RequestScope } from '../http/scope.js';
import { signClaims, verifyClaims } from './session-keys.js';
import type { Db } from '../store/index.js';

/** What a challenge is for: registering a passkey, a passwordless sign-in, or a second factor. */
export type ChallengePurpose = 'register' | 'login' | 'second-factor';

/** How long a challenge may be answered (the browser's own timeout is CEREMONY_TIMEOUT_MS). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** The timeout the options ask the browser for. */
export const CEREMONY_TIMEOUT_MS = 120_000;

const AUDIENCE = 'auth-webauthn-challenge';
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * A new challenge for `purpose` (and the account `userId`; a second factor's also bound to the
 * pending login `bound`, the id of its token): the bytes the options carry.
 */
export async function issueChallenge(
  scope: RequestScope,
  purpose: ChallengePurpose,
  userId?: string,
  bound?: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const claims = {
    pur: purpose,
    jti: crypto.randomUUID(),
    ...(userId ? { sub: userId } : {}),
    ...(bound ? { pl: bound } : {}),
  };
  const token = await signClaims(await scope.sessionKeys(), claims, scope.now() + CHALLENGE_TTL_MS, AUDIENCE);
  return encoder.encode(token);
}

/** A challenge of ours, checked: its id and expiry (ms). */
export interface CheckedChallenge {
  id: string;
  expiresAt: number;
}

/**
 * The challenge a response answered (base64url, from its clientDataJSON) when it is ours, unexpired,
 * for `purpose` and (when given) the account `userId` and the pending login `bound`; undefined for
 * anything else.
 */
export async function checkChallenge(
  scope: RequestScope,
  challenge: string,
  purpose: ChallengePurpose,
  userId?: string,
  bound?: string,
): Promise<CheckedChallenge | undefined> {
  let token: string;
  try {
    token = decoder.decode(fromBase64Url(challenge));
  } catch {
    return undefined;
  }
  const claims = await verifyClaims(await scope.sessionKeys(), token, AUDIENCE, scope.now());
  if (!claims || claims.pur !== purpose || typeof claims.jti !== 'string' || typeof claims.exp !== 'number')
    return undefined;
  if (userId !== undefined && claims.sub !== userId) return undefined;
  if (bound !== undefined && claims.pl !== bound) return undefined;
  return { id: claims.jti, expiresAt: claims.exp * 1000 };
}

/**
 * The statement that uses up a checked challenge: it inserts nothing (rowsAffected 0) when a response to
 * it was checked before (a replay). In a statement batch of the caller's (a sign-in's reservation).
 */
export function consumeChallengeStatement(db: Db, c: CheckedChallenge) {
  return db
    .insert(passkeyChallengesUsed)
    .values({ id: c.id, expiresAt: c.expiresAt })
    .onConflictDoNothing({ target: passkeyChallengesUsed.id });
}

/** Uses up a checked challenge: false when a response to it was checked before (a replay). */
export async function consumeChallenge(db: Db, c: CheckedChallenge): Promise<boolean> {
  return (await consumeChallengeStatement(db, c)).rowsAffected > 0;
}

/** The challenge `clientDataJSON` (base64url) answers, checked (`checkChallenge`); undefined when not ours. */
export async function answeredChallenge(
  scope: RequestScope,
  clientDataJSON: string,
  purpose: ChallengePurpose,
  userId?: string,
  bound?: string,
): Promise<CheckedChallenge | undefined> {
  const challenge = challengeOf(clientDataJSON);
  return challenge ? checkChallenge(scope, challenge, purpose, userId, bound) : undefined;
}

/** Housekeeping: forgets used challenges once they could no longer be answered anyway. */
export function purgeUsedChallenges(db: Db, now: number) {
  return db.delete(passkeyChallengesUsed).where(lt(passkeyChallengesUsed.expiresAt, now));
}

/** The challenge a WebAuthn response's clientDataJSON (base64url) carries, if it has one. */
export function challengeOf(clientDataJSON: string): string | undefined {
  try {
    const data: unknown = JSON.parse(decoder.decode(fromBase64Url(clientDataJSON)));
    const challenge = (data as { challenge?: unknown } | null)?.challenge;
    return typeof challenge === 'string' ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/** base64url (padded or not) to bytes; throws on anything else. */
export function fromBase64Url(value: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(value)) throw new Error('not base64url');
  const b64 = value.replace(/=+$/, '').replaceAll('-', '+').replaceAll('_', '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

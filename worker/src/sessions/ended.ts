/**
 * Why a session token no longer authenticates (docs/security.md, "Sessions"): told only to whoever holds a token that
 * we signed, since the session's row (and its reason) is looked up only after the signature is
 * verified. Anything else, or a deleted account, keeps the generic answer.
 */
import type { SessionEndReason } from '../../../schema/index.js';
import type { RequestScope } from '../http/scope.js';
import { verifyClaimsIgnoringExpiry } from '../accounts/session-keys.js';
import { endedSession, sessionLimit, sessionPolicy } from '../accounts/sessions.js';

export interface SessionEnd {
  /** The revoked_reason, or idle / expired for the two timeouts. */
  reason: SessionEndReason | 'idle' | 'expired';
  detail: string;
}

const DETAILS: Record<Exclude<SessionEndReason, 'limit'>, string> = {
  logout: 'this session was logged out',
  logout_all: 'this session was ended by a logout of all sessions',
  password_change: 'this session was ended by a change of the password: log in again',
  admin_reset: 'this session was ended by a password reset: log in again',
  password_reset: 'this session was ended by a password reset through a link sent by mail: log in again',
  block: 'this session was ended by an administrator',
  admin: 'this session was ended by an administrator',
  user: 'this session was ended from another session of the account',
  passkey_change: 'this session was ended when a passkey of the account was added or removed: log in again',
  second_factor: 'this session was ended because a second factor of the account was added or removed: log in again',
};

const TIMEOUT_DETAILS = {
  expired: 'this session reached its absolute lifetime (SESSION_ABSOLUTE_TIMEOUT_HOURS): log in again',
  idle: 'this session ended after SESSION_IDLE_TIMEOUT_MIN minutes without a request: log in again',
};

/** The signed claims of a session token, even past its expiry; undefined for anything we did not sign. */
export async function signedSessionClaims(
  scope: RequestScope,
  token: string,
  audience: string,
): Promise<{ sid: string; sub: string; exp: number } | undefined> {
  const claims = await verifyClaimsIgnoringExpiry(await scope.sessionKeys(), token, audience, scope.now());
  if (typeof claims?.sid !== 'string' || typeof claims.sub !== 'string' || typeof claims.exp !== 'number')
    return undefined;
  return { sid: claims.sid, sub: claims.sub, exp: claims.exp * 1000 };
}

/** Why the session of a genuine token ended; undefined when we say nothing more than "invalid". */
export async function explainEndedSession(
  scope: RequestScope,
  token: string,
  audience: string,
): Promise<SessionEnd | undefined> {
  const claims = await signedSessionClaims(scope, token, audience);
  if (!claims) return undefined;
  // Past its signed end (the session's absolute end): told without a query.
  if (claims.exp <= scope.now()) return { reason: 'expired', detail: TIMEOUT_DETAILS.expired };
  const found = await endedSession(scope.db, claims.sid);
  if (!found || found.user.id !== claims.sub || found.user.deletedAt !== null) return undefined;
  const { session, user } = found;
  const now = scope.now();
  if (session.revokedReason === 'limit') {
    const limit = sessionLimit(user, scope.config);
    const detail = `this session was ended by a newer login: the account's session limit is ${limit}`;
    return { reason: 'limit', detail };
  }
  if (session.revokedReason) return { reason: session.revokedReason, detail: DETAILS[session.revokedReason] };
  if (session.revokedAt !== null) return undefined;
  if (session.expiresAt <= now) return { reason: 'expired', detail: TIMEOUT_DETAILS.expired };
  const idleSince = now - sessionPolicy(scope.config).idleMs;
  if (session.lastSeenAt <= idleSince) return { reason: 'idle', detail: TIMEOUT_DETAILS.idle };
  return undefined;
}

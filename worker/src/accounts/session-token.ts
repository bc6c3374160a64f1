/** Session tokens (the cookie value and the OAuth access token): a signed session id. */
import type { RequestScope } from '../http/scope.js';
import type { UserRow } from './model.js';
import { signClaims, verifyClaims } from './session-keys.js';
import { sessionAccount, sessionPolicy, touchSession, type SessionRow } from './sessions.js';

export const SESSION_AUDIENCE = 'auth-session';

/** Signs the token of a session (expires with the session's absolute end). */
export async function sessionToken(scope: RequestScope, session: SessionRow): Promise<string> {
  return signClaims(
    await scope.sessionKeys(),
    { sid: session.id, sub: session.userId },
    session.expiresAt,
    SESSION_AUDIENCE,
    { remember: true },
  );
}

/**
 * The live session and account of a token: the signature and expiry are checked first (no database
 * access for a forged token), then one query checks that the session still lives.
 */
export async function sessionFromToken(
  scope: RequestScope,
  token: string,
  audience: string,
): Promise<{ user: UserRow; session: SessionRow } | undefined> {
  const now = scope.now();
  const claims = await verifyClaims(await scope.sessionKeys(), token, audience, now);
  if (!claims || typeof claims.sid !== 'string') return undefined;
  const found = await sessionAccount(scope.db, claims.sid, now, sessionPolicy(scope.config));
  if (!found || found.user.id !== claims.sub) return undefined;
  const touch = touchSession(scope.db, found.session, now);
  if (touch) scope.inBackground(touch);
  return found;
}

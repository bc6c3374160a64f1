/**
 * The pending login of the two-step login (docs/security-mfa.md): after a right password, an account
 * with a second factor gets no session but this short-lived (5 minutes), signed token (HS256 with
 * the session keys, its own audience). It completes at most one login: its `jti` is inserted in the
 * transaction that opens the session, and a second insert of the same `jti` fails (a replay). Every
 * second step (a TOTP code, a recovery code, a passkey assertion) verifies it with
 * `verifyPendingLogin` and completes it with `completePendingLogin` (mfa/second-step.ts).
 */
import { eq } from 'drizzle-orm';
import type { RequestScope } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { signClaims, verifyClaims } from './session-keys.js';
import type { Db } from '../store/index.js';
import { mfaPendingUses } from '../../../schema/index.js';

export const PENDING_AUDIENCE = 'auth-pending-login';
/** The cookie that also carries the token to the second step of a browser (HttpOnly, Path=ROOT_PATH). */
export const PENDING_COOKIE = 'auth_pending_login';
export const PENDING_TTL_MS = 5 * 60_000;

/** What a pending login carries between the two steps. */
export interface PendingLogin {
  jti: string;
  userId: string;
  login: string;
  /** The session to open: a cookie session (/v3/login, /v3/login/union) or an OAuth one. */
  kind: 'cookie' | 'oauth';
  /** How the first step was proven: a local or LDAP password, or an OIDC provider's ID token. */
  authMethod: 'local_password' | 'ldap_password' | 'oidc';
  /** The throttle key the password was checked on: code guesses count there too. */
  throttleKey: string;
  /** The device whose cookie the password step presented (its own failure budget), if any. */
  device?: string;
  /** Whether the client presented a valid cookie of a live device of the account (not a new device). */
  known: boolean;
  expiresAt: number;
}

/** Signs a pending login; returns the token and the claims. */
export async function signPendingLogin(
  scope: RequestScope,
  p: Omit<PendingLogin, 'jti' | 'expiresAt'>,
): Promise<{ token: string; pending: PendingLogin }> {
  const pending: PendingLogin = { ...p, jti: crypto.randomUUID(), expiresAt: scope.now() + PENDING_TTL_MS };
  const claims = {
    sub: pending.userId,
    jti: pending.jti,
    login: pending.login,
    k: pending.kind,
    am: pending.authMethod,
    tk: pending.throttleKey,
    known: pending.known,
    ...(pending.device ? { dev: pending.device } : {}),
  };
  return { token: await signClaims(await scope.sessionKeys(), claims, pending.expiresAt, PENDING_AUDIENCE), pending };
}

function invalidPending(): ProblemError {
  return new ProblemError('UNAUTHENTICATED', {
    detail: 'no valid pending login (missing, expired, already used or forged): log in with the password again',
    headers: { 'WWW-Authenticate': 'Bearer realm="auth"' },
  });
}

/**
 * The pending login of `token`: signed by us, for this audience, not expired and not used yet;
 * else 401 UNAUTHENTICATED. Whether it is used is checked again, atomically, when it completes.
 */
export async function verifyPendingLogin(scope: RequestScope, token: string | undefined): Promise<PendingLogin> {
  const now = scope.now();
  const c = token ? await verifyClaims(await scope.sessionKeys(), token, PENDING_AUDIENCE, now) : undefined;
  if (
    !c ||
    typeof c.sub !== 'string' ||
    typeof c.jti !== 'string' ||
    typeof c.login !== 'string' ||
    (c.k !== 'cookie' && c.k !== 'oauth') ||
    (c.am !== 'local_password' && c.am !== 'ldap_password' && c.am !== 'oidc') ||
    typeof c.tk !== 'string' ||
    typeof c.exp !== 'number'
  )
    throw invalidPending();
  const used = await scope.db
    .select({ jti: mfaPendingUses.jti })
    .from(mfaPendingUses)
    .where(eq(mfaPendingUses.jti, c.jti))
    .limit(1);
  if (used.length > 0) throw invalidPending();
  return {
    jti: c.jti,
    userId: c.sub,
    login: c.login,
    kind: c.k,
    authMethod: c.am,
    throttleKey: c.tk,
    known: c.known === true,
    ...(typeof c.dev === 'string' ? { device: c.dev } : {}),
    expiresAt: c.exp * 1000,
  };
}

/**
 * The statement that marks a pending login used: a plain INSERT of its `jti`, which fails (UNIQUE)
 * when it was used already, rolling back the batch that would open a second session.
 */
export function consumePendingStatement(db: Db, p: PendingLogin) {
  return db.insert(mfaPendingUses).values({ jti: p.jti, userId: p.userId, expiresAt: p.expiresAt });
}

/** The 401 of a pending login used meanwhile (the completion's INSERT failed). */
export const pendingUsedProblem = invalidPending;

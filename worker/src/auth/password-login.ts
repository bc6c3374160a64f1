/**
 * The one code path that checks a local login and password, for every endpoint that accepts them
 * (Basic, session logins, /v4/users): lockout, blocked accounts, inactivity, password expiry.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { auditInsert, auditInsertWhen } from '../audit/events.js';
import type { ConfigSnapshot } from '../config/index.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { DAY_MS, passwordExpiresAt, type UserRow } from '../users/model.js';
import { loginLocks, users } from '../../../schema/index.js';
import { loginKey } from './credentials.js';
import type { PasswordVerifier } from './password-verifier.js';
import { clearAttempts, lockedUntil, lockIfExhausted, reserveAttempt, throttleKey, throttlePolicy } from './throttle.js';

export interface LoginContext {
  db: Db;
  config: ConfigSnapshot;
  verifier: PasswordVerifier;
  now: number;
  requestId?: string;
  /** WWW-Authenticate challenge for 401 answers. */
  challenge: string;
}

export interface LoginResult {
  user: UserRow;
  /** The password is right but expired (or must be changed): only a password change is allowed. */
  passwordExpired: boolean;
}

/** Finds the live local account of a login (case-insensitive). */
export function liveLocalUser(db: Db, key: string) {
  return db
    .select()
    .from(users)
    .where(and(eq(users.loginKey, key), isNull(users.deletedAt), eq(users.source, 'local')))
    .limit(1);
}

/** The start of the inactivity period of an account. */
function activityBasis(user: UserRow): number {
  return user.lastActivityAt ?? user.createdAt;
}

/**
 * Checks a local login and password. Throws ACCOUNT_LOCKED (password not even checked),
 * INVALID_CREDENTIALS (unknown login or wrong password: one answer), or, only after a correct
 * password, ACCOUNT_BLOCKED. Returns the account, flagging an expired password.
 */
export async function authenticateLocalPassword(ctx: LoginContext, login: string, password: string): Promise<LoginResult> {
  const { db, config, now } = ctx;
  const lk = loginKey(login);
  const key = throttleKey(lk);
  const policy = throttlePolicy(config);

  // The check holds a hashing slot from before the attempt is reserved: when every slot and
  // waiting place is taken, the 503 comes before anything is counted (never a failed login).
  const checked = await ctx.verifier.limit(async () => {
    // One round trip: reserve an attempt (atomic) and read the account.
    const [reserved, rows] = await db.batch([reserveAttempt(db, key, now, policy), liveLocalUser(db, lk)]);
    if (reserved.rowsAffected === 0) return null;
    const user = rows[0];
    const ok = await ctx.verifier.verify(user?.passwordHash, password);
    // The new hash of an outdated one is made in the same slot; it is stored only after a login.
    const outdated = ok && user?.passwordHash && ctx.verifier.needsRehash(user.passwordHash);
    const rehash = outdated ? await ctx.verifier.hasher.hash(password) : undefined;
    return { user, ok, rehash };
  });
  // Locked, or every attempt of the window is in flight: the password is not checked, so right
  // and wrong passwords get this same answer and the lock is no oracle.
  if (!checked) throw await lockedProblem(ctx, key);

  const { user, ok, rehash } = checked;
  const audit = { requestId: ctx.requestId };
  if (!user || !ok) throw await failedLogin(ctx, key, login, user ?? null, { source: 'local' });

  // The password is right: from here on the caller may learn the account's state.
  const subject = { id: user.id, login: user.login };
  if (user.status === 'blocked') {
    await db.batch([clearAttempts(db, key), auditInsert(db, now, { ...audit, stream: 'user_activity', type: 'login.refused', subject, data: { reason: `blocked:${user.blockedReason}` } })]);
    throw blocked(user.blockedReason ?? 'admin');
  }
  if (now - activityBasis(user) > config.get('USER_INACTIVE_TIMEOUT_DAY') * DAY_MS) {
    await db.batch([
      clearAttempts(db, key),
      db.update(users).set({ status: 'blocked', blockedReason: 'inactivity', updatedAt: now }).where(and(eq(users.id, user.id), eq(users.status, 'active'))),
      auditInsert(db, now, { ...audit, stream: 'user_activity', type: 'account.blocked', subject, data: { reason: 'inactivity' } }),
    ]);
    throw blocked('inactivity');
  }
  const expiresAt = passwordExpiresAt(user, config);
  const passwordExpired = user.mustChangePassword || (expiresAt !== null && expiresAt <= now);
  if (passwordExpired) {
    await db.batch([clearAttempts(db, key), auditInsert(db, now, { ...audit, stream: 'user_activity', type: 'login.password_expired', subject })]);
    return { user, passwordExpired };
  }

  await db.batch([
    clearAttempts(db, key),
    db
      .update(users)
      .set({ lastLoginAt: now, lastActivityAt: now, ...(rehash ? { passwordHash: rehash } : {}) })
      .where(eq(users.id, user.id)),
    auditInsert(db, now, { ...audit, stream: 'user_activity', type: 'login.success', subject, data: { source: 'local' } }),
  ]);
  return { user: { ...user, lastLoginAt: now, lastActivityAt: now }, passwordExpired };
}

/** The 401 of a locked throttle key (the password was not checked), with Retry-After. */
export async function lockedProblem(ctx: LoginContext, key: string): Promise<ProblemError> {
  const until = (await lockedUntil(ctx.db, key, ctx.now)) ?? ctx.now + 1000;
  return new ProblemError('ACCOUNT_LOCKED', {
    detail: 'too many failed logins; try again later',
    headers: { 'WWW-Authenticate': ctx.challenge, 'Retry-After': String(Math.max(1, Math.ceil((until - ctx.now) / 1000))) },
  });
}

/**
 * Records a wrong password (or unknown login) for `key`: the reserved attempt stays counted, the
 * key locks once the window holds AUTH_FAILED_COUNT of them, both audited in one batch. Returns
 * the one 401 answer of every wrong login.
 */
export async function failedLogin(ctx: LoginContext, key: string, login: string, user: UserRow | null, data: Record<string, unknown>): Promise<ProblemError> {
  const { db, now } = ctx;
  const policy = throttlePolicy(ctx.config);
  const lockUntil = now + policy.windowMs;
  const audit = { requestId: ctx.requestId, stream: 'user_activity' as const, subject: user, subjectLogin: login };
  await db.batch([
    lockIfExhausted(db, key, now, policy),
    auditInsert(db, now, { ...audit, type: 'login.failure', data }),
    auditInsertWhen(db, now, { ...audit, type: 'account.locked', data: { ...data, until: new Date(lockUntil).toISOString() } }, sql`exists (select 1 from ${loginLocks} where throttle_key = ${key} and until = ${lockUntil})`),
  ]);
  return new ProblemError('INVALID_CREDENTIALS', { detail: 'wrong login or password', headers: { 'WWW-Authenticate': ctx.challenge } });
}

/** The 403 of a blocked account. */
export function blocked(reason: string): ProblemError {
  return new ProblemError('ACCOUNT_BLOCKED', {
    detail: reason === 'inactivity' ? 'the account is blocked after a long inactivity; ask an administrator' : 'the account is blocked; ask an administrator',
    extensions: { reason },
  });
}

/** The 403 of an expired password. */
export function passwordExpiredProblem(): ProblemError {
  return new ProblemError('PASSWORD_EXPIRED', { detail: 'the password has expired: change it (the old password is required)' });
}

/**
 * The one code path that checks a local login and password, for every endpoint that accepts them
 * (Basic, session logins, /v4/users): the lockout here; blocked accounts, inactivity and password
 * expiry by the account rule (users/login-rule.ts), as for LDAP and OIDC logins.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { auditInsert, auditInsertWhen } from '../audit/events.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Logger } from '../http/logger.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { assertMayLogIn, blockedProblem, isPasswordExpired } from '../users/login-rule.js';
import type { UserRow } from '../users/model.js';
import { loginLocks, users } from '../../../schema/index.js';
import { loginKey } from './credentials.js';
import type { PasswordVerifier } from './password-verifier.js';
import {
  clearAttempts,
  lockedUntil,
  lockIfExhausted,
  reserveAttempt,
  throttleKey,
  throttlePolicy,
} from './throttle.js';
import type { RequestMeta } from '../http/scope.js';
import { countLockedAttempt, loginMethod, lockouts } from '../metrics/process.js';

export interface LoginContext {
  db: Db;
  /** Where the attempt is reserved and a success recorded (RequestScope.lazyDb); default db. */
  lazyDb?: Db;
  config: ConfigSnapshot;
  verifier: PasswordVerifier;
  now: number;
  logger: Logger;
  request?: RequestMeta;
  /** WWW-Authenticate challenge for 401 answers. */
  challenge: string;
  /**
   * Statements committed with a success's record, in its transaction (a session login's new
   * session: sessions/login.ts); not run when the login fails or the password has expired.
   */
  alsoOnSuccess?: (db: Db, user: UserRow) => BatchItem<'sqlite'>[];
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

/**
 * Checks a local login and password. Throws ACCOUNT_LOCKED (password not even checked),
 * INVALID_CREDENTIALS (unknown login or wrong password: one answer), or, only after a correct
 * password, ACCOUNT_BLOCKED. Returns the account, flagging an expired password.
 */
export async function authenticateLocalPassword(
  ctx: LoginContext,
  login: string,
  password: string,
): Promise<LoginResult> {
  const { db, config, now } = ctx;
  const lk = loginKey(login);
  const key = throttleKey(lk);
  const policy = throttlePolicy(config);

  // The check holds a hashing slot from before the attempt is reserved: when every slot and
  // waiting place is taken, the 503 comes before anything is counted (never a failed login).
  const checked = await ctx.verifier.limit(ctx.request?.ip ?? null, async () => {
    // One round trip: reserve an attempt (atomic) and read the account. On the Node host's lazy
    // connection the commit does not wait for the disk (issue 15): atomicity is the same, a crash of
    // the process keeps it, and it reaches the disk within a second (architecture.md §6). A failure
    // is then committed with an fsync before its answer, which makes this reservation durable too.
    const rdb = ctx.lazyDb ?? db;
    const [reserved, rows] = await rdb.batch([reserveAttempt(rdb, key, now, policy), liveLocalUser(rdb, lk)]);
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
  const audit = { request: ctx.request };
  if (!user || !ok) throw await failedLogin(ctx, key, login, user ?? null, { source: 'local' });

  // The password is right: from here on the caller may learn the account's state.
  const subject = { id: user.id, login: user.login };
  await assertMayLogIn(ctx, user, { source: 'local' }, [clearAttempts(db, key)]);
  const passwordExpired = isPasswordExpired(user, config, now);
  if (passwordExpired) {
    await db.batch([
      clearAttempts(db, key),
      auditInsert(db, now, { ...audit, stream: 'user_activity', type: 'login.password_expired', subject }),
    ]);
    return { user, passwordExpired };
  }

  // A success's bookkeeping (the failures forgotten, the last login, its event, a new hash of the
  // same password, and `alsoOnSuccess`: a session login's session) commits in one transaction, also
  // on the lazy connection, in the same order as the reservation: a power
  // failure within the second before it reaches the disk loses the login's record and its
  // reservation together, as if it never happened; failures, locks and refusals keep their fsync.
  const ldb = ctx.lazyDb ?? db;
  await ldb.batch([
    clearAttempts(ldb, key),
    ldb
      .update(users)
      .set({ lastLoginAt: now, lastActivityAt: now, ...(rehash ? { passwordHash: rehash } : {}) })
      .where(eq(users.id, user.id)),
    auditInsert(ldb, now, {
      ...audit,
      stream: 'user_activity',
      type: 'login.success',
      subject,
      data: { source: 'local' },
    }),
    ...(ctx.alsoOnSuccess?.(ldb, user) ?? []),
  ]);
  return { user: { ...user, lastLoginAt: now, lastActivityAt: now }, passwordExpired };
}

/**
 * Checks the current password of a signed-in local account (PUT /v4/users/me/password) through
 * the same atomic attempt reservation as a login, on the same throttle key: a stolen session or
 * token must not give unthrottled password guesses. Locked: ACCOUNT_LOCKED without checking the
 * password. Wrong: counted (and may lock the account's logins too), 401 INVALID_CREDENTIALS. Right:
 * the failures are forgotten, as after a login.
 */
export async function verifyCurrentPassword(ctx: LoginContext, user: UserRow, password: string): Promise<void> {
  const key = throttleKey(loginKey(user.login));
  const reserved = await reserveAttempt(ctx.db, key, ctx.now, throttlePolicy(ctx.config));
  if (reserved.rowsAffected === 0) throw await lockedProblem(ctx, key);
  if (!(await ctx.verifier.verify(user.passwordHash, password))) {
    await failedLogin(ctx, key, user.login, user, { source: 'local', via: 'password_change' });
    const headers = { 'WWW-Authenticate': ctx.challenge };
    throw new ProblemError('INVALID_CREDENTIALS', { detail: 'oldPassword is wrong', headers });
  }
  await clearAttempts(ctx.db, key);
}

/** The 401 of a locked throttle key (the password was not checked), with Retry-After. */
export async function lockedProblem(ctx: LoginContext, key: string): Promise<ProblemError> {
  countLockedAttempt(key);
  const until = await lockedUntil(ctx.db, key, ctx.now);
  // No lock: the window is full of attempts still in flight (another request holds the reservation).
  // Neither answer depends on this request's password, which was not checked: no oracle.
  return new ProblemError('ACCOUNT_LOCKED', {
    detail:
      until === null
        ? 'another login attempt for this login is in progress; retry in a moment'
        : 'too many failed logins; try again later',
    headers: {
      'WWW-Authenticate': ctx.challenge,
      'Retry-After': String(until === null ? 1 : Math.max(1, Math.ceil((until - ctx.now) / 1000))),
    },
  });
}

/**
 * Records a wrong password (or unknown login) for `key`: the reserved attempt stays counted, the
 * key locks once the window holds AUTH_FAILED_COUNT of them, both audited in one batch (with `also`:
 * an LDAP login's directory-call event). Returns the one 401 answer of every wrong login.
 */
export async function failedLogin(
  ctx: LoginContext,
  key: string,
  login: string,
  user: UserRow | null,
  data: Record<string, unknown>,
  also: BatchItem<'sqlite'>[] = [],
): Promise<ProblemError> {
  const { db, now } = ctx;
  const policy = throttlePolicy(ctx.config);
  const lockUntil = now + policy.windowMs;
  const audit = { request: ctx.request, stream: 'user_activity' as const, subject: user, subjectLogin: login };
  const [locked] = await db.batch([
    lockIfExhausted(db, key, now, policy),
    auditInsert(db, now, { ...audit, type: 'login.failure', data }),
    auditInsertWhen(
      db,
      now,
      { ...audit, type: 'account.locked', data: { ...data, until: new Date(lockUntil).toISOString() } },
      sql`exists (select 1 from ${loginLocks} where throttle_key = ${key} and until = ${lockUntil})`,
    ),
    ...also,
  ]);
  if (locked.rowsAffected > 0) lockouts.inc([loginMethod(data.source)]);
  return new ProblemError('INVALID_CREDENTIALS', {
    detail: 'wrong login or password',
    headers: { 'WWW-Authenticate': ctx.challenge },
  });
}

/** The 403 of a blocked account (the account rule's). */
export const blocked = blockedProblem;

/** The 403 of an expired password. */
export function passwordExpiredProblem(): ProblemError {
  return new ProblemError('PASSWORD_EXPIRED', {
    detail: 'the password has expired: change it (the old password is required)',
  });
}

/**
 * The account rule (architecture.md §4), in one place for every login (local password, LDAP, OIDC) and
 * for the inactivity job: may this account log in now?
 * - blocked (by an administrator, or earlier for inactivity): refused, audited as `login.refused`;
 * - no activity for USER_INACTIVE_TIMEOUT_DAY days: blocked for inactivity, except the last active
 *   administrator, who is only warned about in the log (else nobody could administer any more);
 * - an expired password (local passwords only: external logins do not use one of ours).
 * The lockout of failed passwords is the throttle's (accounts/throttle.ts), checked before the password.
 */
import { and, asc, eq, lt, or, sql, type SQL } from 'drizzle-orm';
import { auditInsert, auditInsertWhen, type AuditEventType } from '../audit/events.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Logger } from '../http/logger.js';
import { ProblemError } from '../http/problem.js';
import { reusableStatement, type Db } from '../store/index.js';
import { endSessionsStatement, revokeDevicesStatement } from './sessions.js';
import { endUserLinks } from './reset-tokens.js';
import { alias } from 'drizzle-orm/sqlite-core';
import { users } from '../../../schema/index.js';
import { DAY_MS, passwordExpiresAt, type UserRow } from './model.js';
import type { RequestMeta, Scope } from '../http/scope.js';
import { countLoginEvent } from '../metrics/process.js';
import { accountWrite, runAccountBatch, type AccountBatchItem, type AccountWrite } from './writes.js';
import { activeAccountIn, activeAccounts } from './live.js';

/** Where a login comes from, as the audit events name it. */
export interface LoginSource {
  source: 'local' | 'ldap' | 'oidc';
  /** The LDAP server record or the OIDC provider. */
  sourceName?: string | null;
}

/** The audit data naming a login's source (the same shape as `login.success`). */
export function sourceData(s: LoginSource): Record<string, string> {
  if (s.source === 'local' || !s.sourceName) return { source: s.source };
  return { source: s.source, [s.source === 'oidc' ? 'provider' : 'server']: s.sourceName };
}

/** The 403 of a blocked account (reason: admin, inactivity, or directory for LDAP). */
export function blockedProblem(reason: string): ProblemError {
  const why = reason === 'inactivity' ? ' after a long inactivity' : '';
  const detail = `the account is blocked${why}; ask an administrator`;
  return new ProblemError('ACCOUNT_BLOCKED', { detail, extensions: { reason } });
}

/** Accounts idle since before this moment are blocked for inactivity. */
export function inactivityCutoff(config: ConfigSnapshot, now: number): number {
  return now - config.get('USER_INACTIVE_TIMEOUT_DAY') * DAY_MS;
}

const activitySql = sql`coalesce(${users.lastActivityAt}, ${users.createdAt})`;

/** SQL: a live, active account without activity since before `cutoff`. */
export function idleSince(cutoff: number): SQL {
  return and(activeAccounts, lt(activitySql, cutoff))!;
}

/** SQL: another live, active administrator than the row at hand (a correlated subquery). */
const other = alias(users, 'other');
const anotherActiveAdmin = sql`exists (select 1 from ${users} as other
  where ${other.role} = 'admin' and ${activeAccountIn(other)} and ${other.id} <> ${users.id})`;

/**
 * SQL: the row may be blocked for inactivity now: idle since before `cutoff`, and not the last
 * active administrator. Part of the UPDATE itself, so neither an administrator's block (the
 * account is no longer active: its reason stays `admin`) nor a concurrent block of the other
 * administrators can race past it.
 */
export function blockableForInactivity(cutoff: number): SQL {
  return and(idleSince(cutoff), or(sql`${users.role} <> 'admin'`, anotherActiveAdmin))!;
}

/**
 * The statements that block `subject` for inactivity with its audit events; each runs only if the
 * account is blockable when the batch runs (the audit first, so both see the same state). The
 * UPDATE is the last statement.
 */
function inactivityBlock(
  db: Db,
  now: number,
  subject: { id: string; login: string },
  cutoff: number,
  audit: { request?: RequestMeta; data: Record<string, unknown>; refused?: Record<string, unknown> },
): [AccountBatchItem, ...AccountBatchItem[]] {
  const target = and(eq(users.id, subject.id), blockableForInactivity(cutoff));
  const blockable = sql`exists (select 1 from ${users} where ${target})`;
  const event = (type: AuditEventType, data: Record<string, unknown>) =>
    auditInsertWhen(db, now, { stream: 'user_activity', type, subject, request: audit.request, data }, blockable);
  return [
    event('account.blocked', { reason: 'inactivity', ...audit.data }),
    ...(audit.refused ? [event('login.refused', { reason: 'blocked:inactivity', ...audit.refused })] : []),
    // A block ends the sessions and reset/welcome links for good, whoever blocks (docs/security.md, "What ends what").
    endSessionsStatement(db, subject.id, now, 'block', { when: blockable }),
    revokeDevicesStatement(db, subject.id, blockable),
    endUserLinks(db, subject.id, now, blockable),
    accountWrite(
      subject.id,
      db.update(users).set({ status: 'blocked', blockedReason: 'inactivity', updatedAt: now }).where(target),
    ),
  ];
}

/** The UPDATE's (last statement's) row count of a batch of inactivityBlock. */
const blockedRows = (results: unknown[]) => (results[results.length - 1] as { rowsAffected: number }).rowsAffected;

function warnLastAdmin(logger: Logger, user: { login: string }, config: ConfigSnapshot, by: 'login' | 'job'): void {
  const days = config.get('USER_INACTIVE_TIMEOUT_DAY');
  const msg = 'the last active administrator is inactive beyond USER_INACTIVE_TIMEOUT_DAY and is not blocked';
  logger.warning(msg, { login: user.login, days, by });
}

/**
 * May `user` (as read at the start of the login) log in now? Throws ACCOUNT_BLOCKED, after writing
 * `login.refused` (and `account.blocked` when this login blocks it for inactivity) in one batch with
 * `also` (e.g. forgetting the failed attempts). Returns when the login may go on; the caller records
 * it. Only call it once the credentials are proven: the answer tells the account's state.
 */
export async function assertMayLogIn(
  scope: Scope,
  user: UserRow,
  source: LoginSource,
  also: AccountBatchItem[] = [],
): Promise<void> {
  const { db } = scope;
  const now = scope.now();
  const origin = sourceData(source);
  const refuse = async (reason: string): Promise<never> => {
    const data = { reason: `blocked:${reason}`, ...origin };
    const event = { stream: 'user_activity', type: 'login.refused', subject: user, data } as const;
    await runAccountBatch(db, [auditInsert(db, now, { ...event, request: scope.request }), ...also]);
    throw blockedProblem(reason);
  };
  if (user.status === 'blocked') return refuse(user.blockedReason ?? 'admin');

  const cutoff = inactivityCutoff(scope.config, now);
  if ((user.lastActivityAt ?? user.createdAt) >= cutoff) return;
  const audit = { request: scope.request, data: { by: 'login', ...origin }, refused: origin };
  const block = inactivityBlock(db, now, user, cutoff, audit);
  // `also` first, so that the UPDATE stays the last statement.
  if (blockedRows(await runAccountBatch(db, [...also, ...block] as typeof block)) > 0) {
    // Its login.refused was written conditionally (auditInsertWhen): counted here, once it is.
    countLoginEvent('login.refused', origin);
    throw blockedProblem('inactivity');
  }

  // Not blocked by this login: something changed since the account was read, or it is the last
  // active administrator. The database has the last word.
  const [current] = await db
    .select({ status: users.status, reason: users.blockedReason, deletedAt: users.deletedAt })
    .from(users)
    .where(eq(users.id, user.id))
    .limit(1);
  if (!current || current.deletedAt !== null) throw blockedProblem('admin');
  if (current.status === 'blocked') return refuse(current.reason ?? 'admin');
  if (user.role === 'admin') warnLastAdmin(scope.logger, user, scope.config, 'login');
}

/** Whether the password of `user` is expired (or must be changed): then only a change is allowed. */
export function isPasswordExpired(user: UserRow, config: ConfigSnapshot, now: number): boolean {
  return passwordChangeReason(user, config, now) !== null;
}

/**
 * Why the password of `user` must be changed before anything else: `initial` when the account was
 * created so and its first password was never changed (a new account chooses its own), `reset` when an
 * administrator reset it to be changed at the next login, `expired` when its lifetime ended; null when
 * it need not be.
 */
export function passwordChangeReason(
  user: UserRow,
  config: ConfigSnapshot,
  now: number,
): 'initial' | 'reset' | 'expired' | null {
  if (user.mustChangePassword) return user.passwordChangedAt === user.createdAt ? 'initial' : 'reset';
  const expiresAt = passwordExpiresAt(user, config);
  return expiresAt !== null && expiresAt <= now ? 'expired' : null;
}

/**
 * The inactivity job: blocks live active accounts idle for USER_INACTIVE_TIMEOUT_DAY days, each with
 * an audit event, the longest idle first. The last active administrator is left active and warned
 * about. Returns how many accounts were blocked.
 */
export async function blockIdleAccounts(scope: Scope): Promise<number> {
  const { db } = scope;
  const now = scope.now();
  const cutoff = inactivityCutoff(scope.config, now);
  const idle = await db
    .select({ id: users.id, login: users.login, role: users.role })
    .from(users)
    .where(idleSince(cutoff))
    .orderBy(asc(activitySql), asc(users.id))
    .limit(500);
  let blocked = 0;
  for (const u of idle) {
    if (blockedRows(await runAccountBatch(db, inactivityBlock(db, now, u, cutoff, { data: { by: 'job' } }))) > 0) {
      blocked += 1;
    } else if (u.role === 'admin') {
      // Spared as the last active administrator, unless it was used or blocked meanwhile.
      const still = await db
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.id, u.id), idleSince(cutoff)));
      if (still.length > 0) warnLastAdmin(scope.logger, u, scope.config, 'job');
    }
  }
  return blocked;
}

/**
 * A successful login's bookkeeping, for one batch with what the login path adds: the last login and
 * activity (and `rehash`, a new hash of the same password) and the `login.success` event. Every login
 * path writes it through here: local passwords (auth/password-login.ts) and LDAP and OIDC logins
 * (users/external.ts). `loggedIn` is the account as it then is.
 */
export function loginSuccessStatements(
  db: Db,
  now: number,
  user: UserRow,
  o: { request?: RequestMeta; data: Record<string, unknown>; rehash?: string },
) {
  return [
    loginRecordStatement(db, user.id, now, o.rehash),
    auditInsert(db, now, {
      stream: 'user_activity',
      type: 'login.success',
      subject: { id: user.id, login: user.login },
      request: o.request,
      data: o.data,
    }),
  ] as const;
}

/**
 * The statement recording a login of `userId` at `now` (last login and activity; `rehash`, a new hash of
 * the same password): every login path writes it, through loginSuccessStatements or beside its own event.
 */
export function loginRecordStatement(db: Db, userId: string, now: number, rehash?: string): AccountWrite {
  if (!rehash) return accountWrite(userId, recordLogin(db, { now, userId }));
  return accountWrite(
    userId,
    db.update(users).set({ lastLoginAt: now, lastActivityAt: now, passwordHash: rehash }).where(eq(users.id, userId)),
  );
}

// Every login's record, built once.
const recordLogin = reusableStatement(
  (db, p) =>
    db
      .update(users)
      .set({ lastLoginAt: sql`${p.now}`, lastActivityAt: sql`${p.now}` })
      .where(eq(users.id, p.userId)),
  ['now', 'userId'],
);

/** The account after a successful login at `now` (see loginSuccessStatements). */
export const loggedIn = (user: UserRow, now: number): UserRow => ({ ...user, lastLoginAt: now, lastActivityAt: now });

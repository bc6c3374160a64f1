/**
 * What the administrator's overview counts of accounts, sessions and failed-login locks
 * (docs/console.md, "Overview"; docs/api.md, "The overview"): a few queries, each bounded, reads only.
 */
import { and, asc, desc, eq, gt, gte, inArray, isNotNull, lt, or, sql } from 'drizzle-orm';
import type { ConfigSnapshot } from '../config/index.js';
import type { Db } from '../store/index.js';
import { loginLocks, sessions, users } from '../../../schema/index.js';
import { DAY_MS, ROLES } from '../accounts/model.js';
import { liveSession } from '../accounts/session-list.js';
import { sessionPolicy } from '../accounts/sessions.js';
import { liveAccounts } from '../accounts/live.js';

/** Accounts are "inactive soon" when the inactivity block would reach them within this many days. */
export const INACTIVE_SOON_DAYS = 7;
/** Items each short list holds. */
export const SHORT_LIST = 5;

/** An account of a short list, with the time that put it there (epoch ms). */
export interface AccountItem {
  id: string;
  login: string;
  at: number | null;
}

/** A count and the first few of what it counts. */
export interface Counted<T> {
  count: number;
  items: T[];
}

/** A locked login (a key of the failed-login throttle) and, for a local account, the account. */
export interface LockItem {
  login: string;
  source: 'local' | 'ldap';
  until: number;
  userId: string | null;
}

export interface AccountAttention {
  activeSessions: number;
  locked: Counted<LockItem>;
  blocked: Counted<AccountItem>;
  passwordExpired: Counted<AccountItem>;
  inactiveSoon: Counted<AccountItem>;
}

const activity = sql`coalesce(${users.lastActivityAt}, ${users.createdAt})`;

/** Live accounts of `status`, through the (role, status) index: every role named, so the status is searched. */
const withStatus = (status: 'active' | 'blocked') =>
  and(inArray(users.role, [...ROLES]), eq(users.status, status), liveAccounts)!;
const countOf = (rows: Array<{ n: number }>) => Number(rows[0]?.n ?? 0);

/** The counts and short lists of accounts needing attention, live sessions and current locks. */
export async function accountAttention(db: Db, config: ConfigSnapshot, now: number): Promise<AccountAttention> {
  const blocked = withStatus('blocked');
  const expiryDays = config.get('USER_PASSWORD_EXPIRATION_DAY');
  // Expired: a local password older than its lifetime (0: passwords never expire), on an active account.
  const expired =
    expiryDays === 0
      ? sql`0`
      : and(
          withStatus('active'),
          eq(users.source, 'local'),
          isNotNull(users.passwordChangedAt),
          lt(users.passwordChangedAt, now - expiryDays * DAY_MS),
        )!;
  // Inactive soon: the inactivity job blocks it within INACTIVE_SOON_DAYS days (not yet idle beyond the limit).
  const cutoff = now - config.get('USER_INACTIVE_TIMEOUT_DAY') * DAY_MS;
  const soon = and(withStatus('active'), gte(activity, cutoff), lt(activity, cutoff + INACTIVE_SOON_DAYS * DAY_MS))!;
  // Locks of logins (local and LDAP), not of a device's or an address's budget.
  const lockKeys = and(
    gt(loginLocks.until, now),
    or(sql`${loginLocks.throttleKey} like 'local:%'`, sql`${loginLocks.throttleKey} like 'ldap:%'`),
  );
  const item = { id: users.id, login: users.login };
  const [sessionCount, lockCount, lockRows, blockedCount, blockedRows, expiredCount, expiredRows, soonCount, soonRows] =
    await db.batch([
      db
        .select({ n: sql<number>`count(*)` })
        .from(sessions)
        .where(liveSession(now, sessionPolicy(config))),
      db.select({ n: sql<number>`count(*)` }).from(loginLocks).where(lockKeys),
      db
        .select({ key: loginLocks.throttleKey, until: loginLocks.until, userId: users.id })
        .from(loginLocks)
        .leftJoin(users, and(sql`'local:' || ${users.loginKey} = ${loginLocks.throttleKey}`, liveAccounts))
        .where(lockKeys)
        .orderBy(desc(loginLocks.until))
        .limit(SHORT_LIST),
      db.select({ n: sql<number>`count(*)` }).from(users).where(blocked),
      db
        .select({ ...item, at: users.updatedAt })
        .from(users)
        .where(blocked)
        .orderBy(desc(users.updatedAt))
        .limit(SHORT_LIST),
      db.select({ n: sql<number>`count(*)` }).from(users).where(expired),
      db
        .select({ ...item, at: users.passwordChangedAt })
        .from(users)
        .where(expired)
        .orderBy(asc(users.passwordChangedAt))
        .limit(SHORT_LIST),
      db.select({ n: sql<number>`count(*)` }).from(users).where(soon),
      db
        .select({ ...item, at: sql<number>`${activity}` })
        .from(users)
        .where(soon)
        .orderBy(asc(activity))
        .limit(SHORT_LIST),
    ]);
  return {
    activeSessions: countOf(sessionCount),
    locked: {
      count: countOf(lockCount),
      items: lockRows.map((r) => lockItem(r.key, r.until, r.userId)),
    },
    blocked: { count: countOf(blockedCount), items: blockedRows },
    passwordExpired: { count: countOf(expiredCount), items: expiredRows },
    inactiveSoon: { count: countOf(soonCount), items: soonRows },
  };
}

/** A lock's login from its throttle key (`local:KEY` or `ldap:SERVER:KEY`). */
function lockItem(key: string, until: number, userId: string | null): LockItem {
  if (key.startsWith('local:')) return { login: key.slice('local:'.length), source: 'local', until, userId };
  const rest = key.slice('ldap:'.length);
  return { login: rest.slice(rest.indexOf(':') + 1), source: 'ldap', until, userId: null };
}

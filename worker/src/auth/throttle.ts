/**
 * Lockout counting (architecture.md §4), atomic by construction: a password is checked only after a
 * single conditional INSERT has reserved an attempt, and that INSERT succeeds only while the key is
 * not locked and fewer than AUTH_FAILED_COUNT attempts lie in the sliding window. SQLite runs each
 * statement atomically, so however many requests race, at most AUTH_FAILED_COUNT passwords are
 * checked per window. Unknown logins are throttled the same way, so a lock reveals nothing.
 */
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import type { ConfigSnapshot } from '../config/index.js';
import type { Db } from '../store/index.js';
import { loginAttempts, loginLocks } from '../../../schema/index.js';

export interface ThrottlePolicy {
  count: number;
  windowMs: number;
}

/** AUTH_FAILED_COUNT and AUTH_FAILED_TIMEOUT_MIN, read at request time. */
export function throttlePolicy(config: ConfigSnapshot): ThrottlePolicy {
  return { count: config.get('AUTH_FAILED_COUNT'), windowMs: config.get('AUTH_FAILED_TIMEOUT_MIN') * 60_000 };
}

/**
 * The statement reserving one attempt; it inserts a row (rowsAffected 1) only when allowed. `id`
 * names the row, so that an attempt the directory could not judge can be released.
 */
export function reserveAttempt(db: Db, key: string, now: number, p: ThrottlePolicy, id: string = crypto.randomUUID()) {
  return db.run(sql`
    insert into ${loginAttempts} (id, throttle_key, at)
    select ${id}, ${key}, ${now}
    where not exists (select 1 from ${loginLocks} where throttle_key = ${key} and until > ${now})
      and (select count(*) from ${loginAttempts}
           where throttle_key = ${key} and at > ${now - p.windowMs}) < ${p.count}`);
}

/**
 * The statement that locks `key` after a wrong password once AUTH_FAILED_COUNT attempts lie in the
 * window (the reserved attempt stays counted as a failure). Returns the lock row when it locked.
 */
export function lockIfExhausted(db: Db, key: string, now: number, p: ThrottlePolicy) {
  return db.run(sql`
    insert into ${loginLocks} (throttle_key, until)
    select ${key}, ${now + p.windowMs}
    where (select count(*) from ${loginAttempts} where throttle_key = ${key} and at > ${now - p.windowMs}) >= ${p.count}
    on conflict (throttle_key) do update set until = excluded.until`);
}

/** Releases a reserved attempt that judged nothing (the directory or the bridge failed). */
export function releaseAttempt(db: Db, id: string) {
  return db.delete(loginAttempts).where(eq(loginAttempts.id, id));
}

/** After a correct password: the failures of `key` are forgotten. */
export function clearAttempts(db: Db, key: string) {
  return db.delete(loginAttempts).where(eq(loginAttempts.throttleKey, key));
}

/** Admin unlock: removes the lock and the counted failures. */
export function unlockStatements(db: Db, key: string) {
  return [db.delete(loginLocks).where(eq(loginLocks.throttleKey, key)), clearAttempts(db, key)] as const;
}

/** The end of the lock of `key`, if locked now. */
export async function lockedUntil(db: Db, key: string, now: number): Promise<number | null> {
  const rows = await db
    .select({ until: loginLocks.until })
    .from(loginLocks)
    .where(and(eq(loginLocks.throttleKey, key), gt(loginLocks.until, now)));
  return rows[0]?.until ?? null;
}

/** Housekeeping: attempts older than the longest window and expired locks. */
export async function purgeThrottle(db: Db, now: number): Promise<void> {
  await db.batch([
    db.delete(loginAttempts).where(lt(loginAttempts.at, now - 1440 * 60_000)),
    db.delete(loginLocks).where(lt(loginLocks.until, now)),
  ]);
}

/** The throttle key of a local login, or of a login at an LDAP server record. */
export function throttleKey(loginKey: string, ldapServer?: string): string {
  return ldapServer === undefined ? `local:${loginKey}` : `ldap:${ldapServer}:${loginKey}`;
}

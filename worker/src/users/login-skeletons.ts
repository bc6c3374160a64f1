/**
 * Look-alike logins (docs/security.md, "Logins"): the checks by confusable skeleton (users/confusables.ts) of a
 * new account's login against the live accounts and the reservations of deleted logins, and the
 * start's filling of the skeleton columns (after the migrations, which cannot compute them).
 */
import { setLoginSkeleton } from '../accounts/account-writes.js';
import { and, asc, eq, gt, isNull, ne, or } from 'drizzle-orm';
import type { Db } from '../store/index.js';
import { loginReservations, users } from '../../../schema/index.js';
import { loginSkeleton } from './confusables.js';
import { loginKey } from '../accounts/login-name.js';
import { isUniqueViolation } from '../store/unique-violation.js';

/** The login of a live account that looks like `login` without being it (another key), if any. */
export async function lookAlikeOf(db: Db, login: string): Promise<string | undefined> {
  const [row] = await db
    .select({ login: users.login })
    .from(users)
    .where(
      and(eq(users.loginSkeleton, loginSkeleton(login)), ne(users.loginKey, loginKey(login)), isNull(users.deletedAt)),
    )
    .limit(1);
  return row?.login;
}

/** Until when `login` is reserved at `now`: its key or its skeleton is a deleted account's login's. */
export async function reservedUntil(db: Db, login: string, now: number): Promise<number | undefined> {
  const [row] = await db
    .select({ until: loginReservations.until })
    .from(loginReservations)
    .where(
      and(
        or(eq(loginReservations.loginKey, loginKey(login)), eq(loginReservations.skeleton, loginSkeleton(login))),
        gt(loginReservations.until, now),
      ),
    )
    .orderBy(asc(loginReservations.until))
    .limit(1);
  return row?.until;
}

/** A live account left without a skeleton: it looks like `other`'s login, which has it. */
export interface LookAlikeConflict {
  login: string;
  other: string;
}

/**
 * Fills the skeletons still null (new columns, a rekeyed login): live accounts oldest first, so of two
 * that already looked alike the older keeps its skeleton; the newer stays null (its own key still
 * works) and is returned, for an administrator to rename or delete one of the two. Reservations get
 * the skeleton of their key. Idempotent: runs at every start, and costs nothing once all is filled.
 */
export async function fillLoginSkeletons(db: Db): Promise<LookAlikeConflict[]> {
  const conflicts: LookAlikeConflict[] = [];
  const rows = await db
    .select({ id: users.id, login: users.login })
    .from(users)
    .where(and(isNull(users.loginSkeleton), isNull(users.deletedAt)))
    .orderBy(asc(users.createdAt), asc(users.id));
  for (const row of rows) {
    const skeleton = loginSkeleton(row.login);
    try {
      await setLoginSkeleton(db, row.id, skeleton);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const [holder] = await db
        .select({ login: users.login })
        .from(users)
        .where(and(eq(users.loginSkeleton, skeleton), isNull(users.deletedAt)))
        .limit(1);
      conflicts.push({ login: row.login, other: holder?.login ?? '' });
    }
  }
  const reserved = await db
    .select({ key: loginReservations.loginKey })
    .from(loginReservations)
    .where(isNull(loginReservations.skeleton));
  for (const r of reserved) {
    await db
      .update(loginReservations)
      .set({ skeleton: loginSkeleton(r.key) })
      .where(eq(loginReservations.loginKey, r.key));
  }
  return conflicts;
}

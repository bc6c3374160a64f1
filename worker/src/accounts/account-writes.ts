/**
 * The named writes of `users` rows (architecture.md §6), as AccountWrites for a caller's batch
 * (accounts/writes.ts `runAccountBatch`, which invalidates the account's cached lookups): creating an
 * account, setting its password, an administrator's change, a profile refreshed from its directory,
 * the end of super-access, and the login-name upkeep. Sessions and tokens: sessions.ts, tokens.ts;
 * a login's record and the inactivity block: login-rule.ts.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import { passwordHistory, users } from '../../../schema/index.js';
import type { Db } from '../store/db.js';
import type { UserRow } from './model.js';
import { AccountWrite, accountWrite, runAccountBatch } from './writes.js';
import { roleUnlessLastAdmin } from './last-admin.js';
import { liveAccounts } from './live.js';

/** Inserts a new account (with its first password's history entry when it has one). */
export function createAccountStatements(db: Db, row: UserRow): AccountWrite[] {
  return [
    accountWrite(row.id, db.insert(users).values(row)),
    ...(row.passwordHash === null
      ? []
      : [
          accountWrite(
            row.id,
            db
              .insert(passwordHistory)
              .values({ userId: row.id, passwordHash: row.passwordHash, createdAt: row.createdAt }),
          ),
        ]),
  ];
}

/** Stores a new password hash of `userId` and its history entry. */
export function setPasswordStatements(
  db: Db,
  userId: string,
  hash: string,
  now: number,
  mustChange: boolean,
): AccountWrite[] {
  return [
    accountWrite(
      userId,
      db
        .update(users)
        .set({ passwordHash: hash, passwordChangedAt: now, mustChangePassword: mustChange, updatedAt: now })
        .where(eq(users.id, userId)),
    ),
    accountWrite(userId, db.insert(passwordHistory).values({ userId, passwordHash: hash, createdAt: now })),
  ];
}

/**
 * An administrator's change of a live account (`set`, stamped `updatedAt = now`), only when `when`
 * holds (e.g. another administrator remains).
 */
export function changeAccountStatement(
  db: Db,
  userId: string,
  set: Partial<UserRow>,
  now: number,
  when?: SQL,
): AccountWrite {
  return accountWrite(
    userId,
    db
      .update(users)
      .set({ ...set, updatedAt: now })
      .where(and(eq(users.id, userId), liveAccounts, when)),
  );
}

/**
 * An external account's profile as its directory or provider now has it; the last active
 * administrator keeps admin whatever role it brings (last-admin.ts).
 */
export function refreshProfileStatement(
  db: Db,
  userId: string,
  profile: Pick<UserRow, 'displayName' | 'email' | 'role'>,
  now: number,
): AccountWrite {
  return accountWrite(
    userId,
    db
      .update(users)
      .set({ ...profile, role: roleUnlessLastAdmin(profile.role), updatedAt: now })
      .where(eq(users.id, userId)),
  );
}

/** Clears super-access of `userId` that ended by `now` (the jobs). */
export function endSuperAccessStatement(db: Db, userId: string, now: number): AccountWrite {
  return accountWrite(
    userId,
    db
      .update(users)
      .set({ superAccessUntil: null })
      .where(and(eq(users.id, userId), sql`${users.superAccessUntil} <= ${now}`)),
  );
}

/**
 * Fills the confusable skeletons of these accounts' logins, in one statement, each only while it has none and the
 * account is live (the backfill, users/login-skeletons.ts): run twice, or by two instances at once, it writes each
 * row once. A look-alike's skeleton throws the unique violation (the whole statement changes nothing then).
 */
export function fillLoginSkeletonsWrite(db: Db, rows: readonly { id: string; skeleton: string }[]): AccountWrite {
  // By id (the primary key; the unary + keeps the planner off the skeleton index, whose null entries are every
  // pending row): a join with a VALUES list let it walk the pending rows once per value.
  const cases = sql.join(
    rows.map((r) => sql`when ${r.id} then ${r.skeleton}`),
    sql` `,
  );
  const ids = sql.join(
    rows.map((r) => sql`${r.id}`),
    sql`, `,
  );
  return new AccountWrite(
    db.run(sql`update ${users} set login_skeleton = case id ${cases} end
               where id in (${ids}) and +login_skeleton is null and ${liveAccounts}`),
    rows.map((r) => r.id),
  );
}

/** Sets the login key of `userId` (after a change of its folding) and clears its skeleton, to be filled again. */
export async function setLoginKey(db: Db, userId: string, key: string): Promise<void> {
  await runAccountBatch(db, [
    accountWrite(userId, db.update(users).set({ loginKey: key, loginSkeleton: null }).where(eq(users.id, userId))),
  ]);
}

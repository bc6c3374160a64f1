/** Finding live accounts (not deleted): one, a page of them, with their locks. */
import { and, asc, desc, eq, sql, type SQL } from 'drizzle-orm';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { loginLocks, users } from '../../../schema/index.js';
import { loginKey } from './login-name.js';
import type { Role, UserRow } from './model.js';
import { localLockOf, localLockUntil } from './throttle.js';
import { liveAccounts } from './live.js';

/** The live account `id`, or undefined. */
export async function findLiveAccount(db: Db, id: string): Promise<UserRow | undefined> {
  const rows = await db
    .select()
    .from(users)
    .where(and(eq(users.id, id), liveAccounts))
    .limit(1);
  return rows[0];
}

/** The live account `id`, or 404. */
export async function liveAccount(db: Db, id: string): Promise<UserRow> {
  const row = await findLiveAccount(db, id);
  if (!row) throw new ProblemError('NOT_FOUND', { detail: 'no such user' });
  return row;
}

/** The query behind `adminExists` (a row: a live administrator account exists). */
export const adminExistsQuery = (db: Db) =>
  db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.role, 'admin'), liveAccounts))
    .limit(1);

/** Whether a live administrator account exists (active or blocked). */
export async function adminExists(db: Db): Promise<boolean> {
  return (await adminExistsQuery(db)).length > 0;
}

/** The end of the account's lock for untrusted clients (its local login's), if any: its public `lockedUntil`. */
export function accountLockedUntil(db: Db, user: UserRow, now: number): Promise<number | null> {
  return localLockUntil(db, user.loginKey, now);
}

export const ACCOUNT_SORTS = ['login', '-login', 'createdAt', '-createdAt', 'lastLoginAt', '-lastLoginAt'] as const;

const SORTS: Record<(typeof ACCOUNT_SORTS)[number], SQL[]> = {
  login: [asc(users.loginKey)],
  '-login': [desc(users.loginKey)],
  createdAt: [asc(users.createdAt), asc(users.loginKey)],
  '-createdAt': [desc(users.createdAt), asc(users.loginKey)],
  lastLoginAt: [asc(users.lastLoginAt), asc(users.loginKey)],
  '-lastLoginAt': [desc(users.lastLoginAt), asc(users.loginKey)],
};

/** A page of the account list (GET /v4/users): filters, order and window. */
export interface AccountQuery {
  /** A prefix of the login, compared by login key (case-insensitive). */
  login?: string;
  /** A substring of the login, the display name or the address (case-insensitive; docs/api.md, "User search"). */
  q?: string;
  role?: Role;
  status?: UserRow['status'];
  source?: UserRow['source'];
  kind?: UserRow['kind'];
  sort: (typeof ACCOUNT_SORTS)[number];
  limit: number;
  offset: number;
}

/** `text` as a LIKE pattern's literal part: its wildcards `%` `_` and the escape character `\\` escaped. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/**
 * SQL: the account's login, display name or address contains `q`. The login is compared by its key
 * (case-folded like every login); the name and the address with SQLite's LIKE, case-insensitive for
 * ASCII letters only. Always bound as a parameter, its wildcards literal.
 */
export function accountContains(q: string): SQL {
  const key = `%${likeLiteral(loginKey(q))}%`;
  const plain = `%${likeLiteral(q)}%`;
  return sql`(${users.loginKey} like ${key} escape '\\' or ${users.displayName} like ${plain} escape '\\'
    or ${users.email} like ${plain} escape '\\')`;
}

/** The live accounts of `q`'s page, each with the end of its lock, and how many match in all. */
export async function listAccounts(db: Db, q: AccountQuery, now: number) {
  const escaped = q.login === undefined ? undefined : likeLiteral(loginKey(q.login));
  const where = and(
    liveAccounts,
    escaped !== undefined ? sql`${users.loginKey} like ${`${escaped}%`} escape '\\'` : undefined,
    q.q !== undefined && q.q !== '' ? accountContains(q.q) : undefined,
    q.role ? eq(users.role, q.role) : undefined,
    q.status ? eq(users.status, q.status) : undefined,
    q.source ? eq(users.source, q.source) : undefined,
    q.kind ? eq(users.kind, q.kind) : undefined,
  );
  const [rows, count] = await db.batch([
    db
      .select({ user: users, lockedUntil: loginLocks.until })
      .from(users)
      .leftJoin(loginLocks, localLockOf(users.loginKey, now))
      .where(where)
      .orderBy(...SORTS[q.sort])
      .limit(q.limit)
      .offset(q.offset),
    db.select({ n: sql<number>`count(*)` }).from(users).where(where),
  ]);
  return { rows, total: Number(count[0]?.n ?? 0) };
}

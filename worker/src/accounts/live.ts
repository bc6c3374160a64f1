/**
 * The one definition of a live account (not deleted) and of an active one (live and not blocked), as SQL
 * predicates over `users` (docs/architecture.md §2, "accounts/"). Every query of worker/src says so through
 * these, in drizzle (`and(eq(users.id, id), liveAccounts)`) and in a `sql` template alike
 * (`sql\`... from ${users} where ${activeAccounts}\``); `test/unit/live-account.test.ts` fails on a
 * hand-written copy. The partial indexes of `schema/users.ts` keep the raw column, as an index needs.
 */
import { type AnyColumn, and, eq, isNull, type SQL } from 'drizzle-orm';
import { users } from '../../../schema/index.js';

/** The columns the predicates read: `users` itself, or an alias of it (`alias(users, 'other')`). */
export interface AccountColumns {
  deletedAt: AnyColumn;
  status: AnyColumn;
}

/** SQL: the row of `t` is a live account (not deleted). */
export function liveAccountIn(t: Pick<AccountColumns, 'deletedAt'>): SQL {
  return isNull(t.deletedAt);
}

/** SQL: the row of `t` is an active account (live, and its status `active`: not blocked). */
export function activeAccountIn(t: AccountColumns): SQL {
  return and(liveAccountIn(t), eq(t.status, 'active'))!;
}

/** SQL: the `users` row is a live account (not deleted). */
export const liveAccounts: SQL = liveAccountIn(users);

/** SQL: the `users` row is an active account (live, and not blocked). */
export const activeAccounts: SQL = activeAccountIn(users);

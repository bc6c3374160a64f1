/**
 * The last active administrator (docs/groups.md, "Roles from groups"): a role that groups or a source
 * take away at a login or the LDAP refresh is not taken from the last live, active administrator, who
 * keeps admin (audited as `user.last_admin_kept`). The check is part of the UPDATE itself, like the
 * administrators' own guard (users/admin-changes.ts), so two such logins at once cannot both demote.
 */
import { eq, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/sqlite-core';
import { users } from '../../../schema/index.js';
import type { Db } from '../store/db.js';
import { activeAccountIn, activeAccounts } from './live.js';
import type { Role } from './model.js';

const other = alias(users, 'other');
/** SQL: another live, active administrator than the `users` row at hand (a correlated subquery). */
const anotherActiveAdmin = sql`exists (select 1 from ${users} as other
  where ${other.role} = 'admin' and ${activeAccountIn(other)} and ${other.id} <> ${users.id})`;

/**
 * SQL for `users.role` in an UPDATE: `role`, except that the last live, active administrator stays
 * admin.
 */
export function roleUnlessLastAdmin(role: Role): SQL {
  if (role === 'admin') return sql`${role}`;
  return sql`case when ${users.role} = 'admin' and ${activeAccounts} and not ${anotherActiveAdmin}
    then 'admin' else ${role} end`;
}

/**
 * Whether giving `role` to the account `userId` would take admin from the last live, active
 * administrator (read before the write, to audit it; the write itself is guarded by roleUnlessLastAdmin).
 */
export async function demotesLastAdmin(db: Db, userId: string, role: Role): Promise<boolean> {
  if (role === 'admin') return false;
  const [row] = await db
    .select({ last: sql<number>`${users.role} = 'admin' and ${activeAccounts} and not ${anotherActiveAdmin}` })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  return Boolean(row?.last);
}

/** Finding live accounts (not deleted). */
import { and, eq, isNull } from 'drizzle-orm';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { users } from '../../../schema/index.js';
import type { UserRow } from './model.js';

/** The live account `id`, or undefined. */
export async function findLiveAccount(db: Db, id: string): Promise<UserRow | undefined> {
  const rows = await db
    .select()
    .from(users)
    .where(and(eq(users.id, id), isNull(users.deletedAt)))
    .limit(1);
  return rows[0];
}

/** The live account `id`, or 404. */
export async function liveAccount(db: Db, id: string): Promise<UserRow> {
  const row = await findLiveAccount(db, id);
  if (!row) throw new ProblemError('NOT_FOUND', { detail: 'no such user' });
  return row;
}

/** Whether a live administrator account exists (active or blocked). */
export async function adminExists(db: Db): Promise<boolean> {
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.role, 'admin'), isNull(users.deletedAt)))
    .limit(1);
  return rows.length > 0;
}

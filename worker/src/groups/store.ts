/**
 * Groups in libSQL (schema: groups, group_members; docs/groups.md): reads, and the local memberships'
 * changes, each with its audit event. The members' own rows are accounts/' (accounts/group-members.ts).
 */
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { groupMembers, groups, users } from '../../../schema/index.js';
import { addLocalMemberStatements, removeLocalMemberStatements } from '../accounts/group-members.js';
import { liveAccounts } from '../accounts/live.js';
import type { UserRow } from '../accounts/model.js';
import { runAccountBatch } from '../accounts/writes.js';
import { type AuditEvent, auditInsertWhen } from '../audit/events.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';

export type GroupRow = typeof groups.$inferSelect;

/** The groups with their live members counted (each account once, whatever the sources of its memberships). */
export function withMembers(db: Db) {
  const members = sql<number>`(
    select count(distinct ${groupMembers.userId}) from ${groupMembers}
    join ${users} on ${users.id} = ${groupMembers.userId}
    where ${groupMembers.groupId} = "groups"."id" and ${liveAccounts})`;
  return db.select({ group: groups, members: members.mapWith(Number) }).from(groups);
}

/** A page of the groups by name, with their live members counted, and how many there are. */
export async function groupPage(db: Db, limit: number, offset: number) {
  const [rows, [total]] = await Promise.all([
    withMembers(db).orderBy(asc(groups.nameKey)).limit(limit).offset(offset),
    db.select({ n: count() }).from(groups),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/** The group `id`, or 404. */
export async function groupById(db: Db, id: string): Promise<GroupRow> {
  const [row] = await db.select().from(groups).where(eq(groups.id, id)).limit(1);
  if (!row) throw new ProblemError('NOT_FOUND', { detail: 'no such group' });
  return row;
}

/** A page of a group's memberships of live accounts (one entry per membership), and how many there are. */
export async function memberPage(db: Db, groupId: string, limit: number, offset: number) {
  const where = and(eq(groupMembers.groupId, groupId), liveAccounts);
  const [rows, [total]] = await Promise.all([
    db
      .select({
        id: users.id,
        login: users.login,
        displayName: users.displayName,
        source: groupMembers.source,
        readAt: groupMembers.readAt,
      })
      .from(groupMembers)
      .innerJoin(users, eq(users.id, groupMembers.userId))
      .where(where)
      .orderBy(asc(users.loginKey), asc(groupMembers.source))
      .limit(limit)
      .offset(offset),
    db.select({ n: count() }).from(groupMembers).innerJoin(users, eq(users.id, groupMembers.userId)).where(where),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/**
 * Adds or removes `user`'s local membership of `g`; the event is written only when the membership changed.
 * Removing a membership the account does not have: 404.
 */
export async function changeLocalMembership(
  db: Db,
  g: GroupRow,
  user: UserRow,
  adding: boolean,
  now: number,
  who: Pick<AuditEvent, 'actor' | 'request'>,
): Promise<void> {
  const [change, ...rest] = adding
    ? addLocalMemberStatements(db, g.id, user.id, now)
    : removeLocalMemberStatements(db, g.id, user.id);
  const event = {
    stream: 'crud_admin',
    type: adding ? 'group.member_added' : 'group.member_removed',
    ...who,
    subject: user,
    data: { id: g.id, name: g.name },
  } as const;
  const [changed] = await runAccountBatch(db, [change!, auditInsertWhen(db, now, event, sql`changes() > 0`), ...rest]);
  if (!adding && changed.rowsAffected === 0)
    throw new ProblemError('NOT_FOUND', { detail: 'the account has no local membership of the group' });
}

/**
 * Group memberships (docs/groups.md) and the copy of an account's groups kept in its row
 * (`users.groups`): every change of `group_members` is built here with the statement that rewrites
 * the row of each account it touches, in one batch, so the credential lookups (which read the row)
 * see the groups of the last write, and the cached lookups of those accounts are dropped
 * (accounts/writes.ts).
 */
import { and, eq, inArray, notInArray, sql } from 'drizzle-orm';
import { groupMembers, groups, users, type GroupSource } from '../../../schema/index.js';
import type { Db } from '../store/index.js';
import { roleUnlessLastAdmin } from './last-admin.js';
import { AccountWrite, type AccountBatchItem } from './writes.js';

/** An account's group as its row keeps it: the name, and where the membership comes from. */
export type GroupOfAccount = { name: string; source: GroupSource };

/** The case-folded key of a group name: names differing in case or normalisation are one group. */
export function groupNameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/**
 * The statement rewriting `users.groups` of `userIds` from `group_members` (distinct names and
 * sources, ordered by name key and source).
 */
export function accountGroupsStatement(db: Db, userIds: readonly string[]): AccountWrite {
  return new AccountWrite(
    db.run(sql`
      update ${users} set groups = coalesce((
        select json_group_array(json_object('name', name, 'source', source)) from (
          select distinct g.name as name, m.source as source, g.name_key as k
          from ${groupMembers} m join ${groups} g on g.id = m.group_id
          where m.user_id = "users"."id"
          order by k, source)), '[]')
      where ${inArray(users.id, [...userIds])}`),
    userIds,
  );
}

/** Adds the local membership of `userId` in `groupId` (nothing when it is there). */
export function addLocalMemberStatements(db: Db, groupId: string, userId: string, now: number): AccountBatchItem[] {
  return [
    db
      .insert(groupMembers)
      .values({ groupId, userId, source: 'local', readAt: now })
      .onConflictDoNothing({ target: [groupMembers.groupId, groupMembers.userId, groupMembers.source] }),
    accountGroupsStatement(db, [userId]),
  ];
}

/** Removes the local membership of `userId` in `groupId` (a directory's or a provider's stays). */
export function removeLocalMemberStatements(db: Db, groupId: string, userId: string): AccountBatchItem[] {
  return [
    db
      .delete(groupMembers)
      .where(and(eq(groupMembers.groupId, groupId), eq(groupMembers.userId, userId), eq(groupMembers.source, 'local'))),
    accountGroupsStatement(db, [userId]),
  ];
}

/**
 * Before a group is renamed or removed: its members, whose rows the change rewrites. `then` are the
 * statements that rename or remove it (and its memberships); the rows are rewritten after them.
 */
export async function groupChangeStatements(
  db: Db,
  groupId: string,
  then: AccountBatchItem[],
  o: { removing?: boolean } = {},
): Promise<AccountBatchItem[]> {
  const members = await db
    .selectDistinct({ userId: groupMembers.userId })
    .from(groupMembers)
    .where(eq(groupMembers.groupId, groupId));
  const ids = members.map((m) => m.userId);
  return [
    ...(o.removing ? [db.delete(groupMembers).where(eq(groupMembers.groupId, groupId))] : []),
    ...then,
    ...(ids.length > 0 ? [accountGroupsStatement(db, ids)] : []),
  ];
}

/**
 * The groups a login read for `userId` from `source` (an LDAP server record or an OIDC provider,
 * `sourceName`), replacing the ones read before: groups not known yet are created (source and
 * record of the first reader); the account's memberships of that source become exactly these.
 * Read at each login: nothing read earlier outlives a later login that no longer lists it.
 */
export function externalGroupsStatements(
  db: Db,
  userId: string,
  source: Exclude<GroupSource, 'local'>,
  sourceName: string,
  names: readonly string[],
  now: number,
): AccountBatchItem[] {
  const byKey = new Map(names.map((n) => [groupNameKey(n), n]));
  const keys = [...byKey.keys()];
  const statements: AccountBatchItem[] = [];
  if (keys.length > 0) {
    statements.push(
      db
        .insert(groups)
        .values(
          [...byKey].map(([nameKey, name]) => ({
            id: crypto.randomUUID(),
            name,
            nameKey,
            source,
            sourceName,
            createdAt: now,
            updatedAt: now,
          })),
        )
        .onConflictDoNothing({ target: groups.nameKey }),
    );
  }
  const ofThisLogin = db.select({ id: groups.id }).from(groups).where(inArray(groups.nameKey, keys));
  statements.push(
    db
      .delete(groupMembers)
      .where(
        and(
          eq(groupMembers.userId, userId),
          eq(groupMembers.source, source),
          keys.length > 0 ? notInArray(groupMembers.groupId, ofThisLogin) : undefined,
        ),
      ),
  );
  if (keys.length > 0) {
    statements.push(
      db.run(sql`
        insert into ${groupMembers} (group_id, user_id, source, read_at)
        select id, ${userId}, ${source}, ${now} from ${groups} where ${inArray(groups.nameKey, keys)}
        on conflict (group_id, user_id, source) do update set read_at = excluded.read_at`),
    );
  }
  statements.push(accountGroupsStatement(db, [userId]));
  return statements;
}

/** The groups of `userId` as its row keeps them now (after a login's batch changed them). */
export async function accountGroups(db: Db, userId: string): Promise<GroupOfAccount[]> {
  const [row] = await db.select({ groups: users.groups }).from(users).where(eq(users.id, userId)).limit(1);
  return row?.groups ?? [];
}

/**
 * The periodic refresh's narrowing of an LDAP account (docs/ldap.md, "Groups"): its memberships of
 * source ldap not in `keep` (group ids) are removed, the kept ones marked read at `now`, and its role
 * lowered to `role` when given (never the last active administrator's: last-admin.ts). Nothing is
 * ever added here: only a login widens.
 */
export function narrowLdapGroupsStatements(
  db: Db,
  userId: string,
  keep: readonly string[],
  now: number,
  role?: 'auditor' | 'user',
): AccountBatchItem[] {
  const mine = and(eq(groupMembers.userId, userId), eq(groupMembers.source, 'ldap'));
  return [
    db.delete(groupMembers).where(and(mine, keep.length > 0 ? notInArray(groupMembers.groupId, [...keep]) : undefined)),
    ...(keep.length > 0
      ? [
          db
            .update(groupMembers)
            .set({ readAt: now })
            .where(and(mine, inArray(groupMembers.groupId, [...keep]))),
        ]
      : []),
    accountGroupsStatement(db, [userId]),
    ...(role
      ? [
          new AccountWrite(
            db
              .update(users)
              .set({ role: roleUnlessLastAdmin(role), updatedAt: now })
              .where(eq(users.id, userId)),
            [userId],
          ),
        ]
      : []),
  ];
}

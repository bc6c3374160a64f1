import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.js';

/** Where a group or a membership comes from: made here, or read from a directory or an identity provider. */
export const GROUP_SOURCES = ['local', 'ldap', 'oidc'] as const;
export type GroupSource = (typeof GROUP_SOURCES)[number];

/**
 * Groups (docs/groups.md): made by an administrator (source local) or first seen at an LDAP or OIDC
 * login (source ldap or oidc, with the server record or provider that named it first). One namespace:
 * `nameKey`, the case-folded name, is unique, so a directory's group and a local group of the same
 * name are one group.
 */
export const groups = sqliteTable(
  'groups',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    nameKey: text('name_key').notNull(),
    description: text('description').notNull().default(''),
    source: text('source', { enum: GROUP_SOURCES }).notNull().default('local'),
    /** The LDAP server record or OIDC provider that named it first (ldap, oidc). */
    sourceName: text('source_name'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('groups_name_key').on(t.nameKey)],
);

/**
 * Memberships, one per (group, account, source): an administrator's (local) or one read at a login
 * (ldap, oidc; `readAt` is when). The names of an account's groups are also kept with the account
 * (`users.groups`), written in the same batch, so that authenticated requests read them for free.
 */
export const groupMembers = sqliteTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    source: text('source', { enum: GROUP_SOURCES }).notNull(),
    readAt: integer('read_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId, t.source] }), index('group_members_user').on(t.userId, t.source)],
);

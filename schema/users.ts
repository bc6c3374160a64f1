import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** The roles of an account, the one list (architecture.md §4): admin, auditor, user. */
export const ROLES = ['admin', 'auditor', 'user'] as const;

/**
 * Accounts: local (password hash) or external (an LDAP server record or an OIDC provider, named by
 * `sourceName`). `loginKey` is the case-folded login; it is unique among live (not deleted) accounts.
 * `loginSkeleton` is the key's confusable skeleton (docs/security.md, "Look-alike logins"), unique among live
 * accounts too; null until the backfill fills it (in batches after the start, docs/architecture.md §6), and left
 * null on the newer of two live accounts that already looked alike before skeletons existed (reported once per
 * process until an administrator resolves it).
 */
export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    login: text('login').notNull(),
    loginKey: text('login_key').notNull(),
    loginSkeleton: text('login_skeleton'),
    displayName: text('display_name').notNull().default(''),
    email: text('email'),
    role: text('role', { enum: ROLES }).notNull().default('user'),
    source: text('source', { enum: ['local', 'ldap', 'oidc'] })
      .notNull()
      .default('local'),
    /** The LDAP server record or OIDC provider name of an external account. */
    sourceName: text('source_name'),
    /** The directory DN or OIDC subject of an external account. */
    externalId: text('external_id'),
    status: text('status', { enum: ['active', 'blocked'] })
      .notNull()
      .default('active'),
    blockedReason: text('blocked_reason', { enum: ['admin', 'inactivity'] }),
    passwordHash: text('password_hash'),
    passwordChangedAt: integer('password_changed_at'),
    mustChangePassword: integer('must_change_password', { mode: 'boolean' }).notNull().default(false),
    lastLoginAt: integer('last_login_at'),
    /** Last login, or the moment an admin unblocked the account: the start of the inactivity period. */
    lastActivityAt: integer('last_activity_at'),
    /** Own session limit; null means AUTH_SESSIONS_DEFAULT_COUNT. */
    sessionLimit: integer('session_limit'),
    superAccessUntil: integer('super_access_until'),
    /** The language the account chose in the console (its mails follow it); null: AUTH_MAIL_LANGUAGE. */
    language: text('language', { enum: ['ru', 'en'] }),
    /**
     * The account's groups and where each membership comes from (docs/groups.md), kept here beside
     * `group_members` (rewritten in the same batch as any change of them): the credential lookups read
     * the account's row, so an authenticated request knows its groups without another query.
     */
    groups: text('groups', { mode: 'json' })
      .$type<{ name: string; source: 'local' | 'ldap' | 'oidc' }[]>()
      .notNull()
      .default([]),
    /**
     * `service`: an account that exists to own API tokens (a pipeline, a service; docs/api.md, "Service
     * accounts"): local, without a password, an address or a second factor, never signed in interactively.
     */
    kind: text('kind', { enum: ['person', 'service'] })
      .notNull()
      .default('person'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    deletedAt: integer('deleted_at'),
  },
  (t) => [
    uniqueIndex('users_live_login_key').on(t.loginKey).where(sql`${t.deletedAt} is null`),
    uniqueIndex('users_live_login_skeleton').on(t.loginSkeleton).where(sql`${t.deletedAt} is null`),
    // The live accounts still without a skeleton, oldest first: what the backfill reads, batch by batch
    // (docs/architecture.md §6, "Backfills after an upgrade"); empty once filled, but for look-alikes.
    // The accounts whose login key is not ASCII: the only keys a change of the key's folding can change, which
    // every start looks through (users/rekey-logins.ts) without reading the other accounts.
    index('users_non_ascii_login_key').on(t.id).where(sql`${t.loginKey} glob '*[^ -~]*'`),
    index('users_pending_login_skeleton')
      .on(t.createdAt, t.id)
      .where(sql`${t.loginSkeleton} is null and ${t.deletedAt} is null`),
    index('users_role_status').on(t.role, t.status),
  ],
);

/** Previous password hashes of an account (USER_PASSWORD_HISTORY_DEPTH). */
export const passwordHistory = sqliteTable(
  'password_history',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    passwordHash: text('password_hash').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('password_history_user').on(t.userId, t.createdAt)],
);

/**
 * Logins of deleted accounts, reserved until `until` (USER_LOGIN_REUSE_DAY), with their skeleton: a
 * look-alike of a reserved login is reserved too (null until the backfill fills it; computed meanwhile).
 */
export const loginReservations = sqliteTable(
  'login_reservations',
  {
    loginKey: text('login_key').primaryKey(),
    until: integer('until').notNull(),
    skeleton: text('skeleton'),
  },
  (t) => [index('login_reservations_skeleton').on(t.skeleton)],
);

import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { users } from './users.js';

/** API tokens: only the SHA-256 of the secret is stored; `prefix` identifies a token to its owner. */
export const apiTokens = sqliteTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    secretHash: text('secret_hash').notNull().unique(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    expiresAt: integer('expires_at'),
    revokedAt: integer('revoked_at'),
    /** The token's scopes (worker/src/auth/token-scopes.ts); null: every scope its owner's rights allow. */
    scopes: text('scopes', { mode: 'json' }).$type<string[]>(),
    /** The client address of the last recorded use (with lastUsedAt, at most once a minute). */
    lastUsedIp: text('last_used_ip'),
    /**
     * The protected services (names of schema/services.ts, which never change) the gate and
     * introspection admit the token for (docs/api.md, "API token audiences"); null: no audience limit.
     */
    audiences: text('audiences', { mode: 'json' }).$type<string[]>(),
  },
  (t) => [index('api_tokens_user').on(t.userId)],
);

/**
 * Login attempts per throttle key (the case-folded login with its source), known login or not.
 * A row is inserted before a password is checked, only while fewer than AUTH_FAILED_COUNT rows lie
 * in the window: that single conditional insert is what makes lockout counting atomic.
 */
export const loginAttempts = sqliteTable(
  'login_attempts',
  {
    id: text('id').primaryKey(),
    throttleKey: text('throttle_key').notNull(),
    at: integer('at').notNull(),
  },
  (t) => [index('login_attempts_key_at').on(t.throttleKey, t.at)],
);

/** A throttle key locked until `until` (AUTH_FAILED_TIMEOUT_MIN after the last counted failure). */
export const loginLocks = sqliteTable('login_locks', {
  throttleKey: text('throttle_key').primaryKey(),
  until: integer('until').notNull(),
});

/**
 * Devices whose browser holds a device cookie of the account (architecture.md §4, "Device
 * cookies"): a signed cookie is trusted only while its row lives. Deleted by a password change or
 * reset, a block and "sign out everywhere"; unused for the cookie's lifetime, purged.
 */
export const devices = sqliteTable(
  'devices',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at').notNull(),
  },
  (t) => [index('devices_user').on(t.userId)],
);

import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.js';

/**
 * Login sessions: the signed cookie (or the OAuth access token) carries the id; the row makes
 * sessions countable (AUTH_SESSIONS_*) and revocable at once.
 */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** cookie (/v3/login, /v3/login/union, OIDC) or oauth (/v3/oauth_login) */
    kind: text('kind', { enum: ['cookie', 'oauth'] }).notNull(),
    createdAt: integer('created_at').notNull(),
    lastSeenAt: integer('last_seen_at').notNull(),
    /** Absolute end (created + SESSION_ABSOLUTE_TIMEOUT_HOURS). */
    expiresAt: integer('expires_at').notNull(),
    revokedAt: integer('revoked_at'),
    userAgent: text('user_agent'),
  },
  (t) => [index('sessions_user').on(t.userId, t.createdAt)],
);

/** External identities (LDAP entry, OIDC subject) linked to an account, e.g. by /v3/login/union. */
export const userIdentities = sqliteTable(
  'user_identities',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    source: text('source', { enum: ['ldap', 'oidc'] }).notNull(),
    sourceName: text('source_name').notNull(),
    externalId: text('external_id').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('user_identities_external').on(t.source, t.sourceName, t.externalId)],
);

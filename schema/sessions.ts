import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.js';

/**
 * Why a session ended: logout, logout_all (/v3/logout/all), limit (a newer login beyond the
 * session limit), password_change (the user's own), admin_reset, password_reset (a reset through a
 * link sent by mail), block, user (ended from another session of the user), admin (ended by an
 * administrator), passkey_change (the user added or removed a passkey), second_factor (a second
 * factor of the account was added or removed).
 */
export const SESSION_END_REASONS = [
  'logout',
  'logout_all',
  'limit',
  'password_change',
  'admin_reset',
  'password_reset',
  'block',
  'user',
  'admin',
  'passkey_change',
  'second_factor',
] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

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
    /** Why it ended (set with revoked_at); tells the holder of the cookie why it is refused. */
    revokedReason: text('revoked_reason', { enum: SESSION_END_REASONS }),
    userAgent: text('user_agent'),
    /**
     * How the session was authenticated: a local password (/v3/login, /v3/oauth_login,
     * /v3/login/union), an LDAP password (/v3/login with ldapServer), an OIDC provider or a passkey
     * (/v3/login/passkey). Null for sessions started before it was recorded (treated as not
     * password-authenticated).
     */
    authMethod: text('auth_method', { enum: ['local_password', 'ldap_password', 'oidc', 'passkey'] }),
    /** When that authentication happened (issuing API tokens needs a recent password). */
    authenticatedAt: integer('authenticated_at'),
    /** When the session last passed a second factor (the login's second step, or a step-up): docs/security-mfa.md. */
    secondFactorAt: integer('second_factor_at'),
  },
  (t) => [
    index('sessions_user').on(t.userId, t.createdAt),
    // The live sessions of a user (the session limit at every login, logout-all, listings): ended
    // ones are never deleted, so without it each login read the user's whole history (architecture.md §6).
    index('sessions_user_live').on(t.userId, t.createdAt).where(sql`revoked_at is null`),
  ],
);

/**
 * External identities linked to an account (at their first login, or by /v3/login/union). The key
 * names who vouches for the identity, so that a record pointed elsewhere reaches none of the old
 * links: an OIDC identity is its provider record, the issuer (`iss`) and the subject (`sub`); an
 * LDAP identity is its server record and the entry's entryUUID / objectGUID (DN when it has neither).
 */
export const userIdentities = sqliteTable(
  'user_identities',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    source: text('source', { enum: ['ldap', 'oidc'] }).notNull(),
    sourceName: text('source_name').notNull(),
    /** OIDC: the issuer that vouched for the subject; LDAP: '' (the record and the entry's UUID are the key). */
    issuer: text('issuer').notNull().default(''),
    externalId: text('external_id').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('user_identities_key').on(t.source, t.sourceName, t.issuer, t.externalId)],
);

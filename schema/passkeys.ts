import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { users } from './users.js';

/**
 * Passkeys (WebAuthn credentials) of an account (docs/security-passkeys.md): several per account,
 * each named by its owner. `credentialId` and `publicKey` are base64url; `counter` is the last
 * signature counter seen (an assertion whose counter does not grow is refused); `transports` is the
 * JSON list the browser reported; the backup flags are those of the last registration or assertion.
 */
export const passkeys = sqliteTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credentialId: text('credential_id').notNull().unique(),
    publicKey: text('public_key').notNull(),
    counter: integer('counter').notNull().default(0),
    transports: text('transports', { mode: 'json' }).$type<string[]>().notNull().default([]),
    /** The authenticator's model (AAGUID), all zeros when it does not say. */
    aaguid: text('aaguid').notNull().default(''),
    backupEligible: integer('backup_eligible', { mode: 'boolean' }).notNull().default(false),
    backupState: integer('backup_state', { mode: 'boolean' }).notNull().default(false),
    name: text('name').notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [index('passkeys_user').on(t.userId)],
);

/**
 * WebAuthn challenges already answered (single use): a challenge is a signed, short-lived token
 * handed out by the options endpoints and stored nowhere; its id is written here when a response
 * to it is checked, so a second response to the same challenge is refused. Purged once expired.
 */
export const passkeyChallengesUsed = sqliteTable(
  'passkey_challenges_used',
  {
    id: text('id').primaryKey(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('passkey_challenges_used_expiry').on(t.expiresAt)],
);

import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { users } from './users.js';

/**
 * An account's TOTP factor (docs/security-mfa.md): one per account. The secret is sealed
 * (worker/src/store/secret-box.ts) so that a dump alone does not reveal it. Unconfirmed until the
 * first valid code; `lastStep` is the last accepted time step: a code is accepted only by an UPDATE
 * that moves it forward, so no code (and no older one) is accepted twice, whichever host sees it.
 */
export const mfaTotp = sqliteTable('mfa_totp', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secretEnc: text('secret_enc').notNull(),
  createdAt: integer('created_at').notNull(),
  confirmedAt: integer('confirmed_at'),
  lastStep: integer('last_step').notNull().default(0),
  lastUsedAt: integer('last_used_at'),
});

/** Recovery codes: the SHA-256 of each single-use code; `usedAt` is set once, by a conditional UPDATE. */
export const mfaRecoveryCodes = sqliteTable(
  'mfa_recovery_codes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [index('mfa_recovery_codes_user').on(t.userId, t.codeHash)],
);

/** Pending-login tokens already used (their `jti`): a token completes at most one login. Purged after expiry. */
export const mfaPendingUses = sqliteTable(
  'mfa_pending_uses',
  {
    jti: text('jti').primaryKey(),
    userId: text('user_id').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('mfa_pending_uses_expires').on(t.expiresAt)],
);

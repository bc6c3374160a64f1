import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { users } from './users.js';

/**
 * The kinds of notification (docs/mail.md): the one list, used by the mail templates, the API's
 * `kind` enum and the console's notification filter.
 */
export const NOTIFICATION_KINDS = [
  'account_locked',
  'account_blocked_inactivity',
  'password_expiring',
  'token_expiring',
  'password_changed',
  'account_created',
  'password_reset',
  'new_device',
  'passkey_changed',
  'second_factor_changed',
  'webhook_disabled',
] as const;

/**
 * Notifications (mail) and their history, kept NOTIFICATION_EXPIRATION days. One row per mail to
 * send; `dedupe_key` is unique, so a handler or job that runs twice for the same event never makes a
 * second mail. A delivery holds `lease_until` while it sends, so two deliverers never send one row.
 */
export const notifications = sqliteTable(
  'notifications',
  {
    id: text('id').primaryKey(),
    /** One of NOTIFICATION_KINDS. */
    kind: text('kind').notNull(),
    /** The account the mail is about (no foreign key: the history outlives a deleted account). */
    userId: text('user_id'),
    userLogin: text('user_login'),
    /** The address it goes to; null when the account has none (then given_up). */
    recipient: text('recipient'),
    template: text('template').notNull(),
    language: text('language').notNull(),
    /** What the template shows (never a secret). */
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>(),
    /** A link with a single-use token, sealed (secret-box); cleared once the mail is sent or given up. */
    sealedLink: text('sealed_link'),
    /** outbox: written to the Node host's development outbox (no mail server configured), not sent. */
    status: text('status', { enum: ['pending', 'sent', 'failed', 'given_up', 'outbox'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    createdAt: integer('created_at').notNull(),
    sentAt: integer('sent_at'),
    nextAttemptAt: integer('next_attempt_at'),
    leaseUntil: integer('lease_until'),
    leaseHolder: text('lease_holder'),
    dedupeKey: text('dedupe_key').notNull().unique(),
    /** The audit event that caused it, if one did. */
    eventId: text('event_id'),
  },
  (t) => [
    index('notifications_due').on(t.status, t.nextAttemptAt).where(sql`status in ('pending', 'failed')`),
    index('notifications_created').on(t.createdAt),
    index('notifications_user').on(t.userId, t.createdAt),
  ],
);

/** Single-use links that set a password (reset by e-mail, a new account's first password): only a SHA-256 is stored. */
export const passwordResetTokens = sqliteTable(
  'password_reset_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    /** reset (requested by e-mail) or welcome (a new account). */
    purpose: text('purpose', { enum: ['reset', 'welcome'] }).notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [index('password_reset_tokens_user').on(t.userId)],
);

/** Password-reset requests per throttle key (the login or address asked for, and the client's address). */
export const passwordResetRequests = sqliteTable(
  'password_reset_requests',
  {
    id: text('id').primaryKey(),
    throttleKey: text('throttle_key').notNull(),
    at: integer('at').notNull(),
  },
  (t) => [index('password_reset_requests_key_at').on(t.throttleKey, t.at)],
);

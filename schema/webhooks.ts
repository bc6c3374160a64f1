import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Webhook subscriptions (docs/webhooks.md): where events go, which ones, and the signing secret, sealed
 * (secret-box) like every stored secret. During a rotation the previous secret signs too, until
 * `previous_secret_until`.
 */
export const webhooks = sqliteTable('webhooks', {
  id: text('id').primaryKey(),
  url: text('url').notNull(),
  /** JSON array of catalogue types, `<stream>.*` or `*` (docs/webhooks.md, "Subscriptions"). */
  eventTypes: text('event_types', { mode: 'json' }).$type<string[]>().notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  description: text('description').notNull().default(''),
  /**
   * How deliveries leave: `direct` (the host's own transport) or `bridge` (POST /v1/webhooks/deliver of the
   * bridge, for receivers behind a private CA: docs/webhooks.md, "Targets").
   */
  delivery: text('delivery', { enum: ['direct', 'bridge'] })
    .notNull()
    .default('direct'),
  /** `whsec_…`, sealed. */
  secretEnc: text('secret_enc').notNull(),
  previousSecretEnc: text('previous_secret_enc'),
  previousSecretUntil: integer('previous_secret_until'),
  /** When its deliveries began to fail (null: the last attempt succeeded, or none failed yet). */
  failingSince: integer('failing_since'),
  /** Why it was disabled by the service (gone: a 410; failing: too long failing); null when by an admin. */
  disabledReason: text('disabled_reason'),
  disabledAt: integer('disabled_at'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/**
 * One delivery per subscription and event, written with the event (a trigger on audit_outbox, in the
 * statement that writes the event: docs/webhooks.md, "At least once"). `lease_until` is held while a
 * sender sends it; a sender that dies leaves a lease that expires, and the row is sent again with the
 * same `webhook-id` (the `id`).
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    /** The `webhook-id` header: the receiver's idempotency key, the same on every attempt. */
    id: text('id').primaryKey(),
    webhookId: text('webhook_id').notNull(),
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    /** The event's time. */
    at: integer('at').notNull(),
    /** The event as recorded (columns and data); the body is built from it (webhooks/payload.ts). */
    payload: text('payload', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: integer('next_attempt_at').notNull(),
    leaseUntil: integer('lease_until'),
    leaseHolder: text('lease_holder'),
    lastAttemptAt: integer('last_attempt_at'),
    /** The HTTP status of the last attempt; null when none came (timeout, refused address). */
    lastStatus: integer('last_status'),
    lastDurationMs: integer('last_duration_ms'),
    /** The first bytes of the last answer, or the reason no answer came. */
    lastResponse: text('last_response'),
    deliveredAt: integer('delivered_at'),
    /** Given up: the schedule ran out, or the subscription answered 410. */
    failedAt: integer('failed_at'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('webhook_deliveries_due').on(t.nextAttemptAt).where(sql`delivered_at is null and failed_at is null`),
    index('webhook_deliveries_webhook').on(t.webhookId, t.createdAt),
  ],
);

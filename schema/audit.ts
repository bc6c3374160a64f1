import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Audit events, written in the same transaction as the change they record (architecture.md §5) and
 * shipped later, in batches, to the log store index of their `stream` (one per AUDIT_* pattern).
 */
export const auditOutbox = sqliteTable(
  'audit_outbox',
  {
    id: text('id').primaryKey(),
    at: integer('at').notNull(),
    /** user_activity, crud_user, crud_admin, api_access, ext_service_access, data_lifecycle */
    stream: text('stream').notNull(),
    type: text('type').notNull(),
    actorId: text('actor_id'),
    actorLogin: text('actor_login'),
    subjectId: text('subject_id'),
    subjectLogin: text('subject_login'),
    requestId: text('request_id'),
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>(),
    /** success or failure (null: not an attempt at something, e.g. a logout). */
    outcome: text('outcome', { enum: ['success', 'failure'] }),
    /** The client's address (as trusted: see the proxy rules) and User-Agent, when a request caused it. */
    sourceIp: text('source_ip'),
    userAgent: text('user_agent'),
    /** The instance that recorded it (Node: the host name; edge: "edge"). */
    host: text('host'),
    /** Delivered to the log store (or, with EVENT_HANDLING off, never). */
    shippedAt: integer('shipped_at'),
    attempts: integer('attempts').notNull().default(0),
    /** Not before this time (backoff after a 429 or 5xx of the store). */
    nextAttemptAt: integer('next_attempt_at'),
    /** Refused by the store for good (400): kept as a dead letter, never retried. */
    deadAt: integer('dead_at'),
    lastError: text('last_error'),
    /**
     * Seen by the in-service event handlers (notifications), independently of shipping: set at once
     * for events no handler reads, by the handlers for the others.
     */
    handledAt: integer('handled_at'),
    /**
     * How many events the row holds: 1, or the size of a batch of API-access events, kept as one
     * row (their list in `data.events`; worker/src/audit/api-access.ts).
     */
    events: integer('events').notNull().default(1),
  },
  (t) => [
    index('audit_outbox_unshipped').on(t.shippedAt, t.at),
    index('audit_outbox_stream_pending').on(t.stream, t.shippedAt, t.deadAt, t.at),
    index('audit_outbox_unhandled').on(t.at).where(sql`handled_at is null`),
    /**
     * The embedded audit log (no log store configured: docs/audit-logs-embedded.md): queries read a
     * stream's events by time, and its retention deletes the oldest first.
     */
    index('audit_outbox_stream_at').on(t.stream, t.at),
  ],
);

/**
 * The last measure of the audit outbox's size against its bound (worker/src/logs/size-bound.ts), one
 * row per bound (`local`, `delivered`), written by each run of the job that keeps it: GET /metrics
 * and the admin overview read it instead of measuring the table at every request.
 */
export const auditStoreSize = sqliteTable('audit_store_size', {
  store: text('store').primaryKey(),
  measuredAt: integer('measured_at').notNull(),
  /** Estimated bytes of the rows under the bound (after the run's trim). */
  bytes: integer('bytes').notNull(),
  maxBytes: integer('max_bytes').notNull(),
  /** Estimated bytes of the whole outbox (undelivered events too). */
  outboxBytes: integer('outbox_bytes').notNull(),
});

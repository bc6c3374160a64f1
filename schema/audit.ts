import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Audit events, written in the same transaction as the change they record (DESIGN.md §7) and
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
    shippedAt: integer('shipped_at'),
    attempts: integer('attempts').notNull().default(0),
  },
  (t) => [index('audit_outbox_unshipped').on(t.shippedAt, t.at)],
);

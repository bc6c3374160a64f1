/** The audit trail's periodic jobs: shipping the outbox to the log store, and its retention. */
import { and, asc, inArray, isNotNull, lt } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { Job } from '../jobs/job.js';
import { auditOutbox } from '../../../schema/index.js';
import { SHIPPING_JOB } from './pipeline.js';
import { shipOutbox } from './shipper.js';
import { logstoreTarget } from './target.js';

const DAY_MS = 86_400_000;

/** Ships what is due of the outbox (architecture.md §5); every minute, whoever fires the schedule. */
export const shipAuditOutbox: Job = {
  name: SHIPPING_JOB,
  everyMs: 30_000,
  leaseMs: 10 * 60_000,
  async run(scope) {
    const r = await shipOutbox(scope);
    return { delivered: r.delivered, retried: r.retried, dead: r.dead, unreachable: r.unreachable };
  },
};

/**
 * Deletes events delivered more than OUTBOX_RETENTION_DAY days ago, and says so in the data-lifecycle
 * stream. Undelivered events and dead letters are kept: nothing is lost before it reached the store;
 * so are events the notification handlers have not seen yet (handled_at).
 */
export const purgeAuditOutbox: Job = {
  name: 'purge-audit-outbox',
  async run({ db, config, now: clock }) {
    const now = clock();
    const days = config.get('OUTBOX_RETENTION_DAY');
    const old = and(
      isNotNull(auditOutbox.shippedAt),
      lt(auditOutbox.shippedAt, now - days * DAY_MS),
      isNotNull(auditOutbox.handledAt),
    );
    const [purged] = await db.batch([db.delete(auditOutbox).where(old).returning({ events: auditOutbox.events })]);
    // Events, not rows: a row of batched API-access events holds many.
    const events = purged.reduce((n, row) => n + row.events, 0);
    if (events > 0) {
      await auditInsert(db, now, {
        stream: 'data_lifecycle',
        type: 'outbox.purged',
        data: { events, retentionDays: days },
      });
    }
    return { purged: events };
  },
};

/** Rows the embedded audit log's retention deletes per statement, and statements per run. */
export const LOCAL_PURGE_BATCH = 1_000;
const LOCAL_PURGE_BATCHES = 50;

/**
 * The retention of the embedded audit log (docs/audit-logs-embedded.md): while no log store is
 * configured, nothing is ever delivered, so the outbox is the audit log; events older than
 * AUDIT_LOCAL_RETENTION_DAYS are deleted, oldest first, in batches of LOCAL_PURGE_BATCH rows (a
 * long backlog takes several runs, never one long write), with an `outbox.purged` event. Events the
 * notification handlers have not seen yet are kept. With a log store configured it does nothing:
 * the events wait for their delivery, and purge-audit-outbox deletes them after it.
 */
export const purgeLocalAuditLog: Job = {
  name: 'purge-local-audit-log',
  async run({ db, config, now: clock }) {
    const now = clock();
    if (logstoreTarget(config)) return { purged: 0 };
    const days = config.get('AUDIT_LOCAL_RETENTION_DAYS');
    const old = and(lt(auditOutbox.at, now - days * DAY_MS), isNotNull(auditOutbox.handledAt));
    let events = 0;
    for (let i = 0; i < LOCAL_PURGE_BATCHES; i++) {
      const ids = await db
        .select({ id: auditOutbox.id })
        .from(auditOutbox)
        .where(old)
        .orderBy(asc(auditOutbox.at))
        .limit(LOCAL_PURGE_BATCH);
      if (ids.length === 0) break;
      const purged = await db
        .delete(auditOutbox)
        .where(
          inArray(
            auditOutbox.id,
            ids.map((r) => r.id),
          ),
        )
        .returning({ events: auditOutbox.events });
      // Events, not rows: a row of batched API-access events holds many.
      events += purged.reduce((n, row) => n + row.events, 0);
      if (ids.length < LOCAL_PURGE_BATCH) break;
    }
    if (events > 0) {
      await auditInsert(db, now, {
        stream: 'data_lifecycle',
        type: 'outbox.purged',
        data: { events, retentionDays: days, store: 'local' },
      });
    }
    return { purged: events };
  },
};

/** The audit trail's periodic jobs: shipping the outbox to the log store, and its retention. */
import { and, isNotNull, lt } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { Job } from '../jobs/job.js';
import { auditOutbox } from '../../../schema/index.js';
import { SHIPPING_JOB } from './pipeline.js';
import { shipOutbox } from './shipper.js';

const DAY_MS = 86_400_000;

/** Ships what is due of the outbox (architecture.md §5); every minute, whoever fires the schedule. */
export const shipAuditOutbox: Job = {
  name: SHIPPING_JOB,
  everyMs: 30_000,
  leaseMs: 10 * 60_000,
  async run({ db, config, now, logger, bridge }) {
    const r = await shipOutbox({ db, config, now, logger, bridge });
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
  async run({ db, config, now }) {
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

/**
 * The size bound of the audit outbox (docs/audit-logs-embedded.md, "Size bound"): besides the age
 * bounds (AUDIT_LOCAL_RETENTION_DAYS, OUTBOX_RETENTION_DAY), the events the outbox may delete are
 * kept within a size:
 *
 * - without a log store (the embedded audit log) every event the handlers have seen, within
 *   AUDIT_LOCAL_MAX_MB;
 * - with a log store, the events already delivered, within OUTBOX_DELIVERED_MAX_MB (undelivered events
 *   and dead letters are never deleted: nothing is lost before it reached the store).
 *
 * Past the bound the oldest are deleted first, down to TRIM_TO of it (so that a full store is not
 * trimmed at every run), in batches of TRIM_BATCH rows, and each trim is recorded as an
 * `outbox.trimmed` event in the data-lifecycle stream with what was deleted (how many events, their
 * time range). The size is an estimate from the rows (their text, and ROW_OVERHEAD_BYTES per row
 * for the key, the numbers and the indexes), computed by the database in one scan of the table: the
 * same query on the embedded file and on a remote libSQL. Each run's measure is kept in
 * `audit_store_size`, where GET /metrics and the admin overview read it (`auditStoreState`).
 *
 * Free pages: after a trim, a database created with `auto_vacuum = INCREMENTAL` (the Node host sets
 * it on a new embedded file) gives its free pages back to the file system (`PRAGMA incremental_vacuum`);
 * any other keeps them and reuses them for new rows, so the file stops growing at the bound instead of
 * shrinking (a VACUUM with the service stopped shrinks it; docs/audit-logs-embedded.md).
 */
import { and, asc, eq, inArray, isNotNull, sql, type SQL } from 'drizzle-orm';
import { auditOutbox, auditStoreSize } from '../../../schema/index.js';
import { auditInsert } from '../audit/events.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Job } from '../jobs/job.js';
import type { Db } from '../store/index.js';
import { logstoreTarget } from './target.js';

export const SIZE_BOUND_JOB = 'bound-audit-store';
/** Bytes counted per row beyond its text: the key, the numbers, four index entries. */
export const ROW_OVERHEAD_BYTES = 160;
/** A trim deletes down to this share of the bound. */
export const TRIM_TO = 0.9;
/** The share of the bound at which the metrics and the overview warn. */
export const WARN_AT = 0.8;
/** Rows deleted per statement, and statements per run. */
export const TRIM_BATCH = 1_000;
const TRIM_BATCHES = 50;
const MB = 1024 * 1024;

/** The estimated bytes of a row of the outbox (see the module comment). */
const rowBytes = sql<number>`(coalesce(length(cast(${auditOutbox.data} as blob)), 0) + length(${auditOutbox.id})
  + length(${auditOutbox.stream}) + length(${auditOutbox.type}) + coalesce(length(${auditOutbox.actorId}), 0)
  + coalesce(length(${auditOutbox.actorLogin}), 0) + coalesce(length(${auditOutbox.subjectId}), 0)
  + coalesce(length(${auditOutbox.subjectLogin}), 0) + coalesce(length(${auditOutbox.requestId}), 0)
  + coalesce(length(${auditOutbox.sourceIp}), 0) + coalesce(length(cast(${auditOutbox.userAgent} as blob)), 0)
  + coalesce(length(${auditOutbox.host}), 0) + coalesce(length(${auditOutbox.lastError}), 0)
  + ${ROW_OVERHEAD_BYTES})`;

/** Which bound applies now, and to which rows. */
function boundOf(config: ConfigSnapshot): { store: 'local' | 'delivered'; maxBytes: number; rows: SQL } {
  if (logstoreTarget(config))
    return {
      store: 'delivered',
      maxBytes: config.get('OUTBOX_DELIVERED_MAX_MB') * MB,
      rows: and(isNotNull(auditOutbox.shippedAt), isNotNull(auditOutbox.handledAt))!,
    };
  return { store: 'local', maxBytes: config.get('AUDIT_LOCAL_MAX_MB') * MB, rows: isNotNull(auditOutbox.handledAt) };
}

/** The state of the bound as the last run measured it (`audit_store_size`). */
export interface AuditStoreState {
  store: 'local' | 'delivered';
  /** The estimated bytes of the rows under the bound, after the run's trim. */
  bytes: number;
  maxBytes: number;
  /** The whole outbox (undelivered events too), estimated alike. */
  outboxBytes: number;
  /** Whether `bytes` reached WARN_AT of `maxBytes`. */
  warning: boolean;
  measuredAt: number;
}

/** The last measure of the bound that applies now; null before the job's first run. */
export async function auditStoreState(db: Db, config: ConfigSnapshot): Promise<AuditStoreState | null> {
  const { store } = boundOf(config);
  const [row] = await db.select().from(auditStoreSize).where(eq(auditStoreSize.store, store));
  if (!row) return null;
  return {
    store,
    bytes: row.bytes,
    maxBytes: row.maxBytes,
    outboxBytes: row.outboxBytes,
    warning: row.bytes >= row.maxBytes * WARN_AT,
    measuredAt: row.measuredAt,
  };
}

/** Gives the free pages back to the file system when the database allows it; how many it gave. */
async function incrementalVacuum(db: Db): Promise<number> {
  try {
    const mode = await db.all<{ auto_vacuum: number }>(sql`PRAGMA auto_vacuum`);
    if (Number(mode[0]?.auto_vacuum) !== 2) return 0;
    const before = await db.all<{ freelist_count: number }>(sql`PRAGMA freelist_count`);
    // executeMultiple runs it to its end: it yields a row per page freed, and a prepared statement
    // stepped once (run) would stay open, holding the write lock.
    await db.$client.executeMultiple('PRAGMA incremental_vacuum');
    return Number(before[0]?.freelist_count ?? 0);
  } catch {
    // A remote libSQL may refuse pragmas: its free pages are reused for new rows.
    return 0;
  }
}

/**
 * Measures the outbox and trims the rows under the bound, oldest first, when they exceed it
 * (see the module comment). Runs every few minutes under its lease, whoever fires the schedule.
 */
export const boundAuditStore: Job = {
  name: SIZE_BOUND_JOB,
  async run({ db, config, now: clock, logger }) {
    const now = clock();
    const { store, maxBytes, rows } = boundOf(config);
    const total = async (where?: SQL) => {
      const [r] = await db
        .select({ bytes: sql<number | null>`sum(${rowBytes})` })
        .from(auditOutbox)
        .where(where);
      return Number(r?.bytes ?? 0);
    };
    let bytes = await total(rows);
    let events = 0;
    let freed = 0;
    let first: number | undefined;
    let last: number | undefined;
    if (bytes > maxBytes) {
      let excess = bytes - Math.floor(maxBytes * TRIM_TO);
      for (let i = 0; i < TRIM_BATCHES && excess > 0; i++) {
        const oldest = await db
          .select({ id: auditOutbox.id, at: auditOutbox.at, bytes: rowBytes })
          .from(auditOutbox)
          .where(rows)
          .orderBy(asc(auditOutbox.at), asc(auditOutbox.id))
          .limit(TRIM_BATCH);
        if (oldest.length === 0) break;
        const picked: string[] = [];
        for (const r of oldest) {
          if (excess <= 0) break;
          picked.push(r.id);
          excess -= Number(r.bytes);
          freed += Number(r.bytes);
          first ??= r.at;
          last = r.at;
        }
        const deleted = await db
          .delete(auditOutbox)
          .where(inArray(auditOutbox.id, picked))
          .returning({ events: auditOutbox.events });
        // Events, not rows: a row of API-access events or aggregates holds many.
        events += deleted.reduce((n, r) => n + r.events, 0);
      }
      bytes -= freed;
      await auditInsert(db, now, {
        stream: 'data_lifecycle',
        type: 'outbox.trimmed',
        data: {
          events,
          bytes: freed,
          maxMB: maxBytes / MB,
          store,
          ...(first !== undefined ? { from: new Date(first).toISOString(), to: new Date(last!).toISOString() } : {}),
        },
      });
      logger.warning('audit store over its size bound: the oldest events were deleted', {
        store,
        events,
        bytes: freed,
        maxBytes,
      });
    } else if (bytes >= maxBytes * WARN_AT) {
      logger.warning('audit store near its size bound', { store, bytes, maxBytes });
    }
    const pages = events > 0 ? await incrementalVacuum(db) : 0;
    const outboxBytes = store === 'local' ? bytes : await total();
    const measure = { store, measuredAt: now, bytes, maxBytes, outboxBytes };
    await db.insert(auditStoreSize).values(measure).onConflictDoUpdate({ target: auditStoreSize.store, set: measure });
    return {
      bytes,
      maxBytes,
      outboxBytes,
      trimmed: events,
      freedPages: pages,
    };
  },
};

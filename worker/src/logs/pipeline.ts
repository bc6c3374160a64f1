/**
 * Health of the audit pipeline (docs/audit-logs.md, "Pipeline health"): per stream, what waits in the outbox for the
 * log store (undelivered and not dead), how old the oldest such event is, how many dead letters the store
 * refused for good, and the last delivery error; and the last run of the shipping job. Counts are
 * of events: a row of batched API-access events counts its `events`.
 */
import { eq, sql } from 'drizzle-orm';
import { auditOutbox, jobLeases } from '../../../schema/index.js';
import type { Db } from '../store/index.js';
import { STREAMS, type StreamName } from './streams.js';
import { isoOrNull } from '../http/iso-time.js';

/** The lease name of the job that ships the outbox. */
export const SHIPPING_JOB = 'ship-audit-outbox' as const;

export interface StreamPipeline {
  stream: StreamName;
  /** Undelivered events that will still be tried. */
  depth: number;
  oldestUndeliveredAt: string | null;
  oldestUndeliveredAgeSeconds: number | null;
  deadLetters: number;
  /** The error of the undelivered or dead event that failed most recently. */
  lastError: string | null;
}

export interface ShippingJobRun {
  lastRunAt: string | null;
  lastDurationMs: number | null;
  /** What the run reported (its JSON result, or its error text). */
  lastResult: unknown;
  /** A run holds the lease now. */
  running: boolean;
}

const ageSeconds = (now: number, at: number | null) =>
  at === null ? null : Math.max(0, Math.floor((now - at) / 1000));

/** The outbox per stream, every stream listed (zeros when it holds nothing). */
export async function streamPipelines(db: Db, now: number): Promise<StreamPipeline[]> {
  const counts = await db
    .select({
      stream: auditOutbox.stream,
      depth: sql<number>`sum(case when ${auditOutbox.deadAt} is null then ${auditOutbox.events} else 0 end)`,
      oldest: sql<number | null>`min(case when ${auditOutbox.deadAt} is null then ${auditOutbox.at} end)`,
      dead: sql<number>`sum(case when ${auditOutbox.deadAt} is not null then ${auditOutbox.events} else 0 end)`,
    })
    .from(auditOutbox)
    // Shipped rows never count (the rows read here are the undelivered ones, dead or not).
    .where(sql`${auditOutbox.shippedAt} is null`)
    .groupBy(auditOutbox.stream);
  // The latest failure per stream: a dead letter at its death, a pending retry at its last failure
  // (its next attempt is scheduled from then, so the latest next_attempt_at is the latest failure).
  const errors = await db.all<{ stream: string; last_error: string }>(sql`
    select stream, last_error from (
      select ${auditOutbox.stream} as stream, ${auditOutbox.lastError} as last_error,
             row_number() over (partition by ${auditOutbox.stream}
               order by coalesce(${auditOutbox.deadAt}, ${auditOutbox.nextAttemptAt}, ${auditOutbox.at}) desc) as n
      from ${auditOutbox}
      where ${auditOutbox.shippedAt} is null and ${auditOutbox.lastError} is not null
    ) where n = 1`);
  const byStream = new Map(counts.map((r) => [r.stream, r]));
  const errorOf = new Map(errors.map((r) => [r.stream, r.last_error]));
  return (Object.keys(STREAMS) as StreamName[]).map((stream) => {
    const r = byStream.get(stream);
    const oldest = r?.oldest === null || r?.oldest === undefined ? null : Number(r.oldest);
    return {
      stream,
      depth: Number(r?.depth ?? 0),
      oldestUndeliveredAt: isoOrNull(oldest),
      oldestUndeliveredAgeSeconds: ageSeconds(now, oldest),
      deadLetters: Number(r?.dead ?? 0),
      lastError: errorOf.get(stream) ?? null,
    };
  });
}

/** The last run of the shipping job, or null when it never ran here. */
export async function shippingJobRun(db: Db, now: number): Promise<ShippingJobRun | null> {
  const [row] = await db.select().from(jobLeases).where(eq(jobLeases.name, SHIPPING_JOB)).limit(1);
  if (!row) return null;
  let result: unknown = row.lastResult;
  if (typeof row.lastResult === 'string') {
    try {
      result = JSON.parse(row.lastResult);
    } catch {
      // not JSON: an error text, shown as it is
    }
  }
  const running =
    row.until > now &&
    (row.lastRunAt === null || row.lastDurationMs === null || row.until !== row.lastRunAt + row.lastDurationMs);
  return {
    lastRunAt: isoOrNull(row.lastRunAt),
    lastDurationMs: row.lastDurationMs,
    lastResult: result ?? null,
    running,
  };
}

/** The summary /health/ready reports: every stream together. */
export async function pipelineSummary(
  db: Db,
  now: number,
): Promise<{ depth: number; oldestUndeliveredAgeSeconds: number | null }> {
  const [row] = await db
    .select({
      depth: sql<number>`coalesce(sum(${auditOutbox.events}), 0)`,
      oldest: sql<number | null>`min(${auditOutbox.at})`,
    })
    .from(auditOutbox)
    .where(sql`${auditOutbox.shippedAt} is null and ${auditOutbox.deadAt} is null`);
  const oldest = row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest);
  return { depth: Number(row?.depth ?? 0), oldestUndeliveredAgeSeconds: ageSeconds(now, oldest) };
}

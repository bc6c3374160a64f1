/**
 * Shipping the audit outbox to the log store (architecture.md §5), exactly once in effect:
 *
 * - Batches of OUTBOX_BATCH_SIZE events per stream go through the bridge as `_bulk` `create`
 *   actions, each with the event id as `_id`, into the dated index of the event's own timestamp.
 *   A retry therefore targets the same index and id, and the store's 409 means "already
 *   delivered": a lost answer never produces a duplicate.
 * - 201/200/409 items are delivered. 429 and 5xx items are retried with exponential backoff and
 *   jitter. Items the store refuses for good (any other 4xx: mapping or parse errors) become dead
 *   letters: kept, counted, visible to administrators, never retried and never blocking the rest.
 * - Order is kept per stream: events are offered oldest first, and an event waiting for its retry
 *   holds back every newer event of its stream (other streams go on).
 * - When the bridge or the store cannot be reached at all, the batch waits with backoff; the outbox
 *   keeps everything, however long the outage, and drains after.
 */
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { BridgeClient } from '../bridge/client.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Logger } from '../http/logger.js';
import { backoffMs, type Backoff } from '../jobs/backoff.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { auditOutbox } from '../../../schema/index.js';
import { LogstoreBulkResponseSchema, type LogstoreBulkResponse } from '../../../schema/bridge/index.js';
import { toLogDocument, type OutboxRow } from './document.js';
import { datedIndex, STREAMS, streamPattern, type StreamName } from './streams.js';
import { logstoreTarget } from './target.js';

export interface ShipScope {
  db: Db;
  config: ConfigSnapshot;
  bridge?: BridgeClient;
  now: number;
  logger?: Logger;
  /** Random numbers in [0, 1) for the jitter (tests pin it). */
  random?: () => number;
}

export interface ShipResult {
  delivered: number;
  retried: number;
  dead: number;
  /** Batches that could not reach the store at all. */
  unreachable: number;
}

/** First retry after 5 s, doubling up to an hour. */
const BACKOFF: Backoff = { baseMs: 5_000, maxMs: 3_600_000 };
/** Batches per stream in one run, so a long backlog drains without one run holding on for ever. */
const MAX_BATCHES_PER_STREAM = 50;

const delivered = (status: number) => (status >= 200 && status < 300) || status === 409;
const retryable = (status: number) => status === 429 || status >= 500;

/** Ships what is due of every stream; does nothing while the store or the bridge is not configured. */
export async function shipOutbox(s: ShipScope): Promise<ShipResult> {
  const result: ShipResult = { delivered: 0, retried: 0, dead: 0, unreachable: 0 };
  const target = logstoreTarget(s.config);
  if (!s.config.get('EVENT_HANDLING') || !target || !s.bridge) return result;
  const batch = s.config.get('OUTBOX_BATCH_SIZE');
  for (const stream of Object.keys(STREAMS) as StreamName[]) {
    for (let n = 0; n < MAX_BATCHES_PER_STREAM; n++) {
      const more = await shipBatch(s, stream, batch, target, result);
      if (!more) break;
    }
  }
  return result;
}

/** Ships one batch of `stream`; true when a full batch went through and more may be waiting. */
async function shipBatch(
  s: ShipScope,
  stream: StreamName,
  size: number,
  target: NonNullable<ReturnType<typeof logstoreTarget>>,
  result: ShipResult,
): Promise<boolean> {
  const { db, now } = s;
  const pending = await db
    .select()
    .from(auditOutbox)
    .where(and(eq(auditOutbox.stream, stream), isNull(auditOutbox.shippedAt), isNull(auditOutbox.deadAt)))
    .orderBy(asc(auditOutbox.at), sql`rowid`)
    .limit(size);
  // Order per stream: only the run of events that are due, from the oldest on.
  const due: OutboxRow[] = [];
  for (const row of pending) {
    if (row.nextAttemptAt !== null && row.nextAttemptAt > now) break;
    due.push(row);
  }
  if (due.length === 0) return false;

  const pattern = streamPattern(s.config, stream);
  let answer: LogstoreBulkResponse;
  try {
    answer = await s.bridge!.call(
      '/v1/logstore/bulk',
      {
        ...target,
        items: due.map((row) => ({ index: datedIndex(pattern, row.at), id: row.id, document: toLogDocument(row) })),
      },
      LogstoreBulkResponseSchema,
      target.timeoutMs * Math.max(1, target.urls.length) + 5_000,
    );
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    // The bridge or the store could not be reached: the whole batch waits, in order.
    result.unreachable++;
    await postpone(s, due, `${err.status} ${err.detail ?? err.title}`);
    s.logger?.warning('audit shipping: the log store could not be reached; the events wait in the outbox', {
      stream,
      events: due.length,
      status: err.status,
    });
    return false;
  }

  const byId = new Map(answer.items.map((i) => [i.id, i]));
  const done: string[] = [];
  const dead: Array<{ id: string; error: string }> = [];
  const retry: OutboxRow[] = [];
  for (const row of due) {
    const item = byId.get(row.id);
    const status = item?.status ?? 502;
    if (delivered(status)) done.push(row.id);
    else if (retryable(status) || !item) retry.push(row);
    else
      dead.push({
        id: row.id,
        error: `${status} ${item.error?.type ?? ''}: ${item.error?.reason ?? ''}`.slice(0, 1000),
      });
  }
  const writes = [];
  if (done.length)
    writes.push(db.update(auditOutbox).set({ shippedAt: now, lastError: null }).where(inArray(auditOutbox.id, done)));
  for (const d of dead)
    writes.push(
      db
        .update(auditOutbox)
        .set({ deadAt: now, lastError: d.error, attempts: sql`${auditOutbox.attempts} + 1` })
        .where(eq(auditOutbox.id, d.id)),
    );
  if (writes.length) await db.batch(writes as [(typeof writes)[0], ...typeof writes]);
  if (retry.length)
    await postpone(
      s,
      retry,
      retry
        .map((r) => `${byId.get(r.id)?.status ?? 'missing'}`)
        .join(',')
        .slice(0, 200),
    );
  result.delivered += done.length;
  result.dead += dead.length;
  result.retried += retry.length;
  if (dead.length)
    s.logger?.warning('audit shipping: events refused by the log store for good (dead letters)', {
      stream,
      events: dead.length,
    });
  return retry.length === 0 && due.length === size;
}

/** Counts an attempt on each row and sets its next try after the backoff. */
async function postpone(s: ShipScope, rows: OutboxRow[], error: string): Promise<void> {
  const writes = rows.map((row) =>
    s.db
      .update(auditOutbox)
      .set({
        attempts: row.attempts + 1,
        nextAttemptAt: s.now + backoffMs(BACKOFF, row.attempts + 1, s.random),
        lastError: error,
      })
      .where(eq(auditOutbox.id, row.id)),
  );
  if (writes.length) await s.db.batch(writes as [(typeof writes)[0], ...typeof writes]);
}

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
import type { Scope } from '../http/scope.js';
import { backoffMs, type Backoff } from '../jobs/backoff.js';
import { ProblemError } from '../http/problem.js';
import { auditOutbox } from '../../../schema/index.js';
import { LogstoreBulkResponseSchema, type LogstoreBulkResponse } from '../../../schema/bridge/index.js';
import { outboxEvents } from '../audit/api-access.js';
import type { OutboxRow } from '../audit/events.js';
import { toLogDocument } from './document.js';
import { datedIndex, STREAMS, streamPattern, type StreamName } from './streams.js';
import { logstoreTarget } from './target.js';

/** What a run needs of the scope (a logger is optional: tests and benchmarks run without one). */
type ShipScope = Pick<Scope, 'db' | 'config' | 'bridge' | 'now'> &
  Partial<Pick<Scope, 'logger'>> & {
    /** Random numbers in [0, 1) for the jitter (tests pin it). */
    random?: () => number;
  };

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
  // One instant for the whole run: what is due, and the time of every delivery, dead letter and retry.
  const now = s.now();
  for (const stream of Object.keys(STREAMS) as StreamName[]) {
    for (let n = 0; n < MAX_BATCHES_PER_STREAM; n++) {
      const more = await shipBatch(s, now, stream, batch, target, result);
      if (!more) break;
    }
  }
  return result;
}

type BulkItem = LogstoreBulkResponse['items'][number];

/**
 * Ships the rows due of `stream` (at most `size`), their events in bulk requests of at most `size`
 * documents (a row of batched API-access events holds many: audit/api-access.ts). A row is
 * delivered when all its events are; it waits for a retry when one of them may still get through
 * (429, 5xx, no answer); otherwise its refused events are dead letters: a one-event row itself, or
 * for a batch, each refused event as a row of its own (the rest of the batch is delivered). True
 * when a full set of rows went through and more may be waiting.
 */
async function shipBatch(
  s: ShipScope,
  now: number,
  stream: StreamName,
  size: number,
  target: NonNullable<ReturnType<typeof logstoreTarget>>,
  result: ShipResult,
): Promise<boolean> {
  const { db } = s;
  const pending = await db
    .select()
    .from(auditOutbox)
    .where(and(eq(auditOutbox.stream, stream), isNull(auditOutbox.shippedAt), isNull(auditOutbox.deadAt)))
    .orderBy(asc(auditOutbox.at), sql`rowid`)
    .limit(size);
  // Order per stream: only the run of rows that are due, from the oldest on.
  const due: OutboxRow[] = [];
  for (const row of pending) {
    if (row.nextAttemptAt !== null && row.nextAttemptAt > now) break;
    due.push(row);
  }
  if (due.length === 0) return false;

  const pattern = streamPattern(s.config, stream);
  const eventsOf = new Map(due.map((row) => [row, outboxEvents(row)]));
  const documents = [...eventsOf.values()].flat();
  const answered = new Map<string, BulkItem>();
  let unreachable: string | undefined;
  for (let i = 0; i < documents.length && unreachable === undefined; i += size) {
    const chunk = documents.slice(i, i + size);
    try {
      const answer = await s.bridge!.call(
        '/v1/logstore/bulk',
        {
          ...target,
          items: chunk.map((e) => ({ index: datedIndex(pattern, e.at), id: e.id, document: toLogDocument(e) })),
        },
        LogstoreBulkResponseSchema,
        target.timeoutMs * Math.max(1, target.urls.length) + 5_000,
      );
      for (const item of answer.items) answered.set(item.id, item);
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
      // The bridge or the store could not be reached: what was not answered waits, in order.
      result.unreachable++;
      unreachable = `${err.status} ${err.detail ?? err.title}`;
      s.logger?.warning('audit shipping: the log store could not be reached; the events wait in the outbox', {
        stream,
        events: documents.length - i,
        status: err.status,
      });
    }
  }

  const done: string[] = [];
  const dead: Array<{ row: OutboxRow; event: OutboxRow; error: string }> = [];
  const retry: OutboxRow[] = [];
  const retryStatus: string[] = [];
  let deliveredEvents = 0;
  let retriedEvents = 0;
  for (const [row, events] of eventsOf) {
    const items = events.map((e) => answered.get(e.id));
    const waiting = items.findIndex((item) => !item || retryable(item.status));
    if (waiting >= 0) {
      retry.push(row);
      retryStatus.push(`${items[waiting]?.status ?? 'missing'}`);
      // Asked to retry (429, 5xx, an item missing from the answer), not merely unreachable.
      if (items[waiting] || unreachable === undefined) retriedEvents += events.length;
      continue;
    }
    let refused = 0;
    events.forEach((event, i) => {
      const item = items[i]!;
      if (delivered(item.status)) deliveredEvents++;
      else {
        refused++;
        const error = `${item.status} ${item.error?.type ?? ''}: ${item.error?.reason ?? ''}`.slice(0, 1000);
        dead.push({ row, event, error });
      }
    });
    // A one-event row refused for good is itself the dead letter; any other row is delivered.
    const isDeadLetter = refused > 0 && events.length === 1 && events[0] === row;
    if (!isDeadLetter) done.push(row.id);
  }
  const writes = [];
  if (done.length)
    writes.push(db.update(auditOutbox).set({ shippedAt: now, lastError: null }).where(inArray(auditOutbox.id, done)));
  for (const { row, event, error } of dead)
    writes.push(
      event === row
        ? db
            .update(auditOutbox)
            .set({ deadAt: now, lastError: error, attempts: sql`${auditOutbox.attempts} + 1` })
            .where(eq(auditOutbox.id, row.id))
        : db
            .insert(auditOutbox)
            .values({ ...event, nextAttemptAt: null, deadAt: now, lastError: error, attempts: row.attempts + 1 })
            .onConflictDoNothing({ target: auditOutbox.id }),
    );
  if (writes.length) await db.batch(writes as [(typeof writes)[0], ...typeof writes]);
  if (retry.length) await postpone(s, now, retry, unreachable ?? retryStatus.join(',').slice(0, 200));
  result.delivered += deliveredEvents;
  result.dead += dead.length;
  result.retried += retriedEvents;
  if (dead.length)
    s.logger?.warning('audit shipping: events refused by the log store for good (dead letters)', {
      stream,
      events: dead.length,
    });
  return retry.length === 0 && due.length === size;
}

/** Counts an attempt on each row and sets its next try after the backoff. */
async function postpone(s: ShipScope, now: number, rows: OutboxRow[], error: string): Promise<void> {
  const writes = rows.map((row) =>
    s.db
      .update(auditOutbox)
      .set({
        attempts: row.attempts + 1,
        nextAttemptAt: now + backoffMs(BACKOFF, row.attempts + 1, s.random),
        lastError: error,
      })
      .where(eq(auditOutbox.id, row.id)),
  );
  if (writes.length) await s.db.batch(writes as [(typeof writes)[0], ...typeof writes]);
}

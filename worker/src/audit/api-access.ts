/**
 * API-access events (architecture.md §5.1, docs/audit-logs.md "API access"): what every request
 * authenticated with per-request credentials (Basic or Bearer) did. They are by far the most frequent
 * events, so they never cost the request a database write, and most of them are not kept one per
 * request:
 *
 * - a successful read (status below 400, method GET, HEAD or OPTIONS) joins the **aggregate** of its
 *   account, credential (Basic, or the API token's id), method, path, status, client address and
 *   User-Agent in the current window of AUDIT_API_ACCESS_WINDOW_SEC (aligned on the clock): one
 *   `api.request` event per aggregate, with `count` and the `first` and `last` time, written when the
 *   window has ended (a row of them lists them in `data.aggregates`). A steady client costs one event
 *   per minute instead of one per request.
 * - a refusal (status 400 or more) or a write (any other method) is an `api.request` event of its own
 *   (per-request detail), buffered and written within a second, as before.
 *
 * Both reach the outbox after the response (edge: `waitUntil` of the request that fills or ages the
 * buffer, or that comes after the window ended; Node: a timer), a batch as ONE outbox row (the events
 * as lists of values in `data.events`, their number in `events`). The shipper sends each event of a
 * row as its own document with its own id (`outboxEvents`).
 *
 * What a crash can lose: the aggregates of the current window (at most AUDIT_API_ACCESS_WINDOW_SEC of
 * successful reads) and the per-request events of the last `maxDelayMs` (on the edge, also those of
 * an isolate evicted before its next request; on the Node host, whose batches commit without an fsync
 * through its lazy connection, a power failure also those since the database's last fsync). That is
 * acceptable for this stream and not for the others: such an event records a request that changed
 * nothing the security events do not record, and the request still has its access-log line; every
 * security event (logins, refusals, locks, changes) is written in the same transaction as the change
 * it records and is never buffered.
 */
import type { Db } from '../store/index.js';
import { auditOutbox } from '../../../schema/index.js';
import type { AuditEventType, AuditStream } from './catalogue.js';
import { batchEventIds, type OutboxRow } from './events.js';

export interface ApiAccessEvent {
  at: number;
  user: { id: string; login: string };
  method: 'basic' | 'bearer';
  httpMethod: string;
  path: string;
  status: number;
  requestId: string;
  sourceIp: string | null;
  userAgent: string | null;
  /** The API token used (Bearer), never the token itself. */
  tokenId?: string;
}

export interface ApiAccessRecorder {
  /**
   * Records one request; `background` runs the write it may start after the response. `windowMs`:
   * the aggregation window of successful reads (AUDIT_API_ACCESS_WINDOW_SEC); 0 keeps every request as
   * its own event.
   */
  record(e: ApiAccessEvent, background: (work: () => Promise<unknown>) => void, windowMs?: number): void;
  /** Writes what is due: the per-request events waiting, and the aggregates of windows that ended (timer). */
  flushDue(): Promise<void>;
  /** Writes everything, the aggregates of the current window too (shutdown, tests). */
  flush(): Promise<void>;
  /** Events waiting in memory: per-request events and aggregates. */
  pending(): number;
}

export interface RecorderOptions {
  db: () => Db;
  /** The instance that records (host.name of the documents). */
  host: string;
  /** Flush when this many per-request events wait (default 200). */
  maxEvents?: number;
  /** Flush when the oldest per-request event has waited this long (default 1 s). */
  maxDelayMs?: number;
  /** Aggregates held in memory at most: beyond, they are written before their window ends (default 1,000). */
  maxAggregates?: number;
  clock?: () => number;
  onError?: (err: unknown, lost: number) => void;
}

/** The default window of AUDIT_API_ACCESS_WINDOW_SEC, for callers without configuration. */
export const DEFAULT_WINDOW_MS = 60_000;

/** Events per outbox row (a longer batch takes several rows, in one transaction). */
const EVENTS_PER_ROW = 500;

/**
 * An event of a batch row, as kept in its `data.events`: a list of values rather than an object,
 * so that the names are not stored 200 times per row (the row holds stream, type and host).
 */
type BatchedEvent = [
  id: string,
  at: number,
  actorId: string,
  actorLogin: string,
  requestId: string,
  sourceIp: string | null,
  userAgent: string | null,
  method: ApiAccessEvent['method'],
  httpMethod: string,
  path: string,
  status: number,
  tokenId?: string,
];

/**
 * An aggregate, as kept in a batch row's `data.aggregates`: the first request's values (its time and
 * request id), then how many requests and the last one's time.
 */
type BatchedAggregate = [
  id: string,
  first: number,
  actorId: string,
  actorLogin: string,
  firstRequestId: string,
  sourceIp: string | null,
  userAgent: string | null,
  method: ApiAccessEvent['method'],
  httpMethod: string,
  path: string,
  status: number,
  count: number,
  last: number,
  tokenId?: string,
];

/** Successful requests of these methods are aggregated; any other is a write, recorded one by one. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request joins an aggregate (a successful read) rather than being an event of its own. */
export function isAggregated(e: Pick<ApiAccessEvent, 'httpMethod' | 'status'>): boolean {
  return e.status < 400 && SAFE_METHODS.has(e.httpMethod);
}

interface Aggregate {
  /** When its window ends. */
  end: number;
  first: ApiAccessEvent;
  count: number;
  last: number;
}

function toBatched(e: ApiAccessEvent, id: string): BatchedEvent {
  const values: BatchedEvent = [
    id,
    e.at,
    e.user.id,
    e.user.login,
    e.requestId,
    e.sourceIp,
    e.userAgent,
    e.method,
    e.httpMethod,
    e.path,
    e.status,
  ];
  if (e.tokenId) values.push(e.tokenId);
  return values;
}

function toBatchedAggregate(a: Aggregate, id: string): BatchedAggregate {
  const e = a.first;
  const values: BatchedAggregate = [
    id,
    e.at,
    e.user.id,
    e.user.login,
    e.requestId,
    e.sourceIp,
    e.userAgent,
    e.method,
    e.httpMethod,
    e.path,
    e.status,
    a.count,
    a.last,
  ];
  if (e.tokenId) values.push(e.tokenId);
  return values;
}

/**
 * The events an outbox row holds, each as a row of its own: the row itself, or for a batch of
 * API-access events one per event (`data.events`) or per aggregate (`data.aggregates`), with the batch's
 * stream, type, host and shipping state.
 */
export function outboxEvents(row: OutboxRow): OutboxRow[] {
  const aggregated = row.stream === 'api_access' ? row.data?.aggregates : undefined;
  if (Array.isArray(aggregated))
    return (aggregated as BatchedAggregate[]).map(
      ([
        id,
        at,
        actorId,
        actorLogin,
        requestId,
        sourceIp,
        userAgent,
        method,
        httpMethod,
        path,
        status,
        count,
        last,
        tokenId,
      ]) => ({
        ...row,
        id,
        at,
        actorId,
        actorLogin,
        requestId,
        outcome: 'success',
        sourceIp,
        userAgent,
        data: {
          method,
          httpMethod,
          path,
          status,
          count,
          first: new Date(at).toISOString(),
          last: new Date(last).toISOString(),
          ...(tokenId ? { tokenId } : {}),
        },
        events: 1,
      }),
    );
  const batched = row.stream === 'api_access' ? row.data?.events : undefined;
  if (!Array.isArray(batched)) return [row];
  return (batched as BatchedEvent[]).map(
    ([id, at, actorId, actorLogin, requestId, sourceIp, userAgent, method, httpMethod, path, status, tokenId]) => ({
      ...row,
      id,
      at,
      actorId,
      actorLogin,
      requestId,
      outcome: status < 400 ? 'success' : 'failure',
      sourceIp,
      userAgent,
      data: tokenId ? { method, httpMethod, path, status, tokenId } : { method, httpMethod, path, status },
      events: 1,
    }),
  );
}

/** The key of a request's aggregate: everything an auditor tells requests apart by, but the time. */
function aggregateKey(e: ApiAccessEvent, windowStart: number): string {
  return [
    windowStart,
    e.user.id,
    e.method,
    e.tokenId ?? '',
    e.httpMethod,
    e.status,
    e.sourceIp ?? '',
    e.path,
    e.userAgent ?? '',
  ].join('\u0000');
}

/** Creates the in-memory recorder of API-access events. */
export function createApiAccessRecorder(o: RecorderOptions): ApiAccessRecorder {
  const maxEvents = o.maxEvents ?? 200;
  const maxDelayMs = o.maxDelayMs ?? 1_000;
  const maxAggregates = o.maxAggregates ?? 1_000;
  const clock = o.clock ?? Date.now;
  let buffer: ApiAccessEvent[] = [];
  let oldest = 0;
  let aggregates = new Map<string, Aggregate>();
  /** The earliest end of a window with aggregates in memory. */
  let nextEnd = Number.POSITIVE_INFINITY;

  // One row per batch (per EVENTS_PER_ROW events), all of a flush in one transaction. No handler
  // reads API-access events (audit/handled-types.ts): handled_at is set at once.
  const write = async (events: ApiAccessEvent[], closed: Aggregate[]) => {
    const db = o.db();
    const nextId = batchEventIds(clock());
    const rows: Array<typeof auditOutbox.$inferInsert> = [];
    const add = (kind: 'events' | 'aggregates', at: number, values: unknown[]) =>
      rows.push({
        id: nextId(),
        at,
        stream: 'api_access' satisfies AuditStream,
        type: 'api.request' satisfies AuditEventType,
        data: { [kind]: values },
        host: o.host,
        handledAt: at,
        events: values.length,
      });
    for (let i = 0; i < events.length; i += EVENTS_PER_ROW) {
      const chunk = events.slice(i, i + EVENTS_PER_ROW);
      add(
        'events',
        chunk[0]!.at,
        chunk.map((e) => toBatched(e, nextId())),
      );
    }
    // A row's time is its first event's (the embedded audit log narrows its queries by it).
    closed.sort((a, b) => a.first.at - b.first.at);
    for (let i = 0; i < closed.length; i += EVENTS_PER_ROW) {
      const chunk = closed.slice(i, i + EVENTS_PER_ROW);
      add(
        'aggregates',
        chunk[0]!.first.at,
        chunk.map((a) => toBatchedAggregate(a, nextId())),
      );
    }
    if (rows.length === 0) return;
    const inserts = rows.map((row) => db.insert(auditOutbox).values(row));
    await db.batch(inserts as [(typeof inserts)[0], ...typeof inserts]);
  };

  /** Takes the aggregates whose window ended by `now` (all with Infinity) out of memory. */
  const takeClosed = (now: number): Aggregate[] => {
    if (now < nextEnd) return [];
    const closed: Aggregate[] = [];
    const open = new Map<string, Aggregate>();
    let end = Number.POSITIVE_INFINITY;
    for (const [k, a] of aggregates) {
      if (a.end <= now) closed.push(a);
      else {
        open.set(k, a);
        end = Math.min(end, a.end);
      }
    }
    aggregates = open;
    nextEnd = end;
    return closed;
  };

  const flushUpTo = async (now: number) => {
    const closed = takeClosed(now);
    if (buffer.length === 0 && closed.length === 0) return;
    const events = buffer;
    buffer = [];
    try {
      await write(events, closed);
    } catch (err) {
      o.onError?.(err, events.length + closed.reduce((n, a) => n + a.count, 0));
    }
  };
  const flushDue = () => flushUpTo(clock());
  const flushAll = () => flushUpTo(Number.POSITIVE_INFINITY);

  return {
    record(e, background, windowMs = DEFAULT_WINDOW_MS) {
      const now = clock();
      if (windowMs > 0 && isAggregated(e)) {
        const start = e.at - (e.at % windowMs);
        const key = aggregateKey(e, start);
        const a = aggregates.get(key);
        if (a) {
          a.count++;
          if (e.at > a.last) a.last = e.at;
        } else {
          aggregates.set(key, { end: start + windowMs, first: e, count: 1, last: e.at });
          nextEnd = Math.min(nextEnd, start + windowMs);
          // Memory stays bounded: many distinct aggregates (a script walking thousands of paths)
          // are written before their window ends, each with its count so far.
          if (aggregates.size >= maxAggregates) {
            background(flushAll);
            return;
          }
        }
        if (now >= nextEnd) background(flushDue);
        return;
      }
      if (buffer.length === 0) oldest = now;
      buffer.push(e);
      if (buffer.length >= maxEvents || now - oldest >= maxDelayMs || now >= nextEnd) background(flushDue);
    },
    flushDue,
    flush: flushAll,
    pending: () => buffer.length + aggregates.size,
  };
}

/**
 * API-access events (architecture.md §5): one per request authenticated with per-request credentials
 * (Basic or Bearer). They are by far the most frequent events, so they never cost the request a
 * database write: they wait in memory and reach the outbox after the response (edge: `waitUntil`
 * of the request that fills or ages the batch; Node: a timer), a batch as ONE outbox row (its
 * events listed in `data.events`, their number in `events`). A row per event cost about 15 µs of
 * SQLite work per Bearer request (four B-trees: the table, its key and two indexes), a sixth of the
 * request (architecture.md §6); a row per batch costs a fraction of a microsecond per event. The shipper
 * sends each event of a batch as its own document with its own id (`outboxEvents`), so the log
 * store, the logs endpoints and the dead letters still see one event per request.
 *
 * What a crash can lose: the events of the last `maxDelayMs` (and, on the edge, those of an isolate
 * evicted before its next request; on the Node host, whose batches commit without an fsync through
 * its lazy connection, a power failure also those since the database's last fsync). That is
 * acceptable for this stream and not for the others: an API-access event records a read that
 * changed nothing, and the request that caused it still has its access-log line; every security
 * event (logins, refusals, locks, changes) is written in the same transaction as the change it
 * records and is never buffered.
 */
import type { Db } from '../store/index.js';
import { auditOutbox } from '../../../schema/index.js';
import type { AuditEventType, AuditStream } from './catalogue.js';
import type { OutboxRow } from './events.js';

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
  /** Buffers one event; `background` runs the flush it may start after the response. */
  record(e: ApiAccessEvent, background: (work: () => Promise<unknown>) => void): void;
  /** Writes whatever is buffered (shutdown, tests). */
  flush(): Promise<void>;
  /** Events waiting in memory. */
  pending(): number;
}

export interface RecorderOptions {
  db: () => Db;
  /** The instance that records (host.name of the documents). */
  host: string;
  /** Flush when this many events wait (default 200). */
  maxEvents?: number;
  /** Flush when the oldest event has waited this long (default 1 s). */
  maxDelayMs?: number;
  clock?: () => number;
  onError?: (err: unknown, lost: number) => void;
}

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
 * Event ids for one batch, time-ordered (UUIDv7 layout: the batch's time in ms, then a sequence number
 * within the batch, then 48 random bits per batch). Random UUIDs land all over the outbox's primary
 * key index; these are appended at its end, which halved the cost of writing an event (architecture.md §6).
 * Unique: two batches differ by time or by their random bits, two events of a batch by sequence.
 */
export function batchEventIds(now: number): () => string {
  const r = crypto.getRandomValues(new Uint8Array(6));
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  const t = hex(now, 12);
  const tail = Array.from(r, (b) => hex(b, 2)).join('');
  const head = `${t.slice(0, 8)}-${t.slice(8, 12)}-7`;
  let seq = 0;
  return () => {
    const s = seq++;
    // 26 bits of sequence: 12 in rand_a, 14 after the variant bits (10).
    return `${head}${hex((s >>> 14) & 0xfff, 3)}-${hex(0x8000 | (s & 0x3fff), 4)}-${tail}`;
  };
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

/**
 * The events an outbox row holds, each as a row of its own: the row itself, or for a batch of
 * API-access events one per event, with the batch's stream, type, host and shipping state.
 */
export function outboxEvents(row: OutboxRow): OutboxRow[] {
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

/** Creates the in-memory recorder of API-access events. */
export function createApiAccessRecorder(o: RecorderOptions): ApiAccessRecorder {
  const maxEvents = o.maxEvents ?? 200;
  const maxDelayMs = o.maxDelayMs ?? 1_000;
  const clock = o.clock ?? Date.now;
  let buffer: ApiAccessEvent[] = [];
  let oldest = 0;

  // One row per batch (per EVENTS_PER_ROW events), all of a flush in one transaction. No handler
  // reads API-access events (audit/handled-types.ts): handled_at is set at once.
  const write = async (events: ApiAccessEvent[]) => {
    const db = o.db();
    const nextId = batchEventIds(clock());
    const rows: Array<typeof auditOutbox.$inferInsert> = [];
    for (let i = 0; i < events.length; i += EVENTS_PER_ROW) {
      const chunk = events.slice(i, i + EVENTS_PER_ROW);
      const id = nextId();
      const at = chunk[0]!.at;
      rows.push({
        id,
        at,
        stream: 'api_access' satisfies AuditStream,
        type: 'api.request' satisfies AuditEventType,
        data: { events: chunk.map((e) => toBatched(e, nextId())) },
        host: o.host,
        handledAt: at,
        events: chunk.length,
      });
    }
    const inserts = rows.map((row) => db.insert(auditOutbox).values(row));
    await db.batch(inserts as [(typeof inserts)[0], ...typeof inserts]);
  };

  const flush = async () => {
    if (buffer.length === 0) return;
    const events = buffer;
    buffer = [];
    try {
      await write(events);
    } catch (err) {
      o.onError?.(err, events.length);
    }
  };

  return {
    record(e, background) {
      if (buffer.length === 0) oldest = clock();
      buffer.push(e);
      if (buffer.length >= maxEvents || clock() - oldest >= maxDelayMs) background(flush);
    },
    flush,
    pending: () => buffer.length,
  };
}

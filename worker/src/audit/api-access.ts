/**
 * API-access events (architecture.md §5): one per request authenticated with per-request credentials
 * (Basic or Bearer). They are by far the most frequent events, so they never cost the request a
 * database write: they wait in memory and reach the outbox in one transaction per batch, after
 * the response (edge: `waitUntil` of the request that fills or ages the batch; Node: a timer).
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
  record(e: ApiAccessEvent, background: (p: Promise<unknown>) => void): void;
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

/** Events written per transaction. */
const ROWS_PER_TRANSACTION = 500;

/** Rows per INSERT: a batch is cut greedily into these sizes (few distinct statements to keep prepared). */
const ROWS_PER_STATEMENT = [64, 16, 4, 1] as const;

/** The INSERT of `rows` API-access events (stream api_access, type api.request), 11 parameters per row. */
function insertEvents(rows: number): string {
  const row = "(?, ?, 'api_access', 'api.request', ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  return (
    'insert into "audit_outbox" ("id", "at", "stream", "type", "actor_id", "actor_login", "request_id", "data", ' +
    `"outcome", "source_ip", "user_agent", "host", "handled_at") values ${Array(rows).fill(row).join(', ')}`
  );
}
const INSERTS = new Map(ROWS_PER_STATEMENT.map((n) => [n, insertEvents(n)]));

/**
 * Event ids for one batch, time-ordered (UUIDv7 layout: the batch's time in ms, then a sequence number
 * within the batch, then 48 random bits per batch). Random UUIDs land all over the outbox's primary
 * key index; these are appended at its end, which halved the cost of writing an event (issue 15).
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

/** Appends the 11 parameters of one event's row. */
function pushEventArgs(args: Array<string | number | null>, e: ApiAccessEvent, id: string, host: string): void {
  const data = e.tokenId
    ? { method: e.method, httpMethod: e.httpMethod, path: e.path, status: e.status, tokenId: e.tokenId }
    : { method: e.method, httpMethod: e.httpMethod, path: e.path, status: e.status };
  const outcome = e.status < 400 ? 'success' : 'failure';
  // No handler reads API-access events (audit/handled-types.ts): handled_at is set at once.
  const json = JSON.stringify(data);
  args.push(id, e.at, e.user.id, e.user.login, e.requestId, json, outcome, e.sourceIp, e.userAgent, host, e.at);
}

/** Creates the in-memory recorder of API-access events. */
export function createApiAccessRecorder(o: RecorderOptions): ApiAccessRecorder {
  const maxEvents = o.maxEvents ?? 200;
  const maxDelayMs = o.maxDelayMs ?? 1_000;
  const clock = o.clock ?? Date.now;
  let buffer: ApiAccessEvent[] = [];
  let oldest = 0;

  // Parameterised multi-row INSERTs of a few fixed sizes, their text built once (on the Node host they
  // stay prepared): a statement per event cost more in binding and stepping than the row itself, and
  // drizzle's builder spent tens of microseconds per event (issue 15).
  const write = async (events: ApiAccessEvent[]) => {
    const client = o.db().$client;
    const nextId = batchEventIds(clock());
    for (let i = 0; i < events.length; i += ROWS_PER_TRANSACTION) {
      const chunk = events.slice(i, i + ROWS_PER_TRANSACTION);
      const statements: Array<{ sql: string; args: Array<string | number | null> }> = [];
      let at = 0;
      for (const size of ROWS_PER_STATEMENT) {
        for (; chunk.length - at >= size; at += size) {
          const args: Array<string | number | null> = [];
          for (const e of chunk.slice(at, at + size)) pushEventArgs(args, e, nextId(), o.host);
          statements.push({ sql: INSERTS.get(size)!, args });
        }
      }
      await client.batch(statements, 'write');
    }
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
      if (buffer.length >= maxEvents || clock() - oldest >= maxDelayMs) background(flush());
    },
    flush,
    pending: () => buffer.length,
  };
}

/**
 * API-access events (architecture.md §5): one per request authenticated with per-request credentials
 * (Basic or Bearer). They are by far the most frequent events, so they never cost the request a
 * database write: they wait in memory and reach the outbox in one transaction per batch, after
 * the response (edge: `waitUntil` of the request that fills or ages the batch; Node: a timer).
 *
 * What a crash can lose: the events of the last `maxDelayMs` (and, on the edge, those of an isolate
 * evicted before its next request). That is acceptable for this stream and not for the others: an
 * API-access event records a read that changed nothing, and the request that caused it still has its
 * access-log line; every security event (logins, refusals, locks, changes) is written in the same
 * transaction as the change it records and is never buffered.
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
const ROWS_PER_INSERT = 500;

/** The row of one API-access event (stream api_access, type api.request). */
const INSERT_EVENT =
  'insert into "audit_outbox" ("id", "at", "stream", "type", "actor_id", "actor_login", "request_id", "data", ' +
  '"outcome", "source_ip", "user_agent", "host", "handled_at") ' +
  "values (?, ?, 'api_access', 'api.request', ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/** Creates the in-memory recorder of API-access events. */
export function createApiAccessRecorder(o: RecorderOptions): ApiAccessRecorder {
  const maxEvents = o.maxEvents ?? 200;
  const maxDelayMs = o.maxDelayMs ?? 1_000;
  const clock = o.clock ?? Date.now;
  let buffer: ApiAccessEvent[] = [];
  let oldest = 0;

  // One parameterised single-row INSERT, run for each event of a batch in one transaction: drizzle's
  // builder spent tens of microseconds per event on a multi-row INSERT (issue 15), while this text
  // is built once and, on the Node host, stays prepared.
  const write = async (events: ApiAccessEvent[]) => {
    const client = o.db().$client;
    for (let i = 0; i < events.length; i += ROWS_PER_INSERT) {
      const statements = events.slice(i, i + ROWS_PER_INSERT).map((e) => {
        const data = { method: e.method, httpMethod: e.httpMethod, path: e.path, status: e.status };
        const json = JSON.stringify(e.tokenId ? { ...data, tokenId: e.tokenId } : data);
        const outcome = e.status < 400 ? 'success' : 'failure';
        // No handler reads API-access events (audit/handled-types.ts): handled_at is set at once.
        const args = [crypto.randomUUID(), e.at, e.user.id, e.user.login, e.requestId, json, outcome];
        return { sql: INSERT_EVENT, args: [...args, e.sourceIp, e.userAgent, o.host, e.at] };
      });
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

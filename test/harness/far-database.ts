/**
 * A far database for tests and the far-db bench (docs/architecture.md §6, "A far database"): a proxy in
 * front of the libSQL dev server that delays each libSQL HTTP request (one round trip: a statement or
 * a batch) by `delayMs` and remembers when each answer went back, with its SQL. A request the
 * client's answer waited for finished before that answer; work after the answer finishes later.
 * A batch of API-access events (audit/api-access.ts) is flagged: it holds earlier requests' events, written in
 * the background (Node: a timer; edge: after a later answer), so no answer waits for it even when it finishes
 * within one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startLibsqlDevServer } from '../../scripts/libsql-dev-server.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { BASE_TEST_ENV } from './hosts.js';

export interface FarDatabase {
  url: string;
  /** The round trips that finished between `since` and `until` (performance.now() times). */
  between(since: number, until: number): RoundTrip[];
  /** Every round trip so far. */
  count(): number;
  /** Resolves once no request has been in flight for `quietMs` (work left behind by earlier answers). */
  settle(quietMs?: number): Promise<void>;
  /** While true, every request's connection is reset unanswered, as a network that lost the database. */
  cut(on: boolean): void;
  close(): Promise<void>;
}

/** One libSQL HTTP request: when its answer went back, the start of its SQL, and whether it wrote API-access events. */
export interface RoundTrip {
  at: number;
  sql: string;
  apiAccess: boolean;
}

export async function farDatabase(target: string, delayMs: number): Promise<FarDatabase> {
  const finished: RoundTrip[] = [];
  let inFlight = 0;
  let lastEnd = 0;
  let cut = false;
  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    if (cut) {
      req.socket.resetAndDestroy();
      return;
    }
    inFlight++;
    res.once('close', () => {
      inFlight--;
      lastEnd = performance.now();
    });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const answer = await fetch(new URL(req.url ?? '/', target), {
      method: req.method,
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
      body,
    });
    const bytes = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    const text = body?.toString() ?? '';
    const apiAccess = text.includes('"value":"api_access"');
    res.end(bytes, () => finished.push({ at: performance.now(), sql: text.slice(0, 300), apiAccess }));
  };
  // A request still in flight when the suite stops the database (a background refresh) just fails.
  const server: Server = createServer((req, res) => {
    forward(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    between: (since, until) => finished.filter((f) => f.at >= since && f.at <= until),
    count: () => finished.length,
    async settle(quietMs = 300) {
      while (inFlight > 0 || performance.now() - lastEnd < quietMs) await new Promise((r) => setTimeout(r, 50));
    },
    cut: (on) => {
      cut = on;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A libSQL dev server with a migrated database of its own, as a remote database (Turso, sqld) is for
 * the Node host: hosts reach it through a `farDatabase` proxy in front of it.
 */
export async function remoteDatabase(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const sqld = await startLibsqlDevServer({ path: join(dir, 'auth.db') });
  const config = parseEnvironment({ ...BASE_TEST_ENV, LIBSQL_URL: sqld.url });
  const database = openDatabase(config);
  await migrateDatabase(database.db, config.get('DB_SCHEMA'));
  database.close();
  return { url: sqld.url, close: () => sqld.close() };
}

/**
 * An edge isolate's first requests against a far database (docs/architecture.md §6, "A far
 * database"): every libSQL HTTP request is a round trip, counted here by a proxy in front of the
 * libSQL dev server. Liveness reads nothing; any other first request makes one round trip (the
 * DB_SCHEMA stamp, whether an administrator exists and the saved settings, in one batch) before the
 * app runs; the next request within the settings' freshness makes none of its own.
 * The Node host reads all that once at start, so this suite runs on the edge host only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const edge = inject('hostKind') === 'edge';

/**
 * A proxy in front of the libSQL dev server that delays each request by DELAY ms (a far database) and
 * remembers when each answer went back: a request the answer waited for finished before it; work
 * after the answer (the outbox and notification kicks) finishes later.
 */
const DELAY = 400;
async function farDatabase(target: string) {
  const finished: { at: number; sql: string }[] = [];
  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    await new Promise((resolve) => setTimeout(resolve, DELAY));
    const answer = await fetch(new URL(req.url ?? '/', target), {
      method: req.method,
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
      body,
    });
    const bytes = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(bytes, () => finished.push({ at: performance.now(), sql: body?.toString().slice(0, 300) ?? '' }));
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
    /** The round trips that finished between `since` and `until` (performance.now() times). */
    between: (since: number, until: number) => finished.filter((f) => f.at >= since && f.at <= until),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Sends a request and returns its status and the round trips its answer waited for. */
async function roundTrips(path: string) {
  const since = performance.now();
  const res = await call(path, { base: second.url });
  await res.arrayBuffer();
  const trips = proxy.between(since, performance.now());
  return { status: res.status, trips: trips.length, sql: trips.map((t) => t.sql) };
}

let first: RunningHost;
let second: RunningHost;
let proxy: Awaited<ReturnType<typeof farDatabase>>;

describe.runIf(edge)('an edge isolate on a far database', () => {
  beforeAll(async () => {
    first = await startTestHost('edge');
    // Its first request creates the bootstrap administrator: the database is then as in production.
    expect((await call('/health/ready', { base: first.url })).status).toBe(200);
    proxy = await farDatabase(first.libsqlUrl);
    second = await startTestHost('edge', {}, { libsqlUrl: proxy.url });
  });

  afterAll(async () => {
    await second?.stop();
    await proxy?.close();
    await first?.stop();
  });

  it('liveness reads nothing; the first other request waits for one round trip; the next one for none', async () => {
    expect(await roundTrips('/health/live')).toMatchObject({ status: 200, trips: 0 });
    const anonymous = await roundTrips('/v4/users/me');
    expect(anonymous.status).toBe(401);
    expect(anonymous.trips, anonymous.sql.join('\n')).toBe(1);
    expect(await roundTrips('/v4/users/me')).toMatchObject({ status: 401, trips: 0 });
  });
});

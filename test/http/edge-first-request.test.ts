/**
 * An edge isolate's first requests against a far database (docs/architecture.md §6, "A far
 * database"): every libSQL HTTP request is a round trip, counted here by a proxy in front of the
 * libSQL dev server. Liveness reads nothing; any other first request makes one round trip (the
 * DB_SCHEMA stamp, whether an administrator exists and the saved settings, in one batch) before the
 * app runs; the next request within the settings' freshness makes none of its own.
 * The Node host reads all that once at start, so this suite runs on the edge host only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const edge = inject('hostKind') === 'edge';

/** A counting HTTP proxy in front of the libSQL dev server. */
async function countingProxy(target: string): Promise<{ url: string; count: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server: Server = createServer(async (req, res) => {
    requests++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(new URL(req.url ?? '/', target), {
      method: req.method,
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    count: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe.runIf(edge)('an edge isolate on a far database', () => {
  let first: RunningHost;
  let second: RunningHost;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;

  beforeAll(async () => {
    first = await startTestHost('edge');
    // Its first request creates the bootstrap administrator: the database is then as in production.
    expect((await call('/health/ready', { base: first.url })).status).toBe(200);
    proxy = await countingProxy(first.libsqlUrl);
    second = await startTestHost('edge', {}, { libsqlUrl: proxy.url });
  });

  afterAll(async () => {
    await second?.stop();
    await proxy?.close();
    await first?.stop();
  });

  it('liveness reads nothing; the first other request makes one round trip; the next one none', async () => {
    const before = proxy.count();
    expect((await call('/health/live', { base: second.url })).status).toBe(200);
    expect(proxy.count() - before).toBe(0);
    const anonymous = await call('/v4/users/me', { base: second.url });
    expect(anonymous.status).toBe(401);
    expect(proxy.count() - before).toBe(1);
    expect((await call('/v4/users/me', { base: second.url })).status).toBe(401);
    expect(proxy.count() - before).toBe(1);
  });
});

/**
 * The fuzz's sender (test/harness/fuzz-run.ts): a first attempt without an answer within
 * `firstWaitMs` is sent once more on a new connection (the edge host's `wrangler dev` proxy holds a
 * request back now and then until its client gives up; docs/architecture.md, "Testing").
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendFuzzRequest } from '../harness/fuzz-run.js';

let server: Server | undefined;
const agent = new Agent({ keepAlive: true });

afterEach(async () => {
  agent.destroy();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

/** A server that holds the requests `held` picks by number (no answer until the client leaves); others get 200. */
async function serve(held: (n: number) => boolean): Promise<{ origin: string; seen: () => number }> {
  let n = 0;
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    n += 1;
    req.resume();
    if (!held(n)) res.end(`answer ${n}`);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen: () => n };
}

describe('sendFuzzRequest', () => {
  it('sends a request held past firstWaitMs once more, and returns the second answer', async () => {
    const { origin, seen } = await serve((n) => n === 1);
    const t0 = Date.now();
    const answer = await sendFuzzRequest(
      origin,
      agent,
      { method: 'GET', target: '/', headers: [] },
      { firstWaitMs: 300 },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('answer 2');
    expect(seen()).toBe(2);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('sends an answered request once', async () => {
    const { origin, seen } = await serve(() => false);
    const answer = await sendFuzzRequest(
      origin,
      agent,
      { method: 'GET', target: '/', headers: [] },
      { firstWaitMs: 300 },
    );
    expect(answer.status).toBe(200);
    expect(seen()).toBe(1);
  });

  it('reports a request held on the second attempt too as unanswered (status 0)', async () => {
    const { origin, seen } = await serve(() => true);
    // The second attempt waits the full minute: stop it sooner by closing the server's connections.
    setTimeout(() => server?.closeAllConnections(), 1_000);
    const answer = await sendFuzzRequest(
      origin,
      agent,
      { method: 'GET', target: '/', headers: [] },
      { firstWaitMs: 300 },
    );
    expect(answer.status).toBe(0);
    expect(seen()).toBe(2);
  });
});

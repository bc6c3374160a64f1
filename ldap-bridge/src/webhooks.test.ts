/**
 * The bridge's webhook relay (POST /v1/webhooks/deliver) against a real HTTPS receiver whose certificate comes
 * from a throwaway CA (test/harness/ingest-server.ts): the CA bundle, the allow-list on resolved addresses, no
 * redirect, the answer's first bytes, the timeout.
 */
import type { LookupAddress } from 'node:dns';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startIngestServer, type IngestServer } from '../../test/harness/ingest-server.js';
import { buildBridge } from './app.js';
import { allowList, webhookOptionsFromEnv, type WebhookRelayOptions } from './webhooks.js';

let ingest: IngestServer;
const apps: FastifyInstance[] = [];

beforeAll(async () => {
  ingest = await startIngestServer();
});
afterAll(async () => {
  await ingest?.stop();
});
beforeEach(() => {
  ingest.reset();
  ingest.useOtherCa(false);
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function bridge(options: Omit<WebhookRelayOptions, 'ca'> & { ca?: string | null }) {
  const app = buildBridge({
    webhooks: { ...options, ca: options.ca === null ? undefined : (options.ca ?? ingest.caPem) },
  });
  apps.push(app);
  return (body: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/webhooks/deliver', payload: body });
}

const headers = {
  'content-type': 'application/json',
  'webhook-id': 'msg_1',
  'webhook-timestamp': '1764382800',
  'webhook-signature': 'v1,abc=',
};
const call = (url: string, o: Record<string, unknown> = {}) => ({
  url,
  headers,
  body: '{"type":"login.failure"}',
  timeoutMs: 5000,
  ...o,
});

/** A resolver of fixed answers that counts its calls. */
function resolver(answers: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<LookupAddress[]> => {
    calls.push(host);
    return (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { calls, resolve };
}

describe('POST /v1/webhooks/deliver', () => {
  it('sends the body and headers over TLS verified with BRIDGE_WEBHOOK_CA and answers the receiver', async () => {
    ingest.status = 503;
    ingest.headers = { 'Retry-After': '120' };
    ingest.answerBody = 'busy';
    const deliver = bridge({ hosts: ['127.0.0.0/8'] });
    const res = await deliver(call(`${ingest.origin}/hooks?x=1`));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 503, retryAfter: '120', body: 'busy' });
    expect(res.json().durationMs).toBeGreaterThanOrEqual(0);
    const got = ingest.received[0]!;
    expect(got.url).toBe('/hooks?x=1');
    expect(got.body.toString()).toBe('{"type":"login.failure"}');
    expect(got.headers).toMatchObject({
      'webhook-id': 'msg_1',
      'webhook-signature': 'v1,abc=',
      'content-length': '24',
    });
  });

  it('reads the answer up to WEBHOOK_ANSWER_BYTES', async () => {
    ingest.answerBody = 'x'.repeat(50_000);
    const res = await bridge({ hosts: ['127.0.0.1'] })(call(`${ingest.origin}/`));
    expect(res.json()).toMatchObject({ status: 200, body: 'x'.repeat(1024) });
  });

  it('follows no redirect: a 3xx is the answer', async () => {
    ingest.status = 307;
    ingest.headers = { location: `${ingest.origin}/elsewhere` };
    const res = await bridge({ hosts: ['127.0.0.1'] })(call(`${ingest.origin}/here`));
    expect(res.json()).toMatchObject({ status: 307 });
    expect(ingest.received.map((r) => r.url)).toEqual(['/here']);
  });

  it('refuses everything while BRIDGE_WEBHOOK_HOSTS is empty', async () => {
    const res = await bridge({ hosts: [] })(call(`${ingest.origin}/`));
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'WEBHOOK_TARGET_REFUSED' });
    expect(res.json().detail).toMatch(/BRIDGE_WEBHOOK_HOSTS is empty/);
    expect(ingest.received).toHaveLength(0);
  });

  it('refuses an address outside the allow-list without connecting', async () => {
    const res = await bridge({ hosts: ['10.0.0.0/8', 'hooks.example.com'] })(call(`${ingest.origin}/`));
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/127\.0\.0\.1 is not in BRIDGE_WEBHOOK_HOSTS/);
    expect(ingest.received).toHaveLength(0);
  });

  it('checks the resolved addresses of a name: all inside a listed range, or the name listed', async () => {
    const port = new URL(ingest.origin).port;
    // Any address outside the ranges refuses the name (a rebinding attempt, or a mistake).
    const mixed = resolver({ localhost: ['127.0.0.1', '192.168.1.20'] });
    let res = await bridge({ hosts: ['127.0.0.0/8'], resolve: mixed.resolve })(call(`https://localhost:${port}/`));
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/localhost resolves to 192\.168\.1\.20/);
    expect(ingest.received).toHaveLength(0);
    // Inside the range: sent, to the address checked, resolved once (the connection asks DNS nothing).
    const inside = resolver({ localhost: ['127.0.0.1'] });
    res = await bridge({ hosts: ['127.0.0.0/8'], resolve: inside.resolve })(call(`https://LOCALHOST.:${port}/a`));
    expect(res.json()).toMatchObject({ status: 200 });
    expect(inside.calls).toEqual(['localhost']);
    // A listed name is allowed wherever it resolves.
    const named = resolver({ localhost: ['127.0.0.1'] });
    res = await bridge({ hosts: ['localhost'], resolve: named.resolve })(call(`https://localhost:${port}/b`));
    expect(res.json()).toMatchObject({ status: 200 });
    expect(ingest.received.map((r) => r.url)).toEqual(['/a', '/b']);
  });

  it('refuses a receiver whose certificate another CA signed: 502 UPSTREAM_TLS', async () => {
    ingest.useOtherCa(true);
    const res = await bridge({ hosts: ['127.0.0.1'] })(call(`${ingest.origin}/`));
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'UPSTREAM_TLS' });
    expect(res.json().detail).toMatch(/BRIDGE_WEBHOOK_CA/);
    expect(ingest.received).toHaveLength(0);
  });

  it('refuses a private CA with the system roots alone', async () => {
    const res = await bridge({ hosts: ['127.0.0.1'], ca: null })(call(`${ingest.origin}/`));
    expect(res.json()).toMatchObject({ status: 502, code: 'UPSTREAM_TLS' });
  });

  it('times out a slow receiver: 504 UPSTREAM_TIMEOUT', async () => {
    ingest.delayMs = 3000;
    const started = Date.now();
    const res = await bridge({ hosts: ['127.0.0.1'] })(call(`${ingest.origin}/`, { timeoutMs: 300 }));
    expect(res.statusCode).toBe(504);
    expect(res.json()).toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('answers 502 UPSTREAM_UNAVAILABLE naming the error code when nothing listens', async () => {
    const port = await new Promise<number>((r) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => r(p));
      });
    });
    const res = await bridge({ hosts: ['127.0.0.1'] })(call(`https://127.0.0.1:${port}/`));
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(res.json().detail).toMatch(/ECONNREFUSED/);
  });

  it('refuses http://, credentials in the URL, and bodies outside the contract', async () => {
    const deliver = bridge({ hosts: ['127.0.0.1'] });
    for (const body of [call(`${ingest.httpOrigin}/`), call(`${ingest.origin}/`, { timeoutMs: undefined })]) {
      const res = await deliver(body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'BAD_REQUEST' });
    }
    const res = await deliver(call(`https://user:pw@${ingest.origin.slice(8)}/`));
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).not.toContain('pw');
    expect(ingest.received).toHaveLength(0);
  });
});

describe('BRIDGE_WEBHOOK_HOSTS', () => {
  it('takes names, addresses and CIDR ranges, and refuses anything else', () => {
    const env = { BRIDGE_WEBHOOK_HOSTS: 'hooks.corp.example, 10.1.0.0/16;fd00::/8 192.0.2.7' };
    expect(webhookOptionsFromEnv(env, () => '').hosts).toEqual([
      'hooks.corp.example',
      '10.1.0.0/16',
      'fd00::/8',
      '192.0.2.7',
    ]);
    const list = allowList(['10.1.0.0/16', 'Hooks.Corp.Example.']);
    expect(list.names.has('hooks.corp.example')).toBe(true);
    expect(list.ranges.check('10.1.200.3')).toBe(true);
    expect(list.ranges.check('10.2.0.1')).toBe(false);
    for (const bad of ['10.0.0.0/33', '10.0.0.0/8/1', 'http://x', 'a_b'])
      expect(() => allowList([bad]), bad).toThrow(/BRIDGE_WEBHOOK_HOSTS/);
    expect(webhookOptionsFromEnv({}, () => '').hosts).toEqual([]);
  });
});

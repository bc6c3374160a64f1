/** The bridge's error-tracking relay against a real HTTPS ingest server of a test CA. */
import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startIngestServer, type IngestServer } from '../../test/harness/ingest-server.js';
import { buildBridge } from './app.js';

let ingest: IngestServer;
const app = buildBridge();

beforeAll(async () => {
  ingest = await startIngestServer();
});
afterAll(async () => {
  await app.close();
  await ingest?.stop();
});
beforeEach(() => {
  ingest.reset();
  ingest.useOtherCa(false);
});

/** An envelope with a binary item: every byte value, so any re-encoding would show. */
function binaryEnvelope(): Buffer {
  const payload = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  return Buffer.concat([
    Buffer.from('{"dsn":"https://k@127.0.0.1/1"}\n{"type":"replay_recording","length":256}\n'),
    payload,
    Buffer.from('\n'),
  ]);
}

const relay = (body: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/errtrack/relay', payload: body });

describe('POST /v1/errtrack/relay', () => {
  it('POSTs the envelope byte-exact over verified TLS and answers the upstream status only', async () => {
    const bytes = binaryEnvelope();
    ingest.headers = { 'X-Sentry-Rate-Limits': '60:error:organization', 'Retry-After': '60' };
    const res = await relay({
      url: `${ingest.origin}/api/1/envelope/`,
      envelope: bytes.toString('base64'),
      caCert: ingest.caPem,
      timeoutMs: 5000,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 200, retryAfter: '60', rateLimits: '60:error:organization' });
    expect(res.body).not.toContain('ingest-secret-body');
    expect(ingest.received).toHaveLength(1);
    const got = ingest.received[0]!;
    expect(got.url).toBe('/api/1/envelope/');
    expect(got.headers['content-type']).toBe('application/x-sentry-envelope');
    expect(got.body.equals(bytes)).toBe(true);
  });

  it('passes an upstream refusal on as its status', async () => {
    ingest.status = 429;
    const res = await relay({
      url: `${ingest.origin}/api/1/envelope/`,
      envelope: 'e30K',
      caCert: ingest.caPem,
      timeoutMs: 5000,
    });
    expect(res.json()).toMatchObject({ status: 429 });
  });

  it('refuses an upstream whose certificate the CA does not sign: 502 UPSTREAM_TLS', async () => {
    const res = await relay({
      url: `${ingest.origin}/api/1/envelope/`,
      envelope: 'e30K',
      caCert: ingest.otherCaPem,
      timeoutMs: 5000,
    });
    expect(res.statusCode).toBe(502);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 502, code: 'UPSTREAM_TLS' });
    expect(ingest.received).toHaveLength(0);
  });

  it('refuses the system roots for a certificate of a private CA (caCert null)', async () => {
    const res = await relay({
      url: `${ingest.origin}/api/1/envelope/`,
      envelope: 'e30K',
      caCert: null,
      timeoutMs: 5000,
    });
    expect(res.json()).toMatchObject({ status: 502, code: 'UPSTREAM_TLS' });
  });

  it('times out a slow upstream: 504 UPSTREAM_TIMEOUT within the timeout', async () => {
    ingest.delayMs = 3000;
    const started = Date.now();
    const res = await relay({
      url: `${ingest.origin}/api/1/envelope/`,
      envelope: 'e30K',
      caCert: ingest.caPem,
      timeoutMs: 500,
    });
    expect(res.statusCode).toBe(504);
    expect(res.json()).toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('answers 502 UPSTREAM_UNAVAILABLE when nothing listens', async () => {
    const port = await new Promise<number>((r) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => r(p));
      });
    });
    const res = await relay({
      url: `https://127.0.0.1:${port}/api/1/envelope/`,
      envelope: 'e30K',
      caCert: ingest.caPem,
      timeoutMs: 5000,
    });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });

  it('refuses plain http:// and bodies outside the contract: 400 BAD_REQUEST', async () => {
    for (const body of [
      { url: `${ingest.httpOrigin}/api/1/envelope/`, envelope: 'e30K', caCert: null, timeoutMs: 5000 },
      { url: `${ingest.origin}/api/1/envelope/`, envelope: 'not base64!', caCert: null, timeoutMs: 5000 },
      { url: `${ingest.origin}/api/1/envelope/`, envelope: 'e30K', caCert: null },
    ]) {
      const res = await relay(body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'BAD_REQUEST' });
    }
    expect(ingest.received).toHaveLength(0);
  });

  it("takes envelopes larger than Fastify's default 1 MiB body limit", async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 0x61);
    const res = await relay({
      url: `${ingest.origin}/api/1/envelope/`,
      envelope: big.toString('base64'),
      caCert: ingest.caPem,
      timeoutMs: 10_000,
    });
    expect(res.statusCode).toBe(200);
    expect(ingest.received[0]!.body.length).toBe(big.length);
  });
});

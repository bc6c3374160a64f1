/**
 * POST /v3/sentry-tunnel and the service's own error reports, on each host, against a real HTTPS
 * ingest server of a test CA (ERRTRACK_CA) reached through a real bridge over mutual TLS. The
 * ingest server must receive exactly the relayed envelopes.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, baseUrl } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startIngestServer, type IngestServer } from '../harness/ingest-server.js';

const kind = inject('hostKind');
const MAX = 65_536;
const TIMEOUT_S = 1.5;
const SESSION_KEY = 'own-errors-session-secret-0123456789abcdef';

let ingest: IngestServer;
let bridge: TestBridge;
let tunnel: RunningHost;
let direct: RunningHost;
let frontendDsn: string;
let directDsn: string;

beforeAll(async () => {
  [ingest, bridge] = await Promise.all([startIngestServer(), startTestBridge()]);
  const port = new URL(ingest.origin).port;
  frontendDsn = `https://browserkey@127.0.0.1:${port}/42`;
  directDsn = `http://directkey@127.0.0.1:${new URL(ingest.httpOrigin).port}/43`;
  [tunnel, direct] = await Promise.all([
    // Tunnel: ERRTRACK_CA set, so relays go through the bridge.
    startTestHost(kind, {
      ...bridge.env,
      FRONTEND_ERRTRACK_DSN: frontendDsn,
      ERRTRACK_ENV: 'tunnel-test',
      FRONTEND_ERRTRACK_TUNNEL: 'True',
      ERRTRACK_CA: ingest.caPem,
      FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE: String(MAX),
      FRONTEND_ERRTRACK_TUNNEL_TIMEOUT: String(TIMEOUT_S),
      AUTH_ERRTRACK_DSN: `https://ownkey@127.0.0.1:${port}/7`,
      SESSION_SECRET_KEY: SESSION_KEY,
      // The own-errors case moves the clock 500 days ahead: no expiry or inactivity in the way.
      USER_PASSWORD_EXPIRATION_DAY: '0',
      USER_INACTIVE_TIMEOUT_DAY: '3650',
    }),
    // No ERRTRACK_CA and no bridge: the worker relays with the platform's fetch.
    startTestHost(kind, {
      FRONTEND_ERRTRACK_DSN: directDsn,
      ERRTRACK_ENV: 'direct-test',
      FRONTEND_ERRTRACK_TUNNEL: 'True',
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([tunnel?.stop(), direct?.stop()]);
  await Promise.all([bridge?.stop(), ingest?.stop()]);
});
afterEach(() => {
  ingest.reset();
  ingest.useOtherCa(false);
});

/** An envelope as the browser SDK sends it through a tunnel, with a binary item of every byte value. */
function envelope(dsn: string, extra: Buffer = Buffer.alloc(0)): Buffer {
  const event = JSON.stringify({ event_id: 'a'.repeat(32), message: 'hello', platform: 'javascript' });
  const binary = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), extra]);
  return Buffer.concat([
    Buffer.from(
      `${JSON.stringify({ event_id: 'a'.repeat(32), sent_at: new Date().toISOString(), dsn })}\n` +
        `{"type":"event"}\n${event}\n`,
    ),
    Buffer.from(`{"type":"replay_recording","length":${binary.length}}\n`),
    binary,
  ]);
}

const post = (host: RunningHost, body: Buffer | string, headers: Record<string, string> = {}) =>
  fetch(`${host.url}/v3/sentry-tunnel`, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers: { 'Content-Type': 'text/plain;charset=UTF-8', ...headers },
  });

async function problem(res: Response, status: number): Promise<Record<string, unknown>> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  return (await res.json()) as Record<string, unknown>;
}

describe('sentry-tunnel: relayed', () => {
  it(
    "relays an envelope of the configured project byte-exact, through the bridge, to the DSN's ingest " + 'URL',
    async () => {
      const bytes = envelope(frontendDsn);
      const res = await post(tunnel, bytes);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ relayed: true, status: 200 });
      expect(text).not.toContain('ingest-secret-body');
      expect(ingest.received).toHaveLength(1);
      const got = ingest.received[0]!;
      expect(got.scheme).toBe('https');
      expect(got.url).toBe('/api/42/envelope/');
      expect(got.headers['content-type']).toBe('application/x-sentry-envelope');
      expect(got.body.equals(bytes)).toBe(true);
    },
  );

  it('accepts the same project written differently (scheme case, trailing slash)', async () => {
    const res = await post(tunnel, envelope(frontendDsn.replace('/42', '/42/').replace('https://', 'HTTPS://')));
    expect(res.status).toBe(200);
    expect(ingest.received).toHaveLength(1);
  });

  it('passes the rate limits of the error-tracking system on (429)', async () => {
    ingest.status = 429;
    ingest.headers = { 'Retry-After': '30', 'X-Sentry-Rate-Limits': '30:error:organization' };
    const res = await post(tunnel, envelope(frontendDsn));
    const body = await problem(res, 429);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(res.headers.get('x-sentry-rate-limits')).toBe('30:error:organization');
    expect(JSON.stringify(body)).not.toContain('ingest-secret-body');
  });

  it('answers 502 for another refusal, without the upstream body', async () => {
    ingest.status = 500;
    const body = await problem(await post(tunnel, envelope(frontendDsn)), 502);
    expect(body).toMatchObject({ code: 'BAD_GATEWAY', upstreamStatus: 500 });
    expect(JSON.stringify(body)).not.toContain('ingest-secret-body');
  });

  it('without ERRTRACK_CA and a bridge, relays directly with the platform fetch', async () => {
    const bytes = envelope(directDsn);
    const res = await post(direct, bytes);
    expect(res.status).toBe(200);
    expect(ingest.received).toHaveLength(1);
    expect(ingest.received[0]!.scheme).toBe('http');
    expect(ingest.received[0]!.url).toBe('/api/43/envelope/');
    expect(ingest.received[0]!.body.equals(bytes)).toBe(true);
  });
});

describe('sentry-tunnel: refused', () => {
  // Envelope DSNs naming another host, port, project, scheme, userinfo or IPv6 address (SSRF): the
  // hostile suite (attacks-input.test.ts).

  it('413 past FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE, announced by Content-Length', async () => {
    const bytes = envelope(frontendDsn, Buffer.alloc(MAX, 0x20));
    const body = await problem(await post(tunnel, bytes), 413);
    expect(body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', maxBytes: MAX });
    expect(ingest.received).toHaveLength(0);
  });

  it('413 past the limit for a chunked upload without Content-Length, while reading', async () => {
    // Chunks keep coming until the service answers. Past the limit it drains at most the limit
    // again, then cuts the body off and answers while the upload is still going (Node: the client
    // pumps up to 16 × the limit, room for a loaded machine). wrangler dev's proxy fails the next request on a
    // connection whose body was cut off, so on the edge host the upload stops within the drained part.
    const stopAt = kind === 'edge' ? MAX + MAX / 2 : 16 * MAX;
    const head = envelope(frontendDsn);
    const chunk = Buffer.alloc(8192, 0x20);
    const { status, body, sent } = await new Promise<{ status: number; body: string; sent: number }>(
      (resolve, reject) => {
        let sent = 0;
        let answered = false;
        const req = httpRequest(
          `${tunnel.url}/v3/sentry-tunnel`,
          { method: 'POST', agent: false, headers: { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' } },
          (res) => {
            answered = true;
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, sent }));
          },
        );
        req.on('error', (err) => (answered ? undefined : reject(err)));
        req.write(head);
        sent += head.length;
        const pump = () => {
          if (answered || req.destroyed) return;
          if (sent > stopAt) return void req.end();
          req.write(chunk);
          sent += chunk.length;
          setTimeout(pump, 2);
        };
        pump();
      },
    );
    expect(status).toBe(413);
    expect(JSON.parse(body).code).toBe('PAYLOAD_TOO_LARGE');
    expect(sent).toBeLessThanOrEqual(stopAt + chunk.length);
    if (kind === 'node') expect(sent).toBeLessThan(16 * MAX);
    expect(ingest.received).toHaveLength(0);
  });

  it('a body just at the limit passes', async () => {
    let extra = MAX - envelope(frontendDsn).length;
    let bytes = envelope(frontendDsn, Buffer.alloc(extra, 0x20));
    while (bytes.length > MAX) bytes = envelope(frontendDsn, Buffer.alloc((extra -= bytes.length - MAX), 0x20));
    expect(bytes.length).toBe(MAX);
    expect((await post(tunnel, bytes)).status).toBe(200);
  });

  it('400 for malformed envelopes; nothing is relayed', async () => {
    const cases: Array<[string, Buffer | string]> = [
      ['empty', ''],
      ['not JSON', 'hello world\n{"type":"event"}\n{}'],
      ['header not an object', '[1,2]\n'],
      ['no dsn', '{"event_id":"x"}\n{"type":"event"}\n{}'],
      ['dsn not a DSN', '{"dsn":"javascript:alert(1)"}\n{"type":"event"}\n{}'],
      ['item without type', `{"dsn":"${frontendDsn}"}\n{"length":2}\nab`],
      ['item shorter than its length', `{"dsn":"${frontendDsn}"}\n{"type":"attachment","length":99}\nab`],
      ['item longer than its length', `{"dsn":"${frontendDsn}"}\n{"type":"attachment","length":1}\nabc`],
      ['not UTF-8 header', Buffer.from([0xff, 0xfe, 0x0a])],
    ];
    for (const [name, body] of cases) {
      const p = await problem(await post(tunnel, body), 400);
      expect(p.code, name).toBe('MALFORMED_REQUEST');
    }
    expect(ingest.received).toHaveLength(0);
  });

  it('415 for a Content-Type other than text/plain or application/x-sentry-envelope; none is accepted', async () => {
    for (const type of ['application/json', 'application/x-www-form-urlencoded', 'application/octet-stream']) {
      const p = await problem(await post(tunnel, envelope(frontendDsn), { 'Content-Type': type }), 415);
      expect(p.code, type).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    expect(ingest.received).toHaveLength(0);
    // The SDK's binary envelopes come without a Content-Type; its text ones as text/plain.
    const untyped = await fetch(`${tunnel.url}/v3/sentry-tunnel`, {
      method: 'POST',
      body: new Uint8Array(envelope(frontendDsn)),
    });
    expect(untyped.status).toBe(200);
    expect(untyped.headers.get('content-type')).toMatch(/^application\/json/);
    await untyped.body?.cancel();
    expect(
      (await post(tunnel, envelope(frontendDsn), { 'Content-Type': 'application/x-sentry-envelope' })).status,
    ).toBe(200);
    expect(ingest.received).toHaveLength(2);
  });

  it('504 past FRONTEND_ERRTRACK_TUNNEL_TIMEOUT for a slow upstream', async () => {
    ingest.delayMs = 6000;
    const started = Date.now();
    const body = await problem(await post(tunnel, envelope(frontendDsn)), 504);
    const elapsed = Date.now() - started;
    expect(body.code).toBe('GATEWAY_TIMEOUT');
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - 100);
    expect(elapsed).toBeLessThan(TIMEOUT_S * 1000 + 2500);
  });

  it('502 when the ingest server presents a certificate ERRTRACK_CA does not sign', async () => {
    ingest.useOtherCa(true);
    const body = await problem(await post(tunnel, envelope(frontendDsn)), 502);
    expect(body).toMatchObject({ code: 'BAD_GATEWAY', cause: 'UPSTREAM_TLS' });
    expect(JSON.stringify(body)).not.toContain('BEGIN CERTIFICATE');
    expect(ingest.received).toHaveLength(0);
  });

  it('404 while the tunnel is off (the shared host: no FRONTEND_ERRTRACK_* at all)', async () => {
    const res = await fetch(`${baseUrl()}/v3/sentry-tunnel`, {
      method: 'POST',
      body: new Uint8Array(envelope(frontendDsn)),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect((await problem(res, 404)).code).toBe('NOT_FOUND');
    expect(ingest.received).toHaveLength(0);
  });

  it('is documented in the OpenAPI description with its statuses and no authentication', async () => {
    const doc = (await (await fetch(`${tunnel.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { security?: unknown[]; responses: Record<string, unknown>; 'x-required-roles'?: string[] }>
      >;
    };
    const op = doc.paths['/v3/sentry-tunnel']!.post!;
    expect(op.security).toEqual([]);
    // 415 and 500 come from the shared responses (docs/shared-responses.ts); no 422: the body is not validated by a
    // schema.
    expect(Object.keys(op.responses).sort()).toEqual([
      '200',
      '400',
      '403',
      '404',
      '413',
      '415',
      '429',
      '500',
      '502',
      '503',
      '504',
    ]);
    // No login needed, so no roles either.
    expect(op['x-required-roles']).toBeUndefined();
  });
});

describe("the service's own unhandled errors (ERRTRACK_DSN)", () => {
  it(
    'reports a 500 after the response, through the bridge, without credentials, cookies, query or ' + 'secrets',
    async () => {
      // An unhandled error on demand: Hono refuses to set a cookie that expires more than 400 days
      // after the real time, so a login with the test clock 500 days ahead fails unhandled.
      const clock = (offsetMs: number) =>
        fetch(`${tunnel.url}/__test__/clock`, {
          method: 'POST',
          body: JSON.stringify({ offsetMs }),
          headers: { 'Content-Type': 'application/json' },
        });
      expect((await clock(500 * 86_400_000)).status).toBe(200);
      try {
        const res = await fetch(`${tunnel.url}/v3/login?token=query-secret-value`, {
          method: 'POST',
          body: JSON.stringify({ login: ADMIN.login, password: ADMIN.password }),
          headers: {
            'Content-Type': 'application/json',
            Origin: tunnel.origin,
            Authorization: 'Bearer ast_header-secret-value',
            Cookie: 'auth_session=cookie-secret-value',
          },
        });
        expect(res.status).toBe(500);
        const requestId = res.headers.get('x-request-id');
        const [got] = await ingest.waitFor(1, 15_000);
        expect(got!.url).toMatch(/^\/api\/7\/envelope\/\?/);
        expect(new URL(got!.url, 'https://x').searchParams.get('sentry_key')).toBe('ownkey');
        const raw = got!.body.toString('utf8');
        for (const secret of [
          'header-secret-value',
          'cookie-secret-value',
          'query-secret-value',
          SESSION_KEY,
          ADMIN.password,
          ingest.caPem.slice(30, 60),
        ]) {
          expect(raw).not.toContain(secret);
        }
        const [, , payload] = raw.split('\n');
        const event = JSON.parse(payload!) as {
          environment: string;
          level: string;
          exception: { values: Array<{ type: string; value: string }> };
          request: Record<string, unknown>;
          tags: Record<string, string>;
        };
        expect(event.environment).toBe('tunnel-test');
        expect(event.level).toBe('error');
        expect(event.exception.values[0]!.value).toMatch(/400 days/);
        expect(event.request).toEqual({ method: 'POST', url: `${tunnel.url}/v3/login` });
        expect(event.tags.request_id).toBe(requestId);
      } finally {
        await clock(0);
      }
    },
  );

  it('reports nothing for a deliberate problem (a 4xx or a bridge 5xx)', async () => {
    const deliberate = await fetch(`${tunnel.url}/v3/no-such-endpoint`);
    expect(deliberate.status).toBe(404);
    // Then an unhandled error (as above): once its report is in, one for the 404 would be too.
    const clock = (offsetMs: number) =>
      fetch(`${tunnel.url}/__test__/clock`, {
        method: 'POST',
        body: JSON.stringify({ offsetMs }),
        headers: { 'Content-Type': 'application/json' },
      });
    expect((await clock(500 * 86_400_000)).status).toBe(200);
    let unhandled: Response;
    try {
      unhandled = await fetch(`${tunnel.url}/v3/login`, {
        method: 'POST',
        body: JSON.stringify({ login: ADMIN.login, password: ADMIN.password }),
        headers: { 'Content-Type': 'application/json', Origin: tunnel.origin },
      });
    } finally {
      await clock(0);
    }
    expect(unhandled.status).toBe(500);
    await ingest.waitFor(1, 15_000);
    const tagged = ingest.received.map((r) => {
      const [, , payload] = r.body.toString('utf8').split('\n');
      return (JSON.parse(payload!) as { tags: Record<string, string> }).tags.request_id;
    });
    expect(tagged).toEqual([unhandled.headers.get('x-request-id')]);
    expect(tagged).not.toContain(deliberate.headers.get('x-request-id'));
  });
});

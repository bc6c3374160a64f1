/**
 * Hostile suite (docs/testing.md, "The hostile suite"), attacks with what a request carries and how it is sent: the
 * Sentry tunnel as an SSRF proxy, bodies too large or of the wrong type on every endpoint that reads one
 * (from the OpenAPI description), slow and partial requests. Each `it` is one attack.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, baseUrl, callJson } from '../harness/client.js';
import { loggedInBrowser } from '../harness/browser.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { operationsOf, type JsonObject } from '../harness/openapi-doc.js';

const kind = inject('hostKind');
const MAX_BODY = 65_536;
const admin = basic(ADMIN.login, ADMIN.password);

/** A plain HTTP server on loopback that records what reaches it and answers with `answer`. */
async function recordingServer(
  answer: (res: import('node:http').ServerResponse) => void,
): Promise<{ server: Server; port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port, hits };
}

/** An envelope as the browser SDK sends it through a tunnel, naming `dsn`. */
const envelope = (dsn: string) =>
  `${JSON.stringify({ event_id: 'b'.repeat(32), sent_at: new Date().toISOString(), dsn })}\n` +
  '{"type":"event"}\n{"message":"ssrf"}\n';

describe('attacks on the Sentry tunnel', () => {
  let ingest: Awaited<ReturnType<typeof recordingServer>>;
  let inside: Awaited<ReturnType<typeof recordingServer>>;
  let tunnel: RunningHost;
  beforeAll(async () => {
    // The configured ingest answers with a redirect to an "internal" server the tunnel must never reach.
    inside = await recordingServer((res) => res.writeHead(200).end('internal secret'));
    ingest = await recordingServer((res) =>
      res.writeHead(307, { Location: `http://127.0.0.1:${inside.port}/internal` }).end(),
    );
    // No ERRTRACK_CA: the worker relays with the platform's fetch (the bridge's path is sentry-tunnel.test.ts's).
    tunnel = await startTestHost(kind, {
      FRONTEND_ERRTRACK_DSN: `http://browserkey@127.0.0.1:${ingest.port}/42`,
      ERRTRACK_ENV: 'ssrf-test',
      FRONTEND_ERRTRACK_TUNNEL: 'True',
    });
  });
  afterAll(async () => {
    await tunnel?.stop();
    for (const s of [ingest, inside]) await new Promise((r) => s?.server.close(r));
  });

  it('tunnel SSRF: envelope DSNs naming other hosts, ports, schemes, userinfo, IPv6, and redirects', async () => {
    const p = ingest.port;
    const i = inside.port;
    // Another host, port or project: refused (403), nothing relayed.
    const others = [
      `http://browserkey@evil.example/42`,
      `http://browserkey@localhost:${p}/42`,
      `http://browserkey@127.0.0.2:${p}/42`,
      `http://browserkey@127.0.0.1:${i}/42`,
      `https://browserkey@127.0.0.1:${i}/42`,
      `http://browserkey@127.0.0.1:${p}/43`,
      `http://browserkey@127.0.0.1:${p}/42/../43`,
      `http://browserkey@127.0.0.1:${p}/42/0`,
      `http://browserkey@[::1]:${p}/42`,
      `http://browserkey@[::1]:${i}/42`,
      `http://browserkey@[::ffff:127.0.0.1]:${i}/42`,
      `http://browserkey@127.0.0.1:${p}@127.0.0.1:${i}/42`,
      `http://127.0.0.1:${p}@127.0.0.1:${i}/42`,
      `http://browserkey@127.0.0.1%2F@127.0.0.1:${i}/42`,
    ];
    // Other schemes, userinfo and host spellings: refused, or (when they name the configured project,
    // as WHATWG URL parsing reads them) relayed, but only ever to the configured DSN's ingest URL.
    const tricks = [
      `ftp://browserkey@127.0.0.1:${p}/42`,
      `file://browserkey@127.0.0.1:${p}/42`,
      `gopher://browserkey@127.0.0.1:${p}/42`,
      `https://browserkey@127.0.0.1:${p}/42`,
      `HTTP://browserkey@127.0.0.1:${p}/42/`,
      `http://browserkey:pw@127.0.0.1:${i}@127.0.0.1:${p}/42`,
      `http://browserkey@2130706433:${p}/42`,
      `http://browserkey@0x7f.0.0.1:${p}/42`,
      `http://browserkey@[::ffff:127.0.0.1]:${p}/42`,
      `http://browserkey@127.0.0.1:${p}\\@127.0.0.1:${i}/42`,
      `//browserkey@127.0.0.1:${i}/42`,
      `http://browserkey@127.0.0.1:${p}/42`,
    ];
    const relay = async (dsn: string) => {
      const res = await fetch(`${tunnel.url}/v3/sentry-tunnel`, {
        method: 'POST',
        body: envelope(dsn),
        headers: { 'Content-Type': 'text/plain;charset=UTF-8' },
      });
      const text = await res.text();
      // The upstream's answer (a redirect here) is never followed, nor its body passed on.
      expect(text, dsn).not.toContain('internal secret');
      if (res.status !== 502) expect(res.headers.get('content-type'), dsn).toMatch(/^application\/problem\+json/);
      return res.status;
    };
    for (const dsn of others) expect(await relay(dsn), dsn).toBe(403);
    expect(ingest.hits).toEqual([]);
    let relayed = 0;
    for (const dsn of tricks) {
      const status = await relay(dsn);
      expect([400, 403, 502], `${dsn} → ${status}`).toContain(status);
      if (status === 502) relayed++;
    }
    expect(relayed).toBeGreaterThan(0);
    expect(ingest.hits).toEqual(Array.from({ length: relayed }, () => 'POST /api/42/envelope/'));
    expect(inside.hits).toEqual([]);
  });
});

describe('attacks with request bodies', () => {
  let doc: JsonObject;
  let bearer: string;
  beforeAll(async () => {
    doc = (await (await fetch(`${baseUrl()}/openapi.json`)).json()) as JsonObject;
    // An API token spares a password hash per request.
    const r = await callJson<{ token: string }>('/v4/users/me/tokens', {
      method: 'POST',
      auth: admin,
      json: { name: 'attacks-bodies', expiresInDays: 1 },
    });
    expect(r.status).toBe(201);
    bearer = `Bearer ${r.body.token}`;
  });

  it('oversize bodies 413 and wrong content types 415 on every endpoint that reads a body', async () => {
    // Elsewhere: the tunnel has its own limit and media types (sentry-tunnel.test.ts: 413, 415); the
    // first-run page is gone once an administrator exists (first-run.test.ts: 413, 415 before that).
    const elsewhere = ['/v3/sentry-tunnel', '/first-run'];
    const withBody = operationsOf(doc).filter((o) => o.op.requestBody && !elsewhere.includes(o.path));
    expect(withBody.length).toBeGreaterThan(15);
    const wrongTypes: string[] = [];
    for (const o of withBody) {
      // A type of log that exists (its body is read only then); other path parameters need not exist.
      // A passkey's id is a UUID (checked with the path): any well-formed one.
      const concrete = o.path
        .replace('{audit_log_type}', 'user_activity')
        .replace('{passkeyId}', '00000000-0000-4000-8000-000000000000')
        .replace(/\{[^}]+\}/g, 'x1');
      const path = `${baseUrl()}${concrete}`;
      const types = Object.keys(((o.op.requestBody as JsonObject).content as JsonObject) ?? {});
      const security = (o.op.security as JsonObject[] | undefined) ?? [];
      // A change of factors, and whatever no API token may do (x-token-scope none: docs/api.md, "API token
      // scopes"), take Basic, which proves the password.
      const noToken = o.op['x-step-up'] === 'factors' || o.op['x-token-scope'] === 'none';
      const auth =
        security.some((s) => 'bearer' in s) && !(noToken && security.some((s) => 'basic' in s)) ? bearer : admin;
      // An operation that takes only a session (adding a passkey), or no API token and no Basic (the step-up),
      // gets a browser's session cookie.
      const basicToo = security.some((s) => 'basic' in s);
      const sessionOnly =
        security.length > 0 &&
        (security.every((s) => 'cookie' in s) || (noToken && !basicToo && security.some((s) => 'cookie' in s)));
      const browser = sessionOnly ? await loggedInBrowser(baseUrl(), ADMIN.login, ADMIN.password) : undefined;
      const at = `${o.method.toUpperCase()} ${o.path}`;
      const send = async (init: { type: string; body: BodyInit; chunked?: boolean }) => {
        const request = {
          method: o.method.toUpperCase(),
          headers: { ...(browser ? {} : { Authorization: auth }), 'Content-Type': init.type },
          body: init.body,
          ...(init.chunked ? { duplex: 'half' } : {}),
        } as RequestInit;
        const res = browser ? await browser.fetch(path, request) : await fetch(path, request);
        const text = await res.text();
        return {
          status: res.status,
          type: res.headers.get('content-type'),
          body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
        };
      };
      const big = `{"pad":"${'a'.repeat(MAX_BODY)}"}`;
      const announced = await send({ type: types[0]!, body: big });
      expect(announced.status, `${at} announced`).toBe(413);
      expect(announced.type).toMatch(/^application\/problem\+json/);
      expect(announced.body.code).toBe('PAYLOAD_TOO_LARGE');
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let k = 0; k < 5; k++) c.enqueue(new TextEncoder().encode(big.slice(0, 20_000)));
          c.close();
        },
      });
      const chunked = await send({ type: types[0]!, body: stream, chunked: true });
      expect(chunked.status, `${at} chunked`).toBe(413);
      for (const wrong of [
        'text/plain',
        'application/xml',
        'application/json',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json-patch+json',
      ]) {
        if (types.some((t) => wrong.startsWith(t))) continue;
        // An HTML form may be sent either way: a form endpoint reads both.
        if (wrong.startsWith('multipart/') && types.includes('application/x-www-form-urlencoded')) continue;
        const r = await send({ type: wrong, body: '{}' });
        if (
          r.status !== 415 ||
          r.body.code !== 'UNSUPPORTED_MEDIA_TYPE' ||
          !/^application\/problem\+json/.test(r.type ?? '')
        ) {
          wrongTypes.push(`${at} as ${wrong}: ${r.status} ${String(r.body.code)}`);
        }
      }
    }
    expect(wrongTypes).toEqual([]);
  });
});

/** Opens a raw connection to the host of `base`. */
function open(base: string): Promise<Socket> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => resolve(s));
    s.once('error', reject);
  });
}

/** Resolves when the server ends `s` (or after `ms`, with false). */
function closedWithin(s: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (s.destroyed || s.readableEnded) return resolve(true);
    const t = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(t);
      resolve(true);
    };
    s.once('close', done);
    s.once('end', done);
    s.resume();
  });
}

describe('slow and partial requests', () => {
  it('slow and partial requests do not tie up the host', async () => {
    const base = baseUrl();
    const u = new URL(base);
    const sockets: Socket[] = [];
    const timers: NodeJS.Timeout[] = [];
    try {
      // Slowloris: many connections sending their headers a byte at a time, and requests whose
      // body is declared far larger than what is sent.
      const head = `GET ${u.pathname}/health/live HTTP/1.1\r\nHost: ${u.host}\r\nX-Slow: `;
      for (let k = 0; k < 60; k++) {
        const s = await open(base);
        s.on('error', () => {});
        sockets.push(s);
        let at = 0;
        const drip = setInterval(() => {
          if (s.destroyed) return clearInterval(drip);
          s.write(head[at % head.length]!);
          at++;
        }, 200);
        timers.push(drip);
      }
      const partial: Socket[] = [];
      for (let k = 0; k < 30; k++) {
        const s = await open(base);
        s.on('error', () => {});
        s.write(
          `POST ${u.pathname}/v3/login HTTP/1.1\r\nHost: ${u.host}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{"login":"slow',
        );
        partial.push(s);
        sockets.push(s);
      }
      // Other clients are served promptly meanwhile.
      for (let k = 0; k < 10; k++) {
        const t = performance.now();
        const live = await fetch(`${base}/health/live`, { signal: AbortSignal.timeout(5000) });
        expect(live.status).toBe(200);
        await live.body?.cancel();
        const login = await callJson('/v4/users/me', { auth: admin });
        expect(login.status).toBe(200);
        expect(performance.now() - t, `request ${k}`).toBeLessThan(3000);
      }
      if (kind === 'node') {
        // The Node host ends them itself (headersTimeout, requestTimeout: worker/node/host.ts).
        const [dripped, stalled] = await Promise.all([
          Promise.all(sockets.slice(0, 60).map((s) => closedWithin(s, 15_000))),
          Promise.all(partial.map((s) => closedWithin(s, 35_000))),
        ]);
        expect(dripped.every(Boolean), 'every connection dripping its headers is closed').toBe(true);
        expect(stalled.every(Boolean), 'every stalled body is closed').toBe(true);
      }
    } finally {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
    }
  });
});

/**
 * AUTH_MAX_BODY_SIZE on every endpoint, on each host: bodies over the limit are answered 413
 * problem+json before they are buffered, whether Content-Length announced them or they came
 * chunked; a 100 MiB upload is cut off early and the host's memory stays flat; the connection (or,
 * once cut, the next one) serves the next request. Its own host, whose memory is measured.
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, uniqueLogin } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { peakMemoryBytes } from '../harness/memory.js';

const kind = inject('hostKind');
const MAX = 65_536;
const MIB = 1024 * 1024;
let host: RunningHost;

beforeAll(async () => {
  // The default limit (64 KiB): nothing set.
  host = await startTestHost(kind);
});
afterAll(async () => {
  await host?.stop();
});

interface Outcome {
  status?: number;
  body?: string;
  contentType?: string;
  /** Headers every answer carries (http/response-headers.ts). */
  requestId?: string;
  nosniff?: string;
  cacheControl?: string;
  /** The connection failed before an answer (the service cut the upload off). */
  error?: string;
  /** Bytes of the body written when the exchange ended. */
  sent: number;
}

interface Upload {
  path: string;
  headers?: Record<string, string>;
  /** The body's first bytes; the rest, up to `total`, is `a`s (a JSON string being padded). */
  head: string;
  total: number;
  tail?: string;
  chunked: boolean;
}

/**
 * POSTs a body of `total` bytes on `agent`, writing it in 64 KiB pieces (with backpressure) until
 * it is all sent, the service answers, or the connection fails: a service that answers early stops
 * the upload there.
 */
function upload(agent: Agent, u: Upload): Promise<Outcome> {
  return new Promise((resolve) => {
    let sent = 0;
    let done = false;
    const finish = (o: Omit<Outcome, 'sent'>) => {
      if (done) return;
      done = true;
      resolve({ ...o, sent });
    };
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...u.headers };
    if (u.chunked) headers['Transfer-Encoding'] = 'chunked';
    else headers['Content-Length'] = String(u.total);
    const req = request(`${host.url}${u.path}`, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () =>
        finish({
          status: res.statusCode,
          body: text,
          contentType: res.headers['content-type'],
          requestId: res.headers['x-request-id'] as string | undefined,
          nosniff: res.headers['x-content-type-options'] as string | undefined,
          cacheControl: res.headers['cache-control'],
        }),
      );
      res.on('error', (err) => finish({ error: err.message }));
      // Answered before the body was all sent: stop uploading, and drop that connection.
      if (sent < u.total) res.once('end', () => req.destroy());
    });
    req.on('error', (err) => finish({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
    // Writes still buffered when the service closes the connection fail there (EPIPE): expected.
    req.on('socket', (socket) => socket.on('error', () => {}));
    const tail = Buffer.from(u.tail ?? '');
    const head = Buffer.from(u.head);
    const pad = Buffer.alloc(64 * 1024, 'a');
    const pump = () => {
      while (!done && !req.destroyed && !req.writableEnded) {
        const left = u.total - sent;
        if (left === 0) return void req.end();
        let piece: Buffer;
        if (sent === 0) piece = head;
        else if (left <= tail.length) piece = tail.subarray(tail.length - left);
        else piece = pad.subarray(0, Math.min(pad.length, left - tail.length));
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
    };
    pump();
  });
}

/** GET /health/live on `agent`: whether it works, and whether it went over the same connection. */
function nextRequest(agent: Agent): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${host.url}/health/live`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A login body of exactly `total` bytes (valid JSON, padded), for a login no other test uses. */
const login = (total: number): Upload => ({
  path: '/v3/login',
  head: `{"login":"${uniqueLogin('pad')}","password":"Wrong1$pw","pad":"`,
  tail: '"}',
  total,
  chunked: false,
});
/** An account creation by the administrator (Basic), of exactly `total` bytes. */
const createUser = (total: number): Upload => ({
  path: '/v4/users',
  headers: { Authorization: basic(ADMIN.login, ADMIN.password) },
  head: '{"login":"padded","password":"Padd3d$pw","displayName":"',
  tail: '"}',
  total,
  chunked: false,
});

function expect413(o: Outcome): void {
  expect(o.status, JSON.stringify(o)).toBe(413);
  expect(o.contentType).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(o.body!) as Record<string, unknown>;
  expect(body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413, maxBytes: MAX });
  expect(body.detail).toContain('AUTH_MAX_BODY_SIZE');
  // Refused before any route ran, and still answered with the headers of every answer.
  expect(o.requestId).toBe(body.requestId);
  expect(o.nosniff).toBe('nosniff');
  expect(o.cacheControl).toBe('no-store');
}

describe('request body limit', () => {
  const cases = [
    ['anonymous POST /v3/login', login],
    ['authenticated POST /v4/users', createUser],
  ] as const;

  for (const [name, make] of cases) {
    for (const chunked of [false, true]) {
      it(
        `${name}, ${chunked ? 'chunked' : 'with Content-Length'}, over the limit: 413, and the same ` +
          `connection serves the next request`,
        async () => {
          const agent = new Agent({ keepAlive: true, maxSockets: 1 });
          try {
            const o = await upload(agent, { ...make(MAX + 20_000), chunked });
            expect413(o);
            const next = await nextRequest(agent);
            expect(next.status).toBe(200);
            // The body was read to its end (within twice the limit): the connection stays usable.
            expect(next.reused).toBe(true);
          } finally {
            agent.destroy();
          }
        },
      );
    }
  }

  it('a body at the limit passes, announced or chunked', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const chunked of [false, true]) {
        const o = await upload(agent, { ...login(MAX), chunked });
        // The body reached the login (wrong password), it was not refused for its size.
        expect(o.status, JSON.stringify(o)).toBe(401);
        expect(JSON.parse(o.body!).code).toBe('INVALID_CREDENTIALS');
      }
    } finally {
      agent.destroy();
    }
  });

  for (const chunked of [false, true]) {
    it(
      `a 100 MiB ${chunked ? 'chunked ' : ''}upload is cut off early, memory stays flat, and the next ` +
        `request works`,
      async () => {
        const before = peakMemoryBytes(host);
        expect(before).toBeGreaterThan(0);
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          const o = await upload(agent, { ...login(100 * MIB), chunked });
          // The exchange ended (answered, or the connection cut) long before the body was sent.
          expect(o.sent, JSON.stringify({ ...o, body: o.body?.slice(0, 200) })).toBeLessThan(32 * MIB);
          if (kind === 'node') expect413(o);
          else if (o.status === 503) {
            // Under `wrangler dev` only: its proxy worker, which forwards the upload to the worker,
            // reports the worker cutting the body off as its own 503 (Cloudflare has no such proxy).
            expect(o.body).toContain('restarted mid-request');
          } else if (o.error === undefined) expect413(o);
          const next = await nextRequest(agent);
          expect(next.status).toBe(200);
        } finally {
          agent.destroy();
        }
        // The host never held the body: its peak memory grew by far less than the upload.
        const grown = peakMemoryBytes(host) - before;
        expect(grown).toBeLessThan(32 * MIB);
      },
    );
  }

  it(
    'the Sentry tunnel is exempt (it reads its own FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE): here it is off, ' + '404',
    async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const o = await upload(agent, { path: '/v3/sentry-tunnel', head: '{}', total: MAX + 20_000, chunked: false });
        expect(o.status).toBe(404);
      } finally {
        agent.destroy();
      }
    },
  );

  it('a POST with no body (neither Content-Length nor Transfer-Encoding) reaches its route', async () => {
    // Written on a bare socket: node:http's client would announce an empty chunked body.
    const bare = (path: string, headers: string) =>
      new Promise<string>((resolve, reject) => {
        const u = new URL(`${host.url}${path}`);
        let answer = '';
        const s = connect(Number(u.port), u.hostname, () =>
          s.write(`POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\n${headers}Connection: close\r\n\r\n`),
        );
        // Done when the body announced by Content-Length is in (a proxy may keep the socket open).
        const complete = () => {
          const head = answer.indexOf('\r\n\r\n');
          const length = /\r\ncontent-length: *(\d+)/i.exec(answer.slice(0, head));
          return head >= 0 && length !== null && Buffer.byteLength(answer.slice(head + 4)) >= Number(length[1]);
        };
        s.on('data', (d) => {
          answer += d.toString();
          if (complete()) {
            s.destroy();
            resolve(answer);
          }
        });
        s.on('end', () => resolve(answer));
        s.on('error', reject);
      });
    // Basic login reads no body: 200, and the profile.
    const ok = await bare('/v3/login_without_session', `Authorization: ${basic(ADMIN.login, ADMIN.password)}\r\n`);
    expect(ok).toMatch(/^HTTP\/1\.1 200 /);
    expect(ok).toContain(`"login":"${ADMIN.login}"`);
    // A route that reads a JSON body finds it empty: its 400 names the body (not a 413, not a 500).
    const empty = await bare('/v3/login', 'Content-Type: application/json\r\n');
    expect(empty).toMatch(/^HTTP\/1\.1 400 /);
    expect(empty).toContain('application/problem+json');
  });

  it('a body cut short of its Content-Length (the client went away): nothing fails, the next login works', async () => {
    const logged = host.output().length;
    const u = new URL(`${host.url}/v3/login`);
    await new Promise<void>((resolve, reject) => {
      const s = connect(Number(u.port), u.hostname, () => {
        s.write(
          `POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\n` +
            'Content-Length: 100\r\n\r\n{"login":"',
        );
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 200);
      });
      s.on('error', reject);
    });
    const next = await fetch(`${host.url}/v3/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login: ADMIN.login, password: ADMIN.password }),
    });
    expect(next.status).toBe(200);
    // The Node host's log holds the next login's access line (the edge host's output has no worker lines).
    const id = next.headers.get('x-request-id')!;
    if (kind === 'node') await eventually(() => host.output().slice(logged).includes(id), { what: 'its access line' });
    // No error was logged for it (a 5xx, an unhandled rejection): the service just stopped reading.
    expect(host.output().slice(logged)).not.toMatch(/"level":"(ERROR|CRITICAL)"|Unhandled|TypeError/);
  });

  for (const [name, path] of [
    ['login without a session', '/v3/login_without_session'],
    ['block an account', '/v4/users/00000000-0000-4000-8000-000000000000/block'],
  ] as const) {
    it(`an operation without a request body (${name}) answers 413 to a body over the limit`, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const headers = { Authorization: basic(ADMIN.login, ADMIN.password) };
        expect413(await upload(agent, { path, headers, head: '{"pad":"', tail: '"}', total: MAX + 1, chunked: false }));
      } finally {
        agent.destroy();
      }
    });
  }

  it('the OpenAPI description gives every operation its 413, with a body or without', async () => {
    type Response = { description?: string; $ref?: string };
    type Op = { requestBody?: unknown; responses: Record<string, Response> };
    type Doc = { paths: Record<string, Record<string, Op>>; components: { responses: Record<string, Response> } };
    const doc = (await (await fetch(`${host.url}/openapi.json`)).json()) as Doc;
    const described = (op: Op) => {
      const entry = op.responses['413']!;
      return entry.$ref ? doc.components.responses[entry.$ref.split('/').pop()!]! : entry;
    };
    expect(described(doc.paths['/v3/login']!.post!).description).toContain('AUTH_MAX_BODY_SIZE');
    expect(described(doc.paths['/v3/login_without_session']!.post!).description).toContain('AUTH_MAX_BODY_SIZE');
    // The Sentry tunnel bounds its body itself, with its own limit.
    expect(described(doc.paths['/v3/sentry-tunnel']!.post!).description).toContain('FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE');
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) expect(op.responses['413'], `${method} ${path}`).toBeDefined();
    }
  });
});

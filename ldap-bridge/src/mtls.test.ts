/** The bridge's mutual TLS, for real over loopback: only clients of the internal CA get through. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCert, makeCa, makeDevCertificates, type Issued } from '../../scripts/dev-certs.js';
import { buildBridge } from './app.js';
import { refusalLimiter } from './mtls.js';

let dir: string;
let certs: ReturnType<typeof makeDevCertificates>;
let otherCaClient: Issued;
let expiredClient: Issued;
let intruder: Issued;
let open: FastifyInstance;
let pinned: FastifyInstance;

const read = (p: string) => readFileSync(p);

/** The bridges' log lines (JSON, as `npm run bridge` writes them). */
const logged: Array<Record<string, unknown>> = [];
const logger = { level: 'info', stream: { write: (line: string) => logged.push(JSON.parse(line)) } };

async function start(allowedSubjects?: string[]): Promise<FastifyInstance> {
  const app = buildBridge({
    server: { logger },
    mtls: { key: read(certs.server.key), cert: read(certs.server.cert), ca: read(certs.ca.cert), allowedSubjects },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

/** GET /health presenting `client` (or no certificate); resolves the status or the TLS error code. */
function get(app: FastifyInstance, client?: Issued): Promise<{ status?: number; body?: string; error?: string }> {
  const { port } = app.server.address() as AddressInfo;
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/health',
        ca: read(certs.ca.cert),
        ...(client ? { key: read(client.key), cert: read(client.cert) } : {}),
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-mtls-'));
  certs = makeDevCertificates(dir);
  const otherCa = makeCa(join(dir, 'other'), 'other-ca');
  otherCaClient = issueCert(join(dir, 'other'), otherCa, 'other-client', { cn: 'auth-worker', usage: 'client' });
  expiredClient = issueCert(dir, certs.ca, 'expired-client', {
    cn: 'auth-worker',
    usage: 'client',
    start: '20240101000000Z',
    end: '20240102000000Z',
  });
  intruder = issueCert(dir, certs.ca, 'intruder', { cn: 'intruder', usage: 'client' });
  open = await start();
  pinned = await start(['auth-worker']);
}, 60_000);

afterAll(async () => {
  await open?.close();
  await pinned?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('bridge mutual TLS', () => {
  it('a client certificate of the internal CA gets through', async () => {
    const r = await get(open, certs.client);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body!)).toMatchObject({ status: 'ok', service: 'ldap-bridge' });
  });

  it.each([
    ['no client certificate', () => undefined],
    ['a certificate of another CA', () => otherCaClient],
    ['an expired certificate', () => expiredClient],
  ])('%s: refused in the handshake, no HTTP answer', async (_name, client) => {
    const r = await get(open, client());
    expect(r.status).toBeUndefined();
    expect(r.error).toBeTruthy();
  });

  it('pinned subjects: the right CA but another subject gets 403; the allowed one 200', async () => {
    expect((await get(pinned, intruder)).status).toBe(403);
    expect((await get(pinned, certs.client)).status).toBe(200);
  });

  it('each refused client is logged at WARNING with its address and the reason', async () => {
    logged.length = 0;
    await get(open, undefined);
    await get(open, otherCaClient);
    await get(open, expiredClient);
    await get(pinned, intruder);
    await expect.poll(() => logged.filter((l) => l.level === 40).length).toBe(4);
    const refusals = logged.filter((l) => l.level === 40);
    expect(refusals.map((l) => l.reason)).toEqual([
      'no client certificate',
      'client certificate not signed by BRIDGE_TLS_CA (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
      'client certificate expired (CERT_HAS_EXPIRED)',
      'client certificate CN "intruder" is not in BRIDGE_ALLOWED_CLIENTS',
    ]);
    for (const l of refusals) expect(l.client, JSON.stringify(l)).toBe('127.0.0.1');
    // An accepted client is not a refusal.
    await get(open, certs.client);
    expect(logged.filter((l) => l.level === 40)).toHaveLength(4);
  });
});

describe('refusal log rate', () => {
  it('at most the limit a minute; the first line after says how many were left out', () => {
    let t = 0;
    const limit = refusalLimiter(2, () => t);
    const lines: number[] = [];
    for (let i = 0; i < 5; i++) limit((suppressed) => lines.push(suppressed));
    expect(lines).toEqual([0, 0]);
    t = 60_000;
    limit((suppressed) => lines.push(suppressed));
    expect(lines).toEqual([0, 0, 3]);
  });
});

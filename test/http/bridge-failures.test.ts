/**
 * Every way the bridge can fail, as the operator sees it (docs/operations-bridge.md §5), on both
 * hosts: the problem's `cause` and one WARNING line with the bridge URL and the reason, never an
 * ERROR or a stack. One host reaches the bridge through a TCP switchboard the test points at a
 * closed port, a bridge with a certificate of another CA, a bridge whose BRIDGE_ALLOWED_CLIENTS
 * leaves out the service's CN, a listener that never answers, or the real bridge. The edge host
 * reaches it through the mTLS binding emulator, as through Cloudflare's binding: a refused
 * connection and an untrusted certificate are one generic fetch error there (BRIDGE_UNREACHABLE);
 * a timeout and the CN refusal are told apart on both hosts. Expected failures behind a healthy
 * bridge (a directory down) are one WARNING line too; an unconfigured log store is none (the embedded audit log
 * answers).
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildBridge } from '../../ldap-bridge/src/app.js';
import { issueCert, makeCa } from '../../scripts/dev-certs.js';
import { ADMIN, basic, callJson, type Call } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { freePort, startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';

type Json = Record<string, any>;
type Mode = { kind: 'closed' } | { kind: 'silent' } | { kind: 'forward'; port: number };

/** A TCP port the test points anywhere; every switch drops the connections of the previous mode. */
class Switchboard {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private mode: Mode = { kind: 'closed' };
  /** The connections accepted so far. */
  accepted = 0;
  constructor(readonly port: number) {}

  async set(mode: Mode): Promise<void> {
    this.mode = mode;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (mode.kind === 'closed') {
      const server = this.server;
      this.server = undefined;
      if (server) await new Promise<void>((r) => server.close(() => r()));
      return;
    }
    if (this.server) return;
    const server = createServer((socket) => this.accept(socket));
    await new Promise<void>((r) => server.listen(this.port, '127.0.0.1', () => r()));
    this.server = server;
  }

  private accept(socket: Socket): void {
    this.accepted++;
    this.sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => this.sockets.delete(socket));
    if (this.mode.kind !== 'forward') return;
    const upstream = connect(this.mode.port, '127.0.0.1');
    this.sockets.add(upstream);
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  }

  close(): Promise<void> {
    return this.set({ kind: 'closed' });
  }
}

let host: RunningHost;
let bridge: TestBridge;
let impostor: FastifyInstance;
let pinned: FastifyInstance;
let board: Switchboard;
const admin = basic(ADMIN.login, ADMIN.password);
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const portOf = (app: FastifyInstance) => (app.server.address() as AddressInfo).port;

beforeAll(async () => {
  bridge = await startTestBridge();
  const read = (p: string) => readFileSync(p);
  const ca = read(bridge.certs.ca.cert);
  // A bridge whose server certificate comes from another CA (the service does not trust it).
  const other = makeCa(`${bridge.certs.ca.key}.other`, 'other-ca');
  const otherServer = issueCert(`${bridge.certs.ca.key}.other`, other, 'srv', { cn: 'ldap-bridge', usage: 'server' });
  impostor = buildBridge({ mtls: { key: read(otherServer.key), cert: read(otherServer.cert), ca } });
  // A bridge of the right CA whose BRIDGE_ALLOWED_CLIENTS leaves out the service's CN (auth-worker).
  pinned = buildBridge({
    mtls: {
      key: read(bridge.certs.server.key),
      cert: read(bridge.certs.server.cert),
      ca,
      allowedSubjects: ['another-service'],
    },
  });
  await Promise.all([impostor.listen({ host: '127.0.0.1', port: 0 }), pinned.listen({ host: '127.0.0.1', port: 0 })]);
  board = new Switchboard(await freePort());
  await board.set({ kind: 'forward', port: new URL(bridge.url).port ? Number(new URL(bridge.url).port) : 443 });
  host = await startTestHost(
    inject('hostKind'),
    { ...bridge.env, AUTH_BRIDGE_URL: `https://127.0.0.1:${board.port}` },
    { workerLogs: true },
  );
  const closed = await freePort();
  const r = await api('/v3/settings/ldap-servers', {
    method: 'POST',
    auth: admin,
    json: {
      name: 'corp',
      urls: [`ldap://127.0.0.1:${closed}`],
      startTls: false,
      bindDn: 'cn=service,dc=example,dc=org',
      bindPassword: 'service-password',
      baseDn: 'dc=example,dc=org',
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const s = await api('/v3/settings', {
    method: 'PATCH',
    auth: admin,
    json: { values: { LDAP_SERVER_CONNECT_TIMEOUT: 1, LDAP_SERVER_SEARCHING_TIMEOUT: 1 } },
  });
  expect(s.status, JSON.stringify(s.body)).toBe(200);
}, 180_000);

afterAll(async () => {
  await host?.stop();
  await board?.close();
  await Promise.all([bridge?.stop(), impostor?.close(), pinned?.close()]);
});

const edge = () => host.kind === 'edge';
/** The bridge URL as this host names it (the edge host's is the binding emulator's). */
const bridgeUrl = () => (edge() ? /http:\/\/127\.0\.0\.1:\d+/ : new RegExp(`https://127\\.0\\.0\\.1:${board.port}`));
const ldapLogin = () =>
  api('/v3/login', { method: 'POST', json: { login: 'jdoe', password: 'Corr3ct$horse', ldapServer: 'corp' } });

/**
 * The log since `from`, once it holds `pattern` and the request's access line, its last (wrangler passes
 * the worker's lines on a moment later): a second line of the same request would be there by then.
 */
async function logSince(from: number, pattern: RegExp): Promise<string> {
  const accessLine = /\\?"msg\\?":\\?"request\\?"/;
  return eventually(
    () => {
      const log = host.output().slice(from);
      return pattern.test(log) && accessLine.test(log) && log;
    },
    { what: `${pattern} and the access line in the host's log` },
  );
}

/** One WARNING line holding `cause`, and no ERROR, no stack, no "unhandled error". */
function expectOneWarning(log: string, cause: string): string {
  const lines = log.split('\n').filter((l) => l.includes(cause) && /WARNING/.test(l));
  expect(lines, log).toHaveLength(1);
  expect(log).not.toMatch(/\\?"level\\?":\\?"(ERROR|CRITICAL)|unhandled error|\\?"stack\\?"|TypeError: fetch failed/);
  return lines[0]!;
}

describe('bridge failures: a documented cause and one WARNING line naming the bridge and the reason', () => {
  it('the start line (Node) and readiness name the bridge', async () => {
    if (!edge())
      expect(host.output()).toMatch(new RegExp(`"msg":"serving [^"]*bridge: https://127\\.0\\.0\\.1:${board.port}\\)`));
    const r = await api('/health/ready');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ok');
    expect(r.body.checks.bridge).toBe('ok');
    expect(r.body.bridge.url).toMatch(bridgeUrl());
    expect(r.body.bridge.cause).toBeNull();
  });

  it('the bridge down (nothing listens): 503, BRIDGE_DOWN on Node (BRIDGE_UNREACHABLE on the edge)', async () => {
    await board.set({ kind: 'closed' });
    const cause = edge() ? 'BRIDGE_UNREACHABLE' : 'BRIDGE_DOWN';
    const from = host.output().length;
    const r = await ldapLogin();
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', cause });
    const line = expectOneWarning(await logSince(from, new RegExp(cause)), cause);
    expect(line).toMatch(bridgeUrl());
    if (!edge()) expect(line).toContain('connection refused (ECONNREFUSED)');
    const ready = await api('/health/ready');
    // Still 200 (the service answers without the bridge), but not "ok": degraded.
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'degraded', checks: { bridge: 'down' }, bridge: { cause } });
  });

  it("the bridge's certificate from another CA: 503, BRIDGE_CERT_UNTRUSTED on Node", async () => {
    await board.set({ kind: 'forward', port: portOf(impostor) });
    const cause = edge() ? 'BRIDGE_UNREACHABLE' : 'BRIDGE_CERT_UNTRUSTED';
    const from = host.output().length;
    const r = await ldapLogin();
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', cause });
    const line = expectOneWarning(await logSince(from, new RegExp(cause)), cause);
    expect(line).toMatch(bridgeUrl());
    if (!edge()) expect(line).toContain('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it("the service's CN not in BRIDGE_ALLOWED_CLIENTS: 503 BRIDGE_CLIENT_CERT_REFUSED on both hosts", async () => {
    await board.set({ kind: 'forward', port: portOf(pinned) });
    const from = host.output().length;
    const r = await ldapLogin();
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', cause: 'BRIDGE_CLIENT_CERT_REFUSED' });
    const line = expectOneWarning(await logSince(from, /BRIDGE_CLIENT_CERT_REFUSED/), 'BRIDGE_CLIENT_CERT_REFUSED');
    expect(line).toMatch(bridgeUrl());
    expect(line).toContain('BRIDGE_ALLOWED_CLIENTS');
  });

  it('a bridge that accepts and never answers: 504 BRIDGE_TIMEOUT on both hosts', async () => {
    await board.set({ kind: 'silent' });
    const from = host.output().length;
    const r = await ldapLogin();
    expect(r.status, JSON.stringify(r.body)).toBe(504);
    expect(r.body).toMatchObject({ code: 'GATEWAY_TIMEOUT', cause: 'BRIDGE_TIMEOUT' });
    const line = expectOneWarning(await logSince(from, /BRIDGE_TIMEOUT/), 'BRIDGE_TIMEOUT');
    expect(line).toMatch(bridgeUrl());
    expect(line).toContain('no answer within the timeout');
  }, 60_000);
});

describe('a login while another attempt holds the reservation', () => {
  it('is told that another attempt is in progress (not "too many failed logins"), with Retry-After', async () => {
    await board.set({ kind: 'silent' });
    const settings = (values: Json) => api('/v3/settings', { method: 'PATCH', auth: admin, json: { values } });
    expect((await settings({ AUTH_FAILED_COUNT: 1 })).status).toBe(200);
    try {
      // The first attempt holds the login's only reservation while the bridge does not answer.
      const connected = board.accepted;
      const first = ldapLogin();
      // It holds it once it calls the bridge.
      await eventually(() => board.accepted > connected, { what: 'the first attempt at the bridge' });
      const second = await ldapLogin();
      expect(second.status, JSON.stringify(second.body)).toBe(401);
      expect(second.body).toMatchObject({
        code: 'ACCOUNT_LOCKED',
        detail: 'another login attempt for this login is in progress; retry in a moment',
      });
      expect(second.body.title).not.toMatch(/failed/);
      expect(second.res.headers.get('Retry-After')).toBe('1');
      expect((await first).status).toBe(504);
      // Nothing was counted: the released reservation leaves the login free.
      await board.set({ kind: 'forward', port: Number(new URL(bridge.url).port) });
      expect((await ldapLogin()).body).toMatchObject({ cause: 'DIRECTORY_UNAVAILABLE' });
    } finally {
      expect((await settings({ AUTH_FAILED_COUNT: 3 })).status).toBe(200);
    }
  }, 60_000);
});

describe('expected failures behind a healthy bridge: one WARNING line, no ERROR, no stack', () => {
  it('a directory that is down: 502 DIRECTORY_UNAVAILABLE', async () => {
    await board.set({ kind: 'forward', port: Number(new URL(bridge.url).port) });
    const from = host.output().length;
    const r = await ldapLogin();
    expect(r.status, JSON.stringify(r.body)).toBe(502);
    expect(r.body).toMatchObject({ cause: 'DIRECTORY_UNAVAILABLE' });
    const line = expectOneWarning(await logSince(from, /LDAP directory failure/), 'DIRECTORY_UNAVAILABLE');
    expect(line).toContain('LDAP directory failure');
  });

  it(
    'an audit query with no log store configured: the embedded audit log answers, nothing logged as a ' + 'failure',
    async () => {
      const from = host.output().length;
      const r = await api('/v3/logs/user_activity/events', { auth: admin });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      // The edge host's output holds no worker lines unless asked (harness): the Node host is checked.
      if (!edge()) {
        const log = await logSince(from, /v3\/logs\/user_activity\/events/);
        expect(log).not.toMatch(/\\?"level\\?":\\?"(WARNING|ERROR|CRITICAL)|unhandled error|LOGSTORE_NOT_CONFIGURED/);
      }
    },
  );
});

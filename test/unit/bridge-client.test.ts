/** The worker's bridge client on the Node host, over real mutual TLS to the bridge. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildBridge } from '../../ldap-bridge/src/app.js';
import { issueCert, makeCa, makeDevCertificates } from '../../scripts/dev-certs.js';
import { createBridgeClient } from '../../worker/src/bridge/client.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { nodeBridgeTransport } from '../../worker/node/bridge-transport.js';
import type { ProblemError } from '../../worker/src/http/problem.js';
import { freePort, startEdgeTestHost, startNodeTestHost } from '../harness/hosts.js';
import { edgeBridgeTransport } from '../../worker/src/bridge/edge-transport.js';

let dir: string;
let certs: ReturnType<typeof makeDevCertificates>;
let bridge: FastifyInstance;
let bridgeUrl: string;
let silent: TlsServer;
let silentUrl: string;

const clientEnv = (url: string, client = certs.client) => ({
  AUTH_BRIDGE_URL: url,
  AUTH_BRIDGE_TLS_CERT: client.cert,
  AUTH_BRIDGE_TLS_KEY: client.key,
  AUTH_BRIDGE_TLS_CA: certs.ca.cert,
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-client-'));
  certs = makeDevCertificates(dir);
  const read = (p: string) => readFileSync(p);
  bridge = buildBridge({
    mtls: { key: read(certs.server.key), cert: read(certs.server.cert), ca: read(certs.ca.cert) },
  });
  await bridge.listen({ host: '127.0.0.1', port: 0 });
  bridgeUrl = `https://127.0.0.1:${(bridge.server.address() as AddressInfo).port}`;
  // A bridge that completes the handshake and then never answers.
  silent = createTlsServer(
    {
      key: read(certs.server.key),
      cert: read(certs.server.cert),
      ca: read(certs.ca.cert),
      requestCert: true,
      rejectUnauthorized: true,
    },
    () => {},
  );
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  silentUrl = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  silent?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('bridge client', () => {
  for (const [name, start] of [
    ['the Node host', startNodeTestHost],
    ['the edge host (workerd, through the mTLS binding emulator)', startEdgeTestHost],
  ] as const) {
    it(`${name} reports the bridge in its readiness: ok, then down when it stops`, async () => {
      const spare = buildBridge({
        mtls: {
          key: readFileSync(certs.server.key),
          cert: readFileSync(certs.server.cert),
          ca: readFileSync(certs.ca.cert),
        },
      });
      await spare.listen({ host: '127.0.0.1', port: 0 });
      const host = await start(clientEnv(`https://127.0.0.1:${(spare.server.address() as AddressInfo).port}`));
      try {
        const ready = async () =>
          ((await (await fetch(`${host.url}/health/ready`)).json()) as { checks: { bridge: string } }).checks.bridge;
        expect(await ready()).toBe('ok');
        await spare.close();
        expect(await ready()).toBe('down');
      } finally {
        await host.stop();
      }
    }, 120_000);
  }

  it(
    'the edge transport without the mtls_certificates binding refuses a non-loopback bridge URL ' +
      'instead of calling it without a certificate',
    async () => {
      const client = createBridgeClient(edgeBridgeTransport('https://bridge.example.internal:8443', undefined)!);
      expect(await client.status()).toBe('down');
      await expect(client.call('/v1/ldap/test', {}, z.unknown(), 2000)).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
      });
    },
  );

  it('a client certificate of another CA is refused by the bridge: down, and a 503 problem for calls', async () => {
    const otherCa = makeCa(join(dir, 'other'), 'other-ca');
    const foreign = issueCert(join(dir, 'other'), otherCa, 'foreign', { cn: 'auth-worker', usage: 'client' });
    const client = createBridgeClient(nodeBridgeTransport(parseEnvironment(clientEnv(bridgeUrl, foreign)))!, bridgeUrl);
    expect(await client.probe!()).toEqual({ state: 'down', cause: 'BRIDGE_CLIENT_CERT_REFUSED' });
    const err = await client.call('/v1/ldap/test', {}, z.unknown(), 2000).catch((e: ProblemError) => e);
    expect(err).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      extensions: { cause: 'BRIDGE_CLIENT_CERT_REFUSED' },
    });
    expect((err as ProblemError).log).toMatchObject({
      fields: { bridge: bridgeUrl, cause: 'BRIDGE_CLIENT_CERT_REFUSED' },
    });
  });

  it('a bridge that never answers: 504 BRIDGE_TIMEOUT after the timeout, never a hang', async () => {
    const client = createBridgeClient(nodeBridgeTransport(parseEnvironment(clientEnv(silentUrl)))!, silentUrl);
    await expect(client.call('/v1/ldap/test', {}, z.unknown(), 300)).rejects.toMatchObject({
      code: 'GATEWAY_TIMEOUT',
      status: 504,
      extensions: { cause: 'BRIDGE_TIMEOUT' },
      log: { msg: `bridge ${silentUrl}: no answer within the timeout` },
    });
  });

  it('a closed port: 503 BRIDGE_DOWN, the log line names the URL and "connection refused"', async () => {
    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const client = createBridgeClient(nodeBridgeTransport(parseEnvironment(clientEnv(url)))!, url);
    expect(await client.probe!()).toEqual({ state: 'down', cause: 'BRIDGE_DOWN' });
    await expect(client.call('/v1/ldap/test', {}, z.unknown(), 2000)).rejects.toMatchObject({
      status: 503,
      extensions: { cause: 'BRIDGE_DOWN' },
      log: { msg: `bridge ${url}: connection refused (ECONNREFUSED)` },
    });
  });

  it('a bridge certificate of another CA: 503 BRIDGE_CERT_UNTRUSTED', async () => {
    const otherCa = makeCa(join(dir, 'other-server'), 'other-server-ca');
    const server = issueCert(join(dir, 'other-server'), otherCa, 'srv', { cn: 'ldap-bridge', usage: 'server' });
    const impostor = buildBridge({
      mtls: { key: readFileSync(server.key), cert: readFileSync(server.cert), ca: readFileSync(certs.ca.cert) },
    });
    await impostor.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `https://127.0.0.1:${(impostor.server.address() as AddressInfo).port}`;
      const client = createBridgeClient(nodeBridgeTransport(parseEnvironment(clientEnv(url)))!, url);
      expect(await client.probe!()).toEqual({ state: 'down', cause: 'BRIDGE_CERT_UNTRUSTED' });
      await expect(client.call('/v1/ldap/test', {}, z.unknown(), 2000)).rejects.toMatchObject({
        status: 503,
        extensions: { cause: 'BRIDGE_CERT_UNTRUSTED' },
        log: { fields: { reason: expect.stringContaining('UNABLE_TO_VERIFY_LEAF_SIGNATURE') } },
      });
    } finally {
      await impostor.close();
    }
  });

  it("a bridge whose BRIDGE_ALLOWED_CLIENTS leaves out the service's CN: 503 BRIDGE_CLIENT_CERT_REFUSED", async () => {
    const pinned = buildBridge({
      mtls: {
        key: readFileSync(certs.server.key),
        cert: readFileSync(certs.server.cert),
        ca: readFileSync(certs.ca.cert),
        allowedSubjects: ['someone-else'],
      },
    });
    await pinned.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `https://127.0.0.1:${(pinned.server.address() as AddressInfo).port}`;
      const client = createBridgeClient(nodeBridgeTransport(parseEnvironment(clientEnv(url)))!, url);
      expect(await client.probe!()).toEqual({ state: 'down', cause: 'BRIDGE_CLIENT_CERT_REFUSED' });
      await expect(client.call('/v1/ldap/test', {}, z.unknown(), 2000)).rejects.toMatchObject({
        status: 503,
        extensions: { cause: 'BRIDGE_CLIENT_CERT_REFUSED' },
        log: { fields: { reason: expect.stringContaining('BRIDGE_ALLOWED_CLIENTS') } },
      });
    } finally {
      await pinned.close();
    }
  });

  it('a missing client certificate file names the service variable AUTH_BRIDGE_TLS_CERT', () => {
    const env = { ...clientEnv(bridgeUrl), AUTH_BRIDGE_TLS_CERT: join(dir, 'no-such.pem') };
    expect(() => nodeBridgeTransport(parseEnvironment(env))).toThrow(/^cannot read AUTH_BRIDGE_TLS_CERT /);
  });

  it('an unknown path of a healthy bridge: 502', async () => {
    const client = createBridgeClient(nodeBridgeTransport(parseEnvironment(clientEnv(bridgeUrl)))!);
    expect(await client.status()).toBe('ok');
    await expect(client.call('/no-such-capability', {}, z.unknown(), 2000)).rejects.toMatchObject({
      code: 'BAD_GATEWAY',
    });
  });

  it('unset BRIDGE_URL: no transport (readiness says not-configured)', () => {
    expect(nodeBridgeTransport(parseEnvironment({}))).toBeUndefined();
  });
});

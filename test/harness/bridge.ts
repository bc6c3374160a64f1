/**
 * A real bridge for the HTTP suites: development certificates in a temporary folder, the Fastify
 * bridge over mutual TLS on a loopback port, and the environment a host needs to reach it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildBridge, type BridgeOptions } from '../../ldap-bridge/src/app.js';
import { makeDevCertificates } from '../../scripts/dev-certs.js';

export interface TestBridge {
  url: string;
  app: FastifyInstance;
  certs: ReturnType<typeof makeDevCertificates>;
  /** AUTH_BRIDGE_URL and AUTH_BRIDGE_TLS_* for a test host (the edge harness adds the binding emulator). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts a bridge over mutual TLS; `options` adds bridge options (e.g. ERRTRACK_CA for the relay). */
export async function startTestBridge(options: Omit<BridgeOptions, 'mtls'> = {}): Promise<TestBridge> {
  const dir = mkdtempSync(join(tmpdir(), 'test-bridge-'));
  const certs = makeDevCertificates(dir);
  const read = (p: string) => readFileSync(p);
  const app = buildBridge({
    ...options,
    mtls: { key: read(certs.server.key), cert: read(certs.server.cert), ca: read(certs.ca.cert) },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    url,
    app,
    certs,
    env: {
      AUTH_BRIDGE_URL: url,
      AUTH_BRIDGE_TLS_CERT: certs.client.cert,
      AUTH_BRIDGE_TLS_KEY: certs.client.key,
      AUTH_BRIDGE_TLS_CA: certs.ca.cert,
    },
    async stop() {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

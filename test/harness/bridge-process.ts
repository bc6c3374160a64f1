/**
 * The bridge as its own process (`ldap-bridge/src/main.ts`, as `npm run bridge` runs it), for the
 * fault drills: it can be killed with SIGKILL while requests are in flight, and started again on
 * the same port with the same certificates, as an operator's restart would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { makeDevCertificates } from '../../scripts/dev-certs.js';
import { freePort } from './hosts.js';

export interface BridgeProcess {
  url: string;
  /** AUTH_BRIDGE_URL and AUTH_BRIDGE_TLS_* for a test host. */
  env: Record<string, string>;
  /** SIGKILL: every connection drops at once, nothing is answered. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after kill; nothing when it runs). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Starts the bridge process; `logstore` gives it the store's CA and credentials (its environment), `webhooks`
 * the webhook relay's CA bundle and allow-list (BRIDGE_WEBHOOK_CA, BRIDGE_WEBHOOK_HOSTS).
 */
export async function startBridgeProcess(
  logstore: {
    ca: string;
    username?: string;
    password?: string;
    /** LOGSTORE_ALLOWED_URLS (required by the bridge with credentials). */
    allowedUrls?: string[];
  },
  webhooks?: { ca: string; hosts: string[] },
): Promise<BridgeProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-proc-'));
  const certs = makeDevCertificates(dir);
  const caFile = join(dir, 'logstore-ca.pem');
  writeFileSync(caFile, logstore.ca);
  const webhookCaFile = join(dir, 'webhook-ca.pem');
  if (webhooks) writeFileSync(webhookCaFile, webhooks.ca);
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const c = spawn(process.execPath, ['--import', 'tsx', 'ldap-bridge/src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        BRIDGE_HOST: '127.0.0.1',
        BRIDGE_PORT: String(port),
        BRIDGE_TLS_KEY: certs.server.key,
        BRIDGE_TLS_CERT: certs.server.cert,
        BRIDGE_TLS_CA: certs.ca.cert,
        LOGSTORE_CA_FILE: caFile,
        ...(logstore.username ? { LOGSTORE_USERNAME: logstore.username, LOGSTORE_PASSWORD: logstore.password } : {}),
        ...(logstore.allowedUrls ? { LOGSTORE_ALLOWED_URLS: logstore.allowedUrls.join(';') } : {}),
        ...(webhooks ? { BRIDGE_WEBHOOK_CA: webhookCaFile, BRIDGE_WEBHOOK_HOSTS: webhooks.hosts.join(',') } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    let out = '';
    let onData = (_d: Buffer) => {};
    await new Promise<void>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`the bridge did not start:\n${out}`)), 30_000);
      onData = (d: Buffer) => {
        out += d.toString();
        if (out.includes('Server listening')) {
          clearTimeout(timer);
          res();
        }
      };
      c.stdout?.on('data', onData);
      c.stderr?.on('data', onData);
      c.once('exit', (code) => {
        clearTimeout(timer);
        rej(new Error(`the bridge exited with ${code}:\n${out}`));
      });
    });
    // Keep reading, so a full pipe never stalls it, but no longer keep or search what it writes: the whole
    // output, kept and searched again at each line, grew with every line a long drill made the bridge log.
    c.stdout?.off('data', onData);
    c.stderr?.off('data', onData);
    c.stdout?.resume();
    c.stderr?.resume();
  };
  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((res) => {
      c.once('exit', () => res());
      c.kill('SIGKILL');
    });
  };
  await start();
  return {
    url,
    env: {
      AUTH_BRIDGE_URL: url,
      AUTH_BRIDGE_TLS_CERT: certs.client.cert,
      AUTH_BRIDGE_TLS_KEY: certs.client.key,
      AUTH_BRIDGE_TLS_CA: certs.ca.cert,
    },
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

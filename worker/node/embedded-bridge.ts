/**
 * `npm
 * start` out of the box (docs/operations-bridge.md, "In short"): while BRIDGE_URL is empty and BRIDGE_EMBEDDED is on,
 * the Node host runs a development bridge on loopback, over the same mutual TLS as production, with the development
 * certificates beside BRIDGE_TLS_CERT (made with openssl when absent). LDAP then works as soon as an LDAP server record
 * exists. Production runs the bridge on-prem (docs/operations-bridge.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { buildBridge } from '../../ldap-bridge/src/app.js';
import { logstoreCredentialsFromEnv } from '../../ldap-bridge/src/logstore.js';
import { mailOptionsFromEnv } from '../../ldap-bridge/src/mail.js';
import { webhookOptionsFromEnv } from '../../ldap-bridge/src/webhooks.js';
import { makeDevCertificates } from '../../scripts/dev-certs.js';
import type { ConfigSnapshot } from '../src/config/index.js';
import { loadNodeEnv } from './env.js';

export interface EmbeddedBridge {
  url: string;
  close(): Promise<void>;
}

/** Starts the development bridge, or returns undefined when a bridge is configured or it is off. */
export async function startEmbeddedBridge(config: ConfigSnapshot): Promise<EmbeddedBridge | undefined> {
  if (config.get('BRIDGE_URL') !== '' || !config.get('BRIDGE_EMBEDDED')) return undefined;
  const dir = dirname(config.get('BRIDGE_TLS_CERT'));
  const server = { key: join(dir, 'bridge-server.key'), cert: join(dir, 'bridge-server.pem') };
  const needed = [
    config.get('BRIDGE_TLS_CERT'),
    config.get('BRIDGE_TLS_KEY'),
    config.get('BRIDGE_TLS_CA'),
    server.key,
    server.cert,
  ];
  if (!needed.every((p) => existsSync(p))) {
    const made = makeDevCertificates(resolve(dir));
    const same = (a: string, b: string) => resolve(a) === resolve(b);
    if (
      !same(made.client.cert, config.get('BRIDGE_TLS_CERT')) ||
      !same(made.client.key, config.get('BRIDGE_TLS_KEY')) ||
      !same(made.ca.cert, config.get('BRIDGE_TLS_CA'))
    ) {
      throw new Error(
        `BRIDGE_EMBEDDED: made development certificates in ${dir}, but BRIDGE_TLS_CERT/KEY/CA name other files; ` +
          `point them at ${dir} or set BRIDGE_URL`,
      );
    }
  }
  // The log store's CA and credentials, as the on-prem bridge reads them (LOGSTORE_CA_FILE, ...).
  const logstore = logstoreCredentialsFromEnv(loadNodeEnv() as NodeJS.ProcessEnv, (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      throw new Error(`cannot read LOGSTORE_CA_FILE (${path})`);
    }
  });
  // The mail server's CA (MAIL_CA_FILE), read the same way.
  const mail = mailOptionsFromEnv(loadNodeEnv() as NodeJS.ProcessEnv, (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      throw new Error(`cannot read MAIL_CA_FILE (${path})`);
    }
  });
  // The webhook relay's CA and allow-list (BRIDGE_WEBHOOK_CA, BRIDGE_WEBHOOK_HOSTS), read the same way.
  const webhooks = webhookOptionsFromEnv(loadNodeEnv() as NodeJS.ProcessEnv, (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      throw new Error(`cannot read BRIDGE_WEBHOOK_CA (${path})`);
    }
  });
  const mtls = {
    key: readFileSync(server.key),
    cert: readFileSync(server.cert),
    ca: readFileSync(config.get('BRIDGE_TLS_CA')),
  };
  const app = buildBridge({ server: { logger: false }, logstore, mail, webhooks, mtls });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

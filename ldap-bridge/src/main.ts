/**
 * `npm run bridge`: the bridge on BRIDGE_HOST:BRIDGE_PORT (default 127.0.0.1:8443) over mutual TLS.
 * BRIDGE_TLS_KEY, BRIDGE_TLS_CERT and BRIDGE_TLS_CA are file paths (server key and certificate, and
 * the CA of the allowed clients); BRIDGE_ALLOWED_CLIENTS optionally pins client certificate CNs
 * (comma-separated). `npm run certs:dev` makes development certificates in data/certs. The log store's
 * CA and credentials: LOGSTORE_CA_FILE (a PEM file), LOGSTORE_USERNAME and LOGSTORE_PASSWORD, or
 * LOGSTORE_API_KEY, and LOGSTORE_ALLOWED_URLS (the only store nodes they are sent to, https://,
 * separated by ";"). The mail server's CA: MAIL_CA_FILE (a PEM file; else the system's roots). The webhook relay:
 * BRIDGE_WEBHOOK_CA (a PEM file, trusted besides the system roots) and BRIDGE_WEBHOOK_HOSTS (the only receivers: host
 * names, addresses or CIDR ranges, separated by commas; empty: none).
 */
import { readFileSync } from 'node:fs';
import { buildBridge } from './app.js';
import { logstoreCredentialsFromEnv } from './logstore.js';
import { mailOptionsFromEnv } from './mail.js';
import { webhookOptionsFromEnv } from './webhooks.js';

function file(name: string, fallback: string): Buffer {
  const path = process.env[name] ?? fallback;
  try {
    return readFileSync(path);
  } catch {
    console.error(`ldap-bridge: cannot read ${name} (${path}); run "npm run certs:dev" or set ${name}`);
    process.exit(1);
  }
}

function webhookOptions() {
  try {
    return webhookOptionsFromEnv(process.env, (path) => readFileSync(path, 'utf8'));
  } catch (err) {
    console.error(`ldap-bridge: ${(err as Error).message}`);
    process.exit(1);
  }
}

const host = process.env.BRIDGE_HOST ?? '127.0.0.1';
const port = Number(process.env.BRIDGE_PORT ?? 8443);
const app = buildBridge({
  server: { logger: true },
  logstore: logstoreCredentialsFromEnv(process.env, (path) => readFileSync(path, 'utf8')),
  mail: mailOptionsFromEnv(process.env, (path) => readFileSync(path, 'utf8')),
  webhooks: webhookOptions(),
  mtls: {
    key: file('BRIDGE_TLS_KEY', 'data/certs/bridge-server.key'),
    cert: file('BRIDGE_TLS_CERT', 'data/certs/bridge-server.pem'),
    ca: file('BRIDGE_TLS_CA', 'data/certs/dev-ca.pem'),
    allowedSubjects: process.env.BRIDGE_ALLOWED_CLIENTS?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  },
});
await app.listen({ host, port });
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void app.close().then(() => process.exit(0)));

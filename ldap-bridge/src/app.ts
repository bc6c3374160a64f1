/**
 * The on-prem bridge (architecture.md §1): a Fastify service that does what the worker cannot (LDAP
 * binds, SMTP, log-store queries, the error-tracking and webhook relays), reached only over mutual TLS.
 * This is its skeleton: the app factory and the health endpoint; the capabilities come as plugins.
 */
import type { Server } from 'node:https';
import Fastify, {
  type FastifyError,
  type FastifyHttpsOptions,
  type FastifyInstance,
  type FastifyServerOptions,
} from 'fastify';
import { httpsOptions, logRefusedHandshakes, pinSubjects, refusalLimiter, type MtlsOptions } from './mtls.js';
import { sendBridgeProblem, sendProblem } from './problem.js';
import { errtrackPlugin } from './errtrack.js';
import { ldapPlugin } from './ldap/index.js';
import { logstorePlugin, type LogstoreCredentials } from './logstore.js';
import { mailPlugin, type MailOptions } from './mail.js';
import { webhooksPlugin, type WebhookRelayOptions } from './webhooks.js';

export interface BridgeOptions {
  /** Fastify server options (logger, ...). */
  server?: FastifyServerOptions;
  /** Mutual TLS (required in production; tests of the routes alone may use inject() without it). */
  mtls?: MtlsOptions;
  /** The log store's CA and credentials (from the bridge's environment). */
  logstore?: LogstoreCredentials;
  /** The mail server's CA (MAIL_CA_FILE, from the bridge's environment). */
  mail?: MailOptions;
  /** The webhook relay's CA and allow-list (BRIDGE_WEBHOOK_CA, BRIDGE_WEBHOOK_HOSTS); absent: it refuses all. */
  webhooks?: WebhookRelayOptions;
  /** Version reported by the health endpoint. */
  version?: string;
}

/** Builds the bridge app without listening (tests use inject(); the entry calls listen). */
export function buildBridge(o: BridgeOptions = {}): FastifyInstance {
  const app: FastifyInstance = o.mtls
    ? (Fastify({
        logger: false,
        ...(o.server as FastifyHttpsOptions<Server>),
        https: httpsOptions(o.mtls),
      }) as unknown as FastifyInstance)
    : Fastify({ logger: false, ...o.server });
  // One bound for both kinds of refusal: a flood of bad clients never floods the log.
  const limit = refusalLimiter();
  if (o.mtls) logRefusedHandshakes(app, limit);
  pinSubjects(app, o.mtls?.allowedSubjects, limit);
  app.get('/health', async () => ({ status: 'ok', service: 'ldap-bridge', version: o.version ?? '0.1.0' }));
  void app.register(errtrackPlugin);
  void app.register(ldapPlugin);
  void app.register(logstorePlugin, { credentials: o.logstore });
  void app.register(mailPlugin, { options: o.mail });
  void app.register(webhooksPlugin, { options: o.webhooks });
  // One root error handler: whatever fails (malformed JSON, a body over a route's limit, a wrong
  // content type, a bug) is a problem+json answer; 5xx details go to the log only.
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) {
      req.log.error({ err }, 'bridge error');
      return sendProblem(reply, 500, 'INTERNAL', 'the bridge failed; see its log');
    }
    return sendProblem(reply, status, 'BAD_REQUEST', err.message);
  });
  app.setNotFoundHandler((req, reply) =>
    sendBridgeProblem(reply, 404, 'NOT_FOUND', 'Not found', `no endpoint at ${req.url.split('?')[0]}`),
  );
  return app;
}

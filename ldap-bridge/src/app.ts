/**
 * The on-prem bridge (DESIGN.md §1): a Fastify service that does what the worker cannot (LDAP
 * binds, SMTP, log-store queries, the error-tracking relay), reached only over mutual TLS.
 * This is its skeleton: the app factory and the health endpoint; the capabilities come as plugins.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';

export interface BridgeOptions {
  /** Fastify server options (logger, https with requestCert for mTLS, ...). */
  server?: FastifyServerOptions;
  /** Version reported by the health endpoint. */
  version?: string;
}

/** Builds the bridge app without listening (tests use inject(); the entry calls listen). */
export function buildBridge(o: BridgeOptions = {}): FastifyInstance {
  const app = Fastify({ logger: false, ...o.server });
  app.get('/health', async () => ({ status: 'ok', service: 'ldap-bridge', version: o.version ?? '0.1.0' }));
  app.setNotFoundHandler((req, reply) =>
    reply
      .code(404)
      .type('application/problem+json')
      .send({ type: 'urn:auth-service:problem:not-found', title: 'Not found', status: 404, detail: `no endpoint at ${req.url.split('?')[0]}` }),
  );
  return app;
}

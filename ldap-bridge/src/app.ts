/**
 * The on-prem bridge (DESIGN.md §1): a Fastify service that does what the worker cannot (LDAP
 * binds, SMTP, log-store queries, the error-tracking relay), reached only over mutual TLS.
 * This is its skeleton: the app factory and the health endpoint; the capabilities come as plugins.
 */
import type { Server } from 'node:https';
import Fastify, { type FastifyHttpsOptions, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { httpsOptions, pinSubjects, type MtlsOptions } from './mtls.js';
import { errtrackPlugin } from './errtrack.js';
import { ldapPlugin } from './ldap/index.js';

export interface BridgeOptions {
  /** Fastify server options (logger, ...). */
  server?: FastifyServerOptions;
  /** Mutual TLS (required in production; tests of the routes alone may use inject() without it). */
  mtls?: MtlsOptions;
  /** Version reported by the health endpoint. */
  version?: string;
}

/** Builds the bridge app without listening (tests use inject(); the entry calls listen). */
export function buildBridge(o: BridgeOptions = {}): FastifyInstance {
  const app: FastifyInstance = o.mtls
    ? (Fastify({ logger: false, ...(o.server as FastifyHttpsOptions<Server>), https: httpsOptions(o.mtls) }) as unknown as FastifyInstance)
    : Fastify({ logger: false, ...o.server });
  pinSubjects(app, o.mtls?.allowedSubjects);
  app.get('/health', async () => ({ status: 'ok', service: 'ldap-bridge', version: o.version ?? '0.1.0' }));
  void app.register(errtrackPlugin);
  void app.register(ldapPlugin);
  app.setNotFoundHandler((req, reply) =>
    reply
      .code(404)
      .type('application/problem+json')
      .send({ type: 'urn:auth-service:problem:not-found', title: 'Not found', status: 404, detail: `no endpoint at ${req.url.split('?')[0]}` }),
  );
  return app;
}

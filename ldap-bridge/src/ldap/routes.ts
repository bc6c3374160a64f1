/** The LDAP routes of the bridge: POST /v1/ldap/authenticate, /v1/ldap/groups and /v1/ldap/test. */
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyReply } from 'fastify';
import {
  LdapAuthenticateRequestSchema,
  LdapGroupsRequestSchema,
  LdapTestRequestSchema,
} from '../../../schema/bridge/index.js';
import { invalidBody, sendBridgeProblem, sendProblem } from '../problem.js';
import { authenticate, BlankPasswordError, groupsOfLogins, testConnection } from './directory.js';
import { DirectoryError } from './session.js';

/** The LDAP routes of the bridge. */
export const ldapPlugin: FastifyPluginAsync = async (app) => {
  // Scoped to these routes: body parse errors as problems, anything unexpected as a generic 500.
  app.setErrorHandler((err: { statusCode?: number; message?: string }, req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendProblem(reply, status, 'BAD_REQUEST', err.message ?? 'bad request');
    req.log.error({ err }, 'ldap route failed');
    return sendBridgeProblem(reply, 500, 'INTERNAL', 'Internal error', 'the bridge failed; see its log');
  });

  const fail = (reply: FastifyReply, log: FastifyBaseLogger, err: unknown, what: string) => {
    if (err instanceof BlankPasswordError) return sendProblem(reply, 400, 'BAD_REQUEST', err.message);
    // Every directory failure arrives classified; anything else is a bug of ours: a 500.
    if (!(err instanceof DirectoryError)) throw err;
    const e = err;
    log.warn(
      { code: e.code, detail: e.detail, cause: e.cause instanceof Error ? e.cause.message.split('\n')[0] : undefined },
      `ldap ${what}: directory failure`,
    );
    return sendProblem(reply, e.status, e.code, e.detail);
  };

  app.post('/v1/ldap/authenticate', async (req, reply) => {
    const parsed = LdapAuthenticateRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const { connection, login, password } = parsed.data;
    const t0 = performance.now();
    try {
      const res = await authenticate(connection, login, password, req.log);
      const reason = 'reason' in res ? res.reason : undefined;
      const activeDirectory = res.outcome === 'ok' ? res.activeDirectory : undefined;
      req.log.info(
        { outcome: res.outcome, reason, activeDirectory, ms: Math.round(performance.now() - t0) },
        'ldap authenticate',
      );
      return res;
    } catch (err) {
      return fail(reply, req.log, err, 'authenticate');
    }
  });

  app.post('/v1/ldap/groups', async (req, reply) => {
    const parsed = LdapGroupsRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const t0 = performance.now();
    try {
      const res = await groupsOfLogins(parsed.data.connection, parsed.data.logins);
      const missing = res.results.filter((r) => !r.found).length;
      req.log.info({ logins: res.results.length, missing, ms: Math.round(performance.now() - t0) }, 'ldap groups');
      return res;
    } catch (err) {
      return fail(reply, req.log, err, 'groups');
    }
  });

  app.post('/v1/ldap/test', async (req, reply) => {
    const parsed = LdapTestRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const res = await testConnection(parsed.data.connection);
    req.log.info({ ok: res.ok, failed: res.steps.find((s) => !s.ok)?.step }, 'ldap test');
    return res;
  });
};

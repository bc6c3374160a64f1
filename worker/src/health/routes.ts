/** Liveness and readiness probes. */
import { z } from '@hono/zod-openapi';
import { sql } from 'drizzle-orm';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { pipelineSummary } from '../logs/pipeline.js';
import { publicRoute } from '../auth/protected-route.js';
import { skeletonsFilling, skeletonsRemaining } from '../users/login-skeletons.js';

const Live = z.object({ status: z.literal('ok') }).openapi('Liveness');
const Ready = z
  .object({
    status: z.enum(['ok', 'degraded']).openapi({
      description:
        'degraded: a configured bridge is down, so LDAP logins, mail and the log store fail meanwhile; still 200, ' +
        'as the service answers everything else and every instance shares the one bridge ' +
        '(docs/operations-bridge.md, "Failures")',
    }),
    checks: z.object({
      database: z.literal('ok'),
      bridge: z
        .enum(['ok', 'down', 'not-configured'])
        .openapi({ description: 'reported, not required: the service answers without the bridge' }),
    }),
    bridge: z
      .object({
        url: z.string().openapi({ description: 'the bridge the service uses (AUTH_BRIDGE_URL, without credentials)' }),
        cause: z
          .string()
          .nullable()
          .openapi({
            description:
              'while down, why: BRIDGE_DOWN, BRIDGE_CERT_UNTRUSTED, BRIDGE_CLIENT_CERT_REFUSED, BRIDGE_TIMEOUT, ' +
              'BRIDGE_UNREACHABLE (the host cannot tell) or BRIDGE_NOT_HEALTHY; null while ok',
          }),
      })
      .nullable()
      .openapi({ description: 'null when no bridge is configured' }),
    auditPipeline: z
      .object({ depth: z.number().int(), oldestUndeliveredAgeSeconds: z.number().int().nullable() })
      .nullable()
      .openapi({
        description:
          'reported, never failing readiness: audit events waiting for the log store (all streams), the age of ' +
          'the oldest; null when unreadable. Details: GET /v3/logs/pipeline',
      }),
    loginSkeletons: z
      .object({
        remaining: z
          .number()
          .int()
          .openapi({
            description:
              'live accounts without a login skeleton: still to be filled by the backfill after an upgrade, or the ' +
              'newer of two look-alike logins, left for an administrator (named in the log)',
          }),
        filling: z.boolean().openapi({ description: 'a run of the backfill is under way (on any instance)' }),
      })
      .nullable()
      .openapi({
        description:
          'reported, never failing readiness: the backfill of the login skeletons after an upgrade (logins and ' +
          'look-alike checks are correct meanwhile: docs/architecture.md §6); null when unreadable',
      }),
  })
  .openapi('Readiness');

const live = publicRoute({
  method: 'get',
  operationId: 'getLiveness',
  path: '/health/live',
  tags: ['health'],
  summary: 'Liveness: the process answers',
  description: 'No authentication. Does not touch the database.',
  responses: { 200: { description: 'alive', content: { 'application/json': { schema: Live } } } },
});

const ready = publicRoute({
  method: 'get',
  operationId: 'getReadiness',
  path: '/health/ready',
  tags: ['health'],
  summary: 'Readiness: the database answers',
  description:
    'No authentication. 503 while libSQL does not answer; the bridge, the audit outbox and the backfill of login ' +
    'skeletons are reported only: `status` is `degraded` (200) while a configured bridge is down.',
  responses: {
    200: { description: 'ready', content: { 'application/json': { schema: Ready } } },
    ...problemResponses(503),
  },
});

/** Registers the health endpoints. */
export function registerHealth(app: App): void {
  app.openapi(live, (c) => c.json({ status: 'ok' as const }, 200));
  app.openapi(ready, async (c) => {
    const { bridge: bridgeClient } = c.var.scope;
    const db = c.var.scope.db;
    try {
      await db.run(sql`select 1`);
    } catch (err) {
      c.var.scope.logger.error('readiness: database check failed', { err });
      throw new ProblemError('SERVICE_UNAVAILABLE', { detail: 'the database does not answer' });
    }
    const probe = bridgeClient
      ? bridgeClient.probe
        ? await bridgeClient.probe()
        : { state: await bridgeClient.status() }
      : undefined;
    const bridge: 'ok' | 'down' | 'not-configured' = probe ? probe.state : 'not-configured';
    const named = bridgeClient ? { url: bridgeClient.url ?? '(bridge)', cause: probe?.cause ?? null } : null;
    const auditPipeline = await pipelineSummary(db, c.var.scope.now()).catch((err: unknown) => {
      c.var.scope.logger.warning('readiness: audit pipeline unreadable', { err });
      return null;
    });
    const loginSkeletons = await Promise.all([skeletonsRemaining(db), skeletonsFilling(db, c.var.scope.now())])
      .then(([remaining, filling]) => ({ remaining, filling }))
      .catch((err: unknown) => {
        c.var.scope.logger.warning('readiness: login skeletons unreadable', { err });
        return null;
      });
    return c.json(
      {
        status: bridge === 'down' ? ('degraded' as const) : ('ok' as const),
        checks: { database: 'ok' as const, bridge },
        bridge: named,
        auditPipeline,
        loginSkeletons,
      },
      200,
    );
  });
}

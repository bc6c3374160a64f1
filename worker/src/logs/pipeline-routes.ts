/**
 * GET /v3/logs/pipeline (docs/audit-logs.md, "Pipeline health"): the audit outbox per stream and the shipping job's
 * last run.
 */
import { z } from '@hono/zod-openapi';
import type { App } from '../http/context.js';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import { SHIPPING_JOB, shippingJobRun, streamPipelines } from './pipeline.js';
import { STREAMS, streamPattern, type StreamName } from './streams.js';

const StreamPipeline = z
  .object({
    stream: z.enum(Object.keys(STREAMS) as [StreamName, ...StreamName[]]),
    pattern: z.string().openapi({ example: 'svc-sec-user-activity-*' }),
    depth: z.number().int().openapi({ description: 'events waiting for delivery (not shipped, not dead letters)' }),
    oldestUndeliveredAt: z.string().nullable().openapi({ description: 'time of the oldest waiting event' }),
    oldestUndeliveredAgeSeconds: z.number().int().nullable(),
    deadLetters: z.number().int().openapi({ description: 'events the store refused for good (kept, never retried)' }),
    lastError: z
      .string()
      .nullable()
      .openapi({ description: 'the error of the waiting or dead event that failed most recently' }),
  })
  .openapi('AuditStreamPipeline');
const Pipeline = z
  .object({
    streams: z.array(StreamPipeline),
    shippingJob: z
      .object({
        name: z.literal(SHIPPING_JOB),
        lastRunAt: z.string().nullable(),
        lastDurationMs: z.number().int().nullable(),
        lastResult: z.unknown().openapi({ description: 'what the last run reported (JSON), or its error text' }),
        running: z.boolean(),
      })
      .nullable()
      .openapi({ description: 'null while the shipping job never ran against this database' }),
  })
  .openapi('AuditPipeline', {
    example: {
      streams: [
        {
          stream: 'user_activity',
          pattern: 'svc-sec-user-activity-*',
          depth: 3,
          oldestUndeliveredAt: '2026-11-26T10:00:00.000Z',
          oldestUndeliveredAgeSeconds: 42,
          deadLetters: 1,
          lastError: 'the log store answered 503',
        },
      ],
      shippingJob: {
        name: SHIPPING_JOB,
        lastRunAt: '2026-11-26T10:00:30.000Z',
        lastDurationMs: 120,
        lastResult: { shipped: 20 },
        running: false,
      },
    },
  });

const pipelineRoute = protectedRoute(adminOnly(superAccess.allowed, 'logs:read'), {
  method: 'get',
  operationId: 'getAuditPipelineHealth',
  path: '/v3/logs/pipeline',
  tags: ['logs'],
  summary: 'Health of the audit pipeline',
  description: [
    `Read from the outbox (libSQL), never from the store: per stream, the events waiting for delivery,`,
    `the age of the oldest, the dead letters and the last delivery error; and the last run of the shipping job`,
    `(\`${SHIPPING_JOB}\`).`,
  ].join(' '),
  responses: {
    200: { description: 'the pipeline', content: { 'application/json': { schema: Pipeline } } },
  },
});

/** Registers the pipeline health endpoint. */
export function registerLogPipeline(app: App): void {
  app.openapi(pipelineRoute, async (c) => {
    const now = c.var.scope.now();
    const [streams, job] = await Promise.all([
      streamPipelines(c.var.scope.db, now),
      shippingJobRun(c.var.scope.db, now),
    ]);
    return c.json(
      {
        streams: streams.map((s) => ({ ...s, pattern: streamPattern(c.var.scope.config, s.stream) })),
        shippingJob: job ? { name: SHIPPING_JOB, ...job } : null,
      },
      200,
    );
  });
}

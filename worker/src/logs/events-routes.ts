/**
 * The simple form (docs/audit-logs.md, "Simple form"): GET /v3/logs/{audit_log_type}/events finds events by user,
 * client IP, outcome, event types and time range without query DSL, a page at a time; /export streams
 * every match as NDJSON or CSV.
 */
import { z } from '@hono/zod-openapi';
import { protectedRoute } from '../auth/protected-route.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { decodeCursor, eventsPage, FilterFields, formOf, MAX_EVENTS_PAGE } from './events.js';
import { CSV_COLUMNS, exportEvents } from './export.js';
import { allowQueryParameters, knownStream } from './request-guards.js';
import { READERS, streamOf, TypeParam } from './route-common.js';
import { W } from './log-api-words.js';

const EventsQuery = z.object({
  ...FilterFields,
  size: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_EVENTS_PAGE)
    .default(50)
    .openapi({ description: W.pageSize, example: 50 }),
  cursor: z.string().max(1400).optional().openapi({ description: W.d14, example: 'WzE3OTc5NDg4MDAwMDAsImUxIl0' }),
});
const ExportQuery = z.object({
  ...FilterFields,
  format: z.enum(['ndjson', 'csv']).default('ndjson'),
});

const EventsPageSchema = z
  .object({
    items: z.array(z.record(z.string(), z.unknown())).openapi({ description: W.d15 }),
    nextCursor: z.string().nullable().openapi({ description: W.d16 }),
    total: z
      .object({ value: z.number().int(), relation: z.enum(['eq', 'gte']) })
      .nullable()
      .openapi({ description: W.d17 }),
  })
  .openapi('AuditEventsPage', {
    example: {
      items: [
        {
          '@timestamp': '2026-11-26T10:00:00.000Z',
          event: { id: 'e1', type: 'login.failure', outcome: 'failure' },
          subject: { login: 'alice' },
          source: { ip: '10.0.0.1' },
        },
      ],
      nextCursor: null,
      total: { value: 1, relation: 'eq' },
    },
  });
const base = { tags: ['logs'] };

const eventsRoute = protectedRoute(READERS, {
  ...base,
  method: 'get',
  operationId: 'findAuditEvents',
  path: '/v3/logs/{audit_log_type}/events',
  middleware: [knownStream, allowQueryParameters([...Object.keys(FilterFields), 'size', 'cursor'])],
  summary: W.s18,
  description: W.events,
  request: { params: TypeParam, query: EventsQuery },
  responses: {
    200: { description: 'a page of events', content: { 'application/json': { schema: EventsPageSchema } } },
    ...problemResponses(400, 404, 422, 429, 502, 503, 504),
  },
});

const exportRoute = protectedRoute(READERS, {
  ...base,
  method: 'get',
  operationId: 'exportAuditEvents',
  path: '/v3/logs/{audit_log_type}/export',
  middleware: [knownStream, allowQueryParameters([...Object.keys(FilterFields), 'format'])],
  summary: W.s19,
  description: W.export,
  request: { params: TypeParam, query: ExportQuery },
  responses: {
    200: {
      description: 'the events, streamed (Content-Disposition: attachment)',
      content: {
        'application/x-ndjson': {
          schema: z.string().openapi({
            example: '{"@timestamp":"2026-11-26T10:00:00.000Z","event":{"id":"e1","type":"login.failure"}}\n',
          }),
        },
        'text/csv': {
          schema: z.string().openapi({
            example: [
              `${CSV_COLUMNS.map(([h]) => h).join(',')}\r\n` +
                `2026-11-26T10:00:00.000Z,e1,login.failure,failure,,alice,10.0.0.1,"{""event"":{""id"":""e1""}}"\r\n`,
            ].join(' '),
          }),
        },
      },
    },
    ...problemResponses(400, 404, 422, 429, 502, 503, 504),
  },
});

/** Registers the simple form and the export. */
export function registerLogEvents(app: App): void {
  app.openapi(eventsRoute, async (c) => {
    const q = validated(c, 'query', EventsQuery);
    const form = formOf(q);
    const page = await eventsPage(c.var.scope, c.var.principal, streamOf(c), form, {
      size: q.size,
      ...(q.cursor !== undefined ? { after: decodeCursor(q.cursor) } : {}),
    });
    return c.json({ items: page.items, nextCursor: page.nextCursor, total: page.total }, 200);
  });

  app.openapi(exportRoute, async (c) => {
    const q = validated(c, 'query', ExportQuery);
    return exportEvents(c.var.scope, c.var.principal, streamOf(c), formOf(q), q.format);
  });
}

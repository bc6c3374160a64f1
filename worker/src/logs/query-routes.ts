/**
 * GET /v3/logs/audit_log_types, POST /v3/logs/{audit_log_type}/search and /field_caps (the
 * specification's logs endpoints): the caller's query DSL, checked against the allow-list, runs on
 * the type's configured index pattern only.
 */
import { z } from '@hono/zod-openapi';
import { protectedRoute } from '../auth/protected-route.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { checkFieldCapsBody, checkSearchBody } from './dsl-guard.js';
import { allowQueryParameters, knownStream } from './request-guards.js';
import { READERS, refused, streamOf, TypeParam } from './route-common.js';
import { logstoreConfigured, queryStore, searchTimeout, storeAnswer } from './store-query.js';
import { eventTypesOfStream } from './catalogue-docs.js';
import { STREAMS, type StreamName } from './streams.js';
import { W } from './log-api-words.js';

const AuditLogType = z
  .object({
    name: z.string().openapi({ example: 'user_activity' }),
    variable: z.string().openapi({ description: W.d1, example: 'AUDIT_USER_ACTIVITY_PATTERN' }),
    pattern: z.string().openapi({ description: W.d2, example: 'svc-sec-user-activity-*' }),
    description: z.string(),
    eventTypes: z
      .array(
        z
          .object({
            type: z.string().openapi({ example: 'login.failure' }),
            outcomes: z
              .array(z.enum(['success', 'failure', 'unknown']))
              .openapi({ description: '`event.outcome` values' }),
            description: z.string(),
            data: z.record(z.string(), z.string()).openapi({
              description: W.d3,
              example: { source: 'local, ldap or oidc' },
            }),
          })
          .openapi('AuditEventTypeDescription'),
      )
      .openapi({ description: W.d4 }),
  })
  .openapi('AuditLogType');
const AuditLogTypes = z
  .object({
    items: z.array(AuditLogType),
    logstoreConfigured: z.boolean().openapi({
      description: W.d5,
    }),
    storage: z.enum(['logstore', 'embedded']).openapi({
      description: W.d6,
    }),
    localRetentionDays: z.number().int().nullable().openapi({ description: W.d7, example: null }),
  })
  .openapi('AuditLogTypes', {
    example: {
      items: [
        {
          name: 'user_activity',
          variable: 'AUDIT_USER_ACTIVITY_PATTERN',
          pattern: 'svc-sec-user-activity-*',
          description: 'logins and logouts, refused logins, lockouts, sessions started and ended',
          eventTypes: [
            {
              type: 'login.failure',
              outcomes: ['failure'],
              description: 'a wrong password or an unknown login (subject.login: the login as given)',
              data: { source: 'local, ldap or oidc' },
            },
          ],
        },
      ],
      logstoreConfigured: true,
      storage: 'logstore',
      localRetentionDays: null,
    },
  });

const SearchBody = z.record(z.string(), z.unknown()).openapi('LogSearchBody', {
  description: W.searchBody,
  example: {
    query: {
      bool: {
        filter: [{ term: { 'event.outcome.keyword': 'failure' } }, { range: { '@timestamp': { gte: 'now-1d' } } }],
      },
    },
    sort: [{ '@timestamp': { order: 'desc' } }],
    size: 20,
  },
});
const FIELD = /^[\p{L}\p{N}@_.\-*]{1,256}$/u;
const FieldList = z
  .union([
    z
      .array(z.string().regex(FIELD, 'a field name or wildcard').openapi({ example: 'event.*' }))
      .min(1)
      .max(100)
      .refine((a) => a.join(',').length <= 4096, 'at most 4096 characters in all'),
    z
      .string()
      .max(4096)
      .refine((s) => s.split(',').every((f) => FIELD.test(f.trim())), 'field names or wildcards separated by commas'),
  ])
  .openapi({
    description: W.d8,
    example: ['event.*', 'actor.login'],
  });
const FieldCapsBody = z
  .object({
    fields: FieldList.optional(),
    index_filter: z.record(z.string(), z.unknown()).optional().openapi({ description: W.d9 }),
  })
  .catchall(z.unknown())
  .openapi('LogFieldCapsBody', { example: { fields: ['event.*', '@timestamp'] } });
const FieldCapsAnswer = z.record(z.string(), z.unknown()).openapi('LogFieldCapsAnswer', {
  description: W.d10,
  example: {
    indices: ['svc-sec-user-activity-2026.11.26'],
    fields: {
      'event.type': { text: { type: 'text', searchable: true, aggregatable: false } },
      'event.type.keyword': { keyword: { type: 'keyword', searchable: true, aggregatable: true } },
    },
  },
});
const StoreAnswer = z.record(z.string(), z.unknown()).openapi('LogStoreAnswer', {
  description: W.d11,
  example: {
    took: 3,
    timed_out: false,
    hits: {
      total: { value: 1, relation: 'eq' },
      hits: [
        {
          _index: 'svc-sec-user-activity-2026.11.26',
          _id: 'e1',
          _source: { '@timestamp': '2026-11-26T10:00:00.000Z', event: { type: 'login.failure', outcome: 'failure' } },
        },
      ],
    },
  },
});

const queryMiddleware = [knownStream, allowQueryParameters([])];
const base = { tags: ['logs'] };
const errors = problemResponses(400, 404, 413, 415, 422, 429, 502, 503, 504);

const typesRoute = protectedRoute(READERS, {
  ...base,
  method: 'get',
  operationId: 'listAuditLogTypes',
  path: '/v3/logs/audit_log_types',
  summary: 'Audit log types',
  description: W.types,
  responses: {
    200: { description: 'the types', content: { 'application/json': { schema: AuditLogTypes } } },
  },
});

const searchRoute = protectedRoute(READERS, {
  ...base,
  method: 'post',
  operationId: 'searchAuditLog',
  path: '/v3/logs/{audit_log_type}/search',
  middleware: queryMiddleware,
  summary: W.s12,
  description: W.search,
  request: { params: TypeParam, body: { required: true, content: { 'application/json': { schema: SearchBody } } } },
  responses: {
    200: { description: "the store's search answer", content: { 'application/json': { schema: StoreAnswer } } },
    ...errors,
  },
});

const fieldCapsRoute = protectedRoute(READERS, {
  ...base,
  method: 'post',
  operationId: 'getAuditLogFieldCaps',
  path: '/v3/logs/{audit_log_type}/field_caps',
  middleware: queryMiddleware,
  summary: W.s13,
  description: W.fieldCaps,
  request: { params: TypeParam, body: { required: true, content: { 'application/json': { schema: FieldCapsBody } } } },
  responses: {
    200: { description: "the store's field_caps answer", content: { 'application/json': { schema: FieldCapsAnswer } } },
    ...errors,
  },
});

/** Registers the audit log types and the query DSL endpoints. */
export function registerLogQueries(app: App): void {
  app.openapi(typesRoute, (c) => {
    const config = c.var.scope.config;
    const items = Object.entries(STREAMS).map(([name, s]) => ({
      name,
      variable: s.variable,
      pattern: config.get(s.variable),
      description: s.description,
      eventTypes: eventTypesOfStream(name as StreamName),
    }));
    const configured = logstoreConfigured(config);
    return c.json(
      {
        items,
        logstoreConfigured: configured,
        storage: configured ? ('logstore' as const) : ('embedded' as const),
        localRetentionDays: configured ? null : config.get('AUDIT_LOCAL_RETENTION_DAYS'),
      },
      200,
    );
  });

  app.openapi(searchRoute, async (c) => {
    const body = validated(c, 'json', SearchBody);
    const problems = checkSearchBody(body);
    if (problems.length > 0) throw refused(problems);
    const answer = storeAnswer(
      await queryStore(c.var.scope, c.var.principal, streamOf(c), {
        operation: 'search',
        body: { ...body, timeout: searchTimeout(c.var.scope.config) },
      }),
    );
    return c.json(answer.body, 200);
  });

  app.openapi(fieldCapsRoute, async (c) => {
    const { fields, ...body } = validated(c, 'json', FieldCapsBody);
    const problems = checkFieldCapsBody(body);
    if (problems.length > 0) throw refused(problems);
    const list =
      fields === undefined
        ? '*'
        : Array.isArray(fields)
          ? fields.join(',')
          : fields
              .split(',')
              .map((f) => f.trim())
              .join(',');
    const answer = storeAnswer(
      await queryStore(c.var.scope, c.var.principal, streamOf(c), { operation: 'field_caps', body, fields: list }),
    );
    return c.json(answer.body, 200);
  });
}

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
import { checkFieldCapsBody, checkSearchBody, MAX_RESULT_WINDOW } from './dsl-guard.js';
import { allowQueryParameters, knownStream } from './request-guards.js';
import { READERS, refused, streamOf, TypeParam } from './route-common.js';
import { logstoreConfigured, queryStore, searchTimeout, storeAnswer } from './store-query.js';
import { CATALOGUE_SECTION, eventTypesOfStream } from './catalogue-docs.js';
import { STREAMS, type StreamName } from './streams.js';

const AuditLogType = z
  .object({
    name: z.string().openapi({ example: 'user_activity' }),
    variable: z
      .string()
      .openapi({ description: 'the variable holding the index pattern', example: 'AUDIT_USER_ACTIVITY_PATTERN' }),
    pattern: z.string().openapi({ description: 'the effective index pattern', example: 'svc-sec-user-activity-*' }),
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
              description: 'the fields of `data`, each with its meaning',
              example: { source: 'local, ldap or oidc' },
            }),
          })
          .openapi('AuditEventTypeDescription'),
      )
      .openapi({ description: 'the event types this log records (the catalogue, audit/catalogue.ts)' }),
  })
  .openapi('AuditLogType');
const AuditLogTypes = z
  .object({
    items: z.array(AuditLogType),
    logstoreConfigured: z.boolean().openapi({
      description: 'false while LOGSTORE_URLS is the placeholder: the embedded audit log answers the queries',
    }),
    storage: z.enum(['logstore', 'embedded']).openapi({
      description:
        '`embedded`: no log store is configured, and the events are kept in the database for ' +
        '`localRetentionDays` days (AUDIT_LOCAL_RETENTION_DAYS); the query DSL answers a subset ' +
        '(docs/audit-logs-embedded.md)',
    }),
    localRetentionDays: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'AUDIT_LOCAL_RETENTION_DAYS while the storage is `embedded`, else null', example: null }),
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
  description: [
    `The store's _search query DSL, checked against the allow-list (docs/audit-logs.md): query, post_filter,`,
    `from, size (from + size ≤ ${MAX_RESULT_WINDOW}), sort, _source, aggs, track_total_hits, search_after.`,
    `Refused with 422 naming the key: scripts, lookups into other indices, pit, suggest, rescore, profile,`,
    `explain, slice,`,
    `stored_fields, docvalue_fields, timeout and anything unlisted.`,
  ].join(' '),
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
    description: 'the fields to describe (wildcards allowed); default `*`',
    example: ['event.*', 'actor.login'],
  });
const FieldCapsBody = z
  .object({
    fields: FieldList.optional(),
    index_filter: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: 'a query (allow-listed like search queries): only indices with matching documents' }),
  })
  .catchall(z.unknown())
  .openapi('LogFieldCapsBody', { example: { fields: ['event.*', '@timestamp'] } });
const FieldCapsAnswer = z.record(z.string(), z.unknown()).openapi('LogFieldCapsAnswer', {
  description: "The store's answer, passed back as it is.",
  example: {
    indices: ['svc-sec-user-activity-2026.11.26'],
    fields: {
      'event.type': { text: { type: 'text', searchable: true, aggregatable: false } },
      'event.type.keyword': { keyword: { type: 'keyword', searchable: true, aggregatable: true } },
    },
  },
});
const StoreAnswer = z.record(z.string(), z.unknown()).openapi('LogStoreAnswer', {
  description: "The store's answer, passed back as it is.",
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

const FAILURES = [
  `The store's own refusal of the query is 400 QUERY_REJECTED with its reason (\`storeError\`); its 403 (the proxy`,
  `role may not read these indices), 404 and 429 keep their status; 502 when every node of LOGSTORE_URLS failed,`,
  `the store's certificate was not verified, or it answered another error (\`upstreamStatus\`); 503 when`,
  `LOGSTORE_URLS names a node outside the bridge's LOGSTORE_ALLOWED_URLS (\`cause\` LOGSTORE_URL_NOT_ALLOWED), or`,
  `the bridge is not configured or unreachable; 504 past LOGSTORE_TIMEOUT on every node.`,
  `While LOGSTORE_URLS is the placeholder, the embedded audit log answers from the database: the query DSL`,
  `subset of docs/audit-logs-embedded.md (match_all, match_none, term, terms, ids, exists, prefix, range, bool,`,
  `constant_score; sort by @timestamp and event.id; from, size, search_after, _source, track_total_hits,`,
  `post_filter); anything else is 422 VALIDATION with \`cause\` LOGSTORE_REQUIRED naming each key (\`errors\`).`,
].join(' ');
const COMMON = [
  `The query runs on the type's configured index pattern only (404 for any other type), as`,
  `the caller: the login goes to the store as \`x-proxy-user\`, the value of the account attribute named by`,
  `LOGSTORE_USER_ROLE_ATTRIBUTE as \`x-proxy-roles\`. No query parameters (422 naming each). Bodies over`,
  `AUTH_MAX_BODY_SIZE (64 KiB by default): 413, before they are buffered; nested deeper than 64 levels: 422.`,
].join(' ');

const queryMiddleware = [knownStream, allowQueryParameters([])];
const base = { tags: ['logs'] };
const errors = problemResponses(400, 404, 413, 415, 422, 429, 502, 503, 504);

const typesRoute = protectedRoute(READERS, {
  ...base,
  method: 'get',
  operationId: 'listAuditLogTypes',
  path: '/v3/logs/audit_log_types',
  summary: 'Audit log types',
  description:
    [
      `One type per AUDIT_*_PATTERN variable, with its effective index pattern, what it`,
      `records, and its event types (\`eventTypes\`: outcomes, description, \`data\` fields).`,
    ].join(' ') + CATALOGUE_SECTION,
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
  summary: 'Search an audit log (query DSL)',
  description:
    [
      `${COMMON} The worker adds a server-side \`timeout\` (80% of LOGSTORE_TIMEOUT; the answer then says`,
      `\`timed_out\`). ${FAILURES}`,
    ].join(' ') + CATALOGUE_SECTION,
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
  summary: 'Field capabilities of an audit log',
  description:
    [
      `${COMMON} \`fields\` goes in the body (a list, or a comma-separated string; default \`*\`), with an optional`,
      `\`index_filter\` query. ${FAILURES}`,
    ].join(' ') + CATALOGUE_SECTION,
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

/**
 * The words of the audit logs (/v3/logs) in the API description (query-routes.ts, events-routes.ts; with the event
 * catalogue's table, which the edge then never computes): their summaries and descriptions. The document is
 * generated at build time on the Node host (architecture.md §10), so the edge script needs none of them:
 * wrangler.toml's [alias] replaces this module there with worker/edge-aliases/log-api-words.js (empty strings), as
 * for the webhooks' words (docs/performance.md, "The edge bundle").
 */
import { catalogueMarkdown } from '../audit/catalogue.js';
import { MAX_RESULT_WINDOW } from './dsl-guard.js';
import { MAX_EVENTS_PAGE } from './events.js';
import { CSV_COLUMNS, EXPORT_MAX_EVENTS, EXPORT_PAGE_SIZE } from './export.js';

/** The catalogue's section of the logs endpoints' descriptions (a markdown table; computed once, on Node only). */
export const CATALOGUE_SECTION = [
  '',
  '',
  '**Event types** (`event.type`; `event.stream` is the log type; the document shape is in',
  'architecture.md §5.1):',
  '',
  catalogueMarkdown(),
].join('\n');
const FORM = [
  `Filters (all optional, combined with AND): \`user\` (actor or subject login, exact), \`ip\`, \`outcome\`,`,
  `\`type\` (comma-separated, any of), \`from\` (inclusive) and \`to\` (exclusive) in ISO 8601. Other query`,
  `parameters: 422 naming each.`,
].join(' ');
const EVENTS_FAILURES = [
  `The store down (every node) or its certificate refused: 502; past LOGSTORE_TIMEOUT: 504; a node outside the`,
  `bridge's LOGSTORE_ALLOWED_URLS (\`cause\` LOGSTORE_URL_NOT_ALLOWED), or the bridge not configured or`,
  `unreachable: 503. While LOGSTORE_URLS is the placeholder, the embedded audit log answers from the database`,
  `(docs/audit-logs-embedded.md).`,
].join(' ');
const QUERY_FAILURES = [
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

export const W: Record<string, string> = {
  d1: 'the variable holding the index pattern',
  d2: 'the effective index pattern',
  d3: 'the fields of `data`, each with its meaning',
  d4: 'the event types this log records (the catalogue, audit/catalogue.ts)',
  d5: 'false while LOGSTORE_URLS is the placeholder: the embedded audit log answers the queries',
  d6:
    '`embedded`: no log store is configured, and the events are kept in the database for ' +
    '`localRetentionDays` days (AUDIT_LOCAL_RETENTION_DAYS); the query DSL answers a subset ' +
    '(docs/audit-logs-embedded.md)',
  d7: 'AUDIT_LOCAL_RETENTION_DAYS while the storage is `embedded`, else null',
  d8: 'the fields to describe (wildcards allowed); default `*`',
  d9: 'a query (allow-listed like search queries): only indices with matching documents',
  d10: "The store's answer, passed back as it is.",
  d11: "The store's answer, passed back as it is.",
  s12: 'Search an audit log (query DSL)',
  s13: 'Field capabilities of an audit log',
  d14: 'the nextCursor of the previous page',
  d15: 'the events as stored, newest first',
  d16: 'pass as `cursor` for the next page; null after the last',
  d17: 'matching events as the store counts them (up to 10,000 exactly, then `gte`)',
  s18: 'Find audit events (simple form)',
  s19: 'Export audit events (NDJSON or CSV)',

  pageSize: `page size, at most ${MAX_EVENTS_PAGE}`,
  events:
    [
      `${FORM} Newest first (\`@timestamp\`, then \`event.id\`), \`size\` per page (default 50,`,
      `at most ${MAX_EVENTS_PAGE}); \`nextCursor\` continues after the page's last event (search_after), so ` +
        `pages never`,
      `skip or repeat an event. A cursor this service did not make: 422. ${EVENTS_FAILURES}`,
    ].join(' ') + CATALOGUE_SECTION,
  export:
    [
      `${FORM} Every matching event, newest first, streamed as an attachment (pages of`,
      `${EXPORT_PAGE_SIZE} through the store): \`format=ndjson\` (default; one event per line, as stored) or \`csv\``,
      `(columns ${CSV_COLUMNS.map(([h]) => `\`${h}\``).join(', ')}; \`document\` is the whole event as JSON; cells`,
      `starting with = + - @ get a leading apostrophe). At most ${EXPORT_MAX_EVENTS} events: more matches are refused`,
      `with 422 before anything is sent (narrow \`from\`/\`to\`). A failure after the first page aborts the transfer,`,
      `so a partial file is never complete-looking. ${EVENTS_FAILURES}`,
    ].join(' ') + CATALOGUE_SECTION,
  searchBody: [
    `The store's _search query DSL, checked against the allow-list (docs/audit-logs.md): query, post_filter,`,
    `from, size (from + size ≤ ${MAX_RESULT_WINDOW}), sort, _source, aggs, track_total_hits, search_after.`,
    `Refused with 422 naming the key: scripts, lookups into other indices, pit, suggest, rescore, profile,`,
    `explain, slice,`,
    `stored_fields, docvalue_fields, timeout and anything unlisted.`,
  ].join(' '),
  types:
    [
      `One type per AUDIT_*_PATTERN variable, with its effective index pattern, what it`,
      `records, and its event types (\`eventTypes\`: outcomes, description, \`data\` fields).`,
    ].join(' ') + CATALOGUE_SECTION,
  search:
    [
      `${COMMON} The worker adds a server-side \`timeout\` (80% of LOGSTORE_TIMEOUT; the answer then says`,
      `\`timed_out\`). ${QUERY_FAILURES}`,
    ].join(' ') + CATALOGUE_SECTION,
  fieldCaps:
    [
      `${COMMON} \`fields\` goes in the body (a list, or a comma-separated string; default \`*\`), with an optional`,
      `\`index_filter\` query. ${QUERY_FAILURES}`,
    ].join(' ') + CATALOGUE_SECTION,
};

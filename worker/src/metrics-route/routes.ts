/**
 * GET ROOT_PATH/metrics (docs/operations.md, "Metrics"): Prometheus text format for operators, behind the Bearer
 * token AUTH_METRICS_TOKEN (unset: 404). The per-request instrumentation (`observeRequest`) is
 * called by app.ts after each response. architecture.md §7.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { constantTimeEqual } from '../passwords/hash/phc.js';
import { collectScrapeMetrics } from './collect.js';
import { noteProcessStart, processRegistry, recordRequest } from '../metrics/process.js';
import { EXPOSITION_CONTENT_TYPE, renderExposition } from '../metrics/registry.js';
import { requestHeader } from '../http/node-messages.js';

/** The route label of requests that matched no endpoint (404, 405): one label, however many paths. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The registered pattern of the endpoint that answered (e.g. /v4/users/:userId), never the raw
 * path, so the number of label values is bounded by the routes. After the response, routeIndex is
 * the last handler that ran; when that was an app-wide middleware (method ALL: a body limit, 405),
 * the first endpoint matched after it, if any.
 */
function routeOf(c: Context<AppEnv>): string {
  const routes = matchedRoutes(c);
  for (let i = Math.max(0, c.req.routeIndex); i < routes.length; i++) {
    const r = routes[i]!;
    if (r.method !== 'ALL') return r.path;
  }
  return UNMATCHED_ROUTE;
}

/** Counts an answered request by method, route pattern and status, and observes its latency. */
export function observeRequest(c: Context<AppEnv>, startedAt: number): void {
  noteProcessStart();
  recordRequest(c.req.method, routeOf(c), c.res.status, (performance.now() - startedAt) / 1000);
}

const digest = async (s: string) => new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s)));

/**
 * Whether the Authorization header carries the token. Both sides are hashed first, so the
 * comparison takes the same time whatever the length or the first differing byte of a guess.
 */
async function holdsToken(header: string | undefined, token: string): Promise<boolean> {
  const m = /^Bearer +(\S+) *$/i.exec(header ?? '');
  const given = m?.[1] ?? '';
  const [a, b] = await Promise.all([digest(given), digest(token)]);
  return constantTimeEqual(a, b) && given !== '';
}

const CHALLENGE = 'Bearer realm="metrics"';

const metricsRoute = createRoute({
  method: 'get',
  operationId: 'getMetrics',
  path: '/metrics',
  tags: ['health'],
  summary: 'Metrics for operators (Prometheus text format)',
  description: [
    'The Prometheus text exposition format 0.0.4, for scraping (docs/operations.md, "Metrics").',
    'Credential: `Authorization: Bearer <AUTH_METRICS_TOKEN>`; while AUTH_METRICS_TOKEN is unset the endpoint',
    'answers 404 (disabled). Counted by the process (edge: the isolate) that answers:',
    '`auth_http_requests_total{method,route,status}` and `auth_http_request_duration_seconds` (route patterns,',
    'never raw paths), `auth_logins_total{method,outcome}`, `auth_lockouts_total{method}`. Read from the database',
    'at each scrape, so the same from every instance: `auth_sessions_active{kind}`,',
    '`auth_outbox_depth{stream}`, `auth_outbox_oldest_age_seconds{stream}`, `auth_outbox_dead_letters{stream}`,',
    '`auth_audit_store_bytes{store}`, `auth_audit_store_max_bytes{store}`, `auth_audit_store_near_limit{store}`',
    '(the audit events against their size bound, as its job last measured them), `auth_outbox_bytes`,',
    '`auth_database_bytes`, `auth_database_free_bytes` (when the database tells),',
    '`auth_job_runs_total{job}`, `auth_job_failures_total{job}` and the last run of each job. Health as this',
    'instance sees it: `auth_database_up`, `auth_bridge_configured`, `auth_bridge_up`. No label carries a user,',
    'a login, an address or a secret.',
  ].join(' '),
  security: [{ metricsToken: [] }],
  responses: {
    200: {
      description: 'the metrics',
      content: {
        'text/plain': {
          schema: z.string().openapi({
            example:
              '# HELP auth_database_up whether the database answered this scrape (1) or not (0)\n' +
              '# TYPE auth_database_up gauge\nauth_database_up 1\n',
          }),
        },
      },
    },
    401: { ...problemResponses(401)[401], description: 'no Authorization: Bearer header, or not the token' },
    404: { ...problemResponses(404)[404], description: 'metrics are disabled: AUTH_METRICS_TOKEN is not set' },
  },
});

/** Registers GET /metrics and its security scheme. */
export function registerMetrics(app: App): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'metricsToken', {
    type: 'http',
    scheme: 'bearer',
    description:
      'Metrics scrape token (AUTH_METRICS_TOKEN), for Prometheus: it opens only GET /metrics, and an API token ' +
      'is refused there (401). For the API, use the API token scheme.',
  });
  app.openapi(metricsRoute, async (c) => {
    const token = c.var.scope.config.get('METRICS_TOKEN');
    if (token === '')
      throw new ProblemError('NOT_FOUND', { detail: 'metrics are disabled: AUTH_METRICS_TOKEN is not set' });
    if (!(await holdsToken(requestHeader(c, 'Authorization'), token))) {
      throw new ProblemError('UNAUTHENTICATED', {
        detail: 'GET /metrics needs Authorization: Bearer with the scrape token (AUTH_METRICS_TOKEN)',
        headers: { 'WWW-Authenticate': CHALLENGE },
      });
    }
    const scraped = await collectScrapeMetrics(c.var.scope);
    noteProcessStart();
    const text = renderExposition([processRegistry, scraped]);
    return c.text(text, 200, { 'Content-Type': EXPOSITION_CONTENT_TYPE, 'Cache-Control': 'no-store' });
  });
}

/**
 * Generates the OpenAPI description from the routes' zod schemas (@hono/zod-openapi). Run at build
 * time, never by a host: scripts/build-console.mjs writes it as STATIC_DIR/openapi/openapi.json, which
 * both hosts serve (routes.ts, `registerDocs`), so the edge script carries neither this module nor the
 * generator (docs/performance.md, "The edge bundle"); scripts/openapi-lint.ts lints it.
 */
import type { App } from '../http/context.js';
import type { ApiDocument } from './document.js';
import { addExamples } from './examples.js';
import { normalizePatterns } from './patterns.js';
import { deployedAs, type Deployment } from './routes.js';
import { ADDRESS_FAILURES_THROTTLED, addSharedResponses, dropUnusedResponses } from './shared-responses.js';

export const API_TAGS = [
  { name: 'auths', description: 'Logins with and without a session, API tokens, logout' },
  { name: 'user_v4', description: 'User management (/v4/users)' },
  { name: 'groups', description: 'Groups and their members (/v4/groups)' },
  { name: 'logs', description: 'Audit-log search in the log store' },
  { name: 'settings', description: 'Security settings (/v3/settings)' },
  { name: 'services', description: 'Protected services, forward-auth for reverse proxies, token introspection' },
  { name: 'notifications', description: 'Mail notifications and their history' },
  { name: 'webhooks', description: 'Signed webhooks of audit events (Standard Webhooks)' },
  { name: 'errtrack', description: 'Browser error tracking: client configuration and the Sentry tunnel' },
  { name: 'health', description: 'Liveness and readiness probes; metrics for operators' },
];

type Operation = { security?: Record<string, string[]>[] };

/** Adds the oauth2 scheme to every operation that accepts a Bearer credential. */
function withOAuth2<D extends { paths?: object }>(doc: D): D {
  for (const ops of Object.values(doc.paths ?? {}) as object[]) {
    for (const op of Object.values(ops) as Operation[]) {
      if (op.security?.some((s) => 'bearer' in s)) op.security.push({ oauth2: [] });
    }
  }
  return doc;
}

/**
 * The order of the security schemes, which Swagger UI's Authorize dialog follows (docs/api.md, "The
 * interactive docs"): the API's Bearer scheme first, where a newcomer pastes an API token, and the metrics
 * scrape token last, so that the two "(http, Bearer)" boxes are not confused. Schemes not listed go
 * between, in the order they were registered.
 */
const FIRST_SCHEMES = ['bearer', 'oauth2', 'basic', 'cookie'];
const LAST_SCHEMES = ['metricsToken'];

function withSchemesOrdered<D extends { components?: { securitySchemes?: Record<string, unknown> } }>(doc: D): D {
  const schemes = doc.components?.securitySchemes;
  if (!schemes) return doc;
  const names = Object.keys(schemes);
  const middle = names.filter((n) => !FIRST_SCHEMES.includes(n) && !LAST_SCHEMES.includes(n));
  const ordered = [...FIRST_SCHEMES, ...middle, ...LAST_SCHEMES].filter((n) => n in schemes);
  const securitySchemes = Object.fromEntries(ordered.map((n) => [n, schemes[n]]));
  return { ...doc, components: { ...doc.components, securitySchemes } };
}

type BodyOperation = { requestBody?: unknown; responses?: Record<string, unknown> };
const PROBLEM_CONTENT = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

/** Operations that check or hash a password from their body (the others do it for Basic). */
const PASSWORD_BODIES = new Set([
  'post /v3/login',
  'post /v3/oauth_login',
  'post /v3/login/union',
  'put /v4/users/me/password',
  'post /v4/users',
  'post /v4/users/{userId}/password',
  'post /v3/password_reset/confirm',
]);
const ADDRESS_THROTTLED =
  'PASSWORD_CHECKS_THROTTLED: too many password checks from the client address (IPv4 /32, IPv6 /64): beyond ' +
  'AUTH_PASSWORD_ADDRESS_IN_FLIGHT at once, AUTH_PASSWORD_ADDRESS_RATE per minute (bursts of ' +
  'AUTH_PASSWORD_ADDRESS_BURST) (`reason` address-in-flight, address-rate), queued out or shed by other ' +
  'clients (address-queue; an address with recent failed logins first), every waiting place taken by ' +
  "other clients' first attempts (capacity); retry after Retry-After (its own budget); nothing was checked or " +
  'counted, whether the login exists or not';

/**
 * Documents the 429 of admission (an address beyond its bound, or queued out) on every operation
 * that may hash a password. Admission never answers 503 (docs/security-admission.md).
 */
function withHashingBusy<D extends { paths?: object }>(doc: D): D {
  for (const [path, ops] of Object.entries(doc.paths ?? {}) as [string, object][]) {
    for (const [method, op] of Object.entries(ops) as [string, Operation & BodyOperation][]) {
      const basic = op.security?.some((s) => 'basic' in s) ?? false;
      if (!op.responses || (!basic && !PASSWORD_BODIES.has(`${method} ${path}`))) continue;
      // A 429 already there (the route's own, or the shared one of Basic) is the failed-login budget of
      // the address; both budgets answer 429 with their own code.
      const description = op.responses['429']
        ? `${ADDRESS_FAILURES_THROTTLED}; or ${ADDRESS_THROTTLED}`
        : ADDRESS_THROTTLED;
      op.responses['429'] = { description, content: PROBLEM_CONTENT };
    }
  }
  return doc;
}

const DATABASE_BUSY =
  'the database is busy (locked by another connection past the 5 s wait; nothing was written or counted) ' +
  'or, a remote one, cannot be reached: retry after Retry-After';

/**
 * Documents the 503 of a busy or unreachable database (docs/operations.md, "Fault drills") on every operation: any
 * may meet it.
 */
function withDatabaseBusy<D extends { paths?: object }>(doc: D): D {
  for (const ops of Object.values(doc.paths ?? {}) as object[]) {
    for (const op of Object.values(ops) as BodyOperation[]) {
      if (!op.responses) continue;
      const existing = op.responses['503'] as { description?: string } | undefined;
      if (!existing)
        op.responses['503'] = { description: `Service unavailable: ${DATABASE_BUSY}`, content: PROBLEM_CONTENT };
      else if (existing.description !== undefined)
        existing.description = `${existing.description}; or ${DATABASE_BUSY}`;
    }
  }
  return doc;
}

/**
 * The API's licence in the description (`info.license`): the service is not published under an open
 * licence (package.json: private), so the document says so.
 */
const LICENSE = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };

/**
 * The paths below ROOT_PATH, which the one server names (`deployedAs`): a client generated from the
 * description takes the mount as its base URL and the paths as they are (POST /v3/login), whatever
 * ROOT_PATH a deployment chose.
 */
function mountedAt<D extends ApiDocument>(doc: D, root: string): D {
  const paths: NonNullable<ApiDocument['paths']> = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith(`${root}/`)) throw new Error(`the operation path ${path} is outside ROOT_PATH ${root}`);
    paths[path.slice(root.length)] = item;
  }
  return { ...doc, paths };
}

/**
 * The OpenAPI document of `app` (every route registered) as GET /openapi.json serves it for `o`, its
 * paths below ROOT_PATH.
 * Operations that take a Bearer credential also list oauth2, so the docs page's Authorize button's
 * token is sent to them. Every operation gets the error responses its shape implies
 * (shared-responses.ts), patterns lose the flags of regex literals (patterns.ts), and the examples
 * are added (examples.ts).
 */
export function generateApiDocument(app: App, o: Deployment): ApiDocument {
  const info = { title: o.title, description: o.description, version: '1.0.0', license: LICENSE };
  const generated = withSchemesOrdered(
    withOAuth2(app.getOpenAPI31Document({ openapi: '3.1.0', info, tags: API_TAGS })),
  );
  const mounted = mountedAt(generated as unknown as ApiDocument, o.root);
  const shaped = addExamples(addSharedResponses(normalizePatterns(mounted)));
  return deployedAs(dropUnusedResponses(withDatabaseBusy(withHashingBusy(shaped))), o);
}

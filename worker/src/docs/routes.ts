/**
 * Interactive API docs, fully offline: the Swagger UI assets are served from STATIC_DIR under
 * ROOT_PATH + STATIC_PATH (copied from swagger-ui-dist at install), never from a CDN.
 */
import type { App } from '../http/context.js';
import { FILTER_EXTENSION } from '../auth/blocklist/index.js';
import { ProblemError } from '../http/problem.js';
import { html } from 'hono/html';
import { htmlDocument } from '../http/html.js';
import type { ApiDocument } from './document.js';
import { addExamples } from './examples.js';
import { normalizePatterns } from './patterns.js';
import { ADDRESS_FAILURES_THROTTLED, addSharedResponses, dropUnusedResponses } from './shared-responses.js';

export const API_TAGS = [
  { name: 'auths', description: 'Logins with and without a session, API tokens, logout' },
  { name: 'user_v4', description: 'User management (/v4/users)' },
  { name: 'logs', description: 'Audit-log search in the log store' },
  { name: 'settings', description: 'Security settings (/v3/settings)' },
  { name: 'notifications', description: 'Mail notifications and their history' },
  { name: 'errtrack', description: 'Browser error tracking: client configuration and the Sentry tunnel' },
  { name: 'health', description: 'Liveness and readiness probes; metrics for operators' },
];

const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Every static file is served with this policy. It matters for the HTML ones: Swagger UI's
 * oauth2-redirect.html (the OAuth popup's landing page, which runs only its own oauth2-redirect.js
 * and talks to its opener) may run scripts of this origin and nothing else: no inline script, no
 * connection, no frame, no form, no plugin.
 */
export const STATIC_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function docsHtml(title: string, staticBase: string, specUrl: string) {
  return htmlDocument({
    title: `${title} — API`,
    head: html`<link rel="stylesheet" href="${staticBase}/vendor/swagger-ui/swagger-ui.css">
<link rel="icon" type="image/png" href="${staticBase}/vendor/swagger-ui/favicon-32x32.png">`,
    body: html`<div id="swagger-ui" data-spec-url="${specUrl}"></div>
<script src="${staticBase}/vendor/swagger-ui/swagger-ui-bundle.js"></script>
<script src="${staticBase}/swagger-init.js"></script>`,
  });
}

const MIME: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  html: 'text/html; charset=utf-8',
  json: 'application/json',
  png: 'image/png',
  svg: 'image/svg+xml',
  map: 'application/json',
};

/** Content type of a static file by extension. */
export function staticContentType(path: string): string {
  return MIME[path.slice(path.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream';
}

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

export interface DocsOptions {
  root: string;
  docsPrefix: string;
  staticPath: string;
  title: string;
  description: string;
}

/**
 * The API's licence in the description (`info.license`): the service is not published under an open
 * licence (package.json: private), so the document says so.
 */
const LICENSE = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };

/**
 * The paths below ROOT_PATH, which the one server names (a URL relative to the document's origin):
 * a client generated from the description takes the mount as its base URL and the paths as they are
 * (POST /v3/login), whatever ROOT_PATH a deployment chose.
 */
function mountedAt<D extends ApiDocument>(doc: D, root: string): D {
  const paths: NonNullable<ApiDocument['paths']> = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith(`${root}/`)) throw new Error(`the operation path ${path} is outside ROOT_PATH ${root}`);
    paths[path.slice(root.length)] = item;
  }
  const servers = [
    { url: root || '/', description: 'This service (ROOT_PATH), on the origin that serves this document' },
  ];
  return { ...doc, servers, paths };
}

/**
 * The served OpenAPI document of `app` (every route registered), its paths below ROOT_PATH.
 * Operations that take a Bearer credential also list oauth2, so the docs page's Authorize button's
 * token is sent to them. Every operation gets the error responses its shape implies
 * (shared-responses.ts), patterns lose the flags of regex literals (patterns.ts), and the examples
 * are added (examples.ts).
 */
export function apiDocument(app: App, o: Pick<DocsOptions, 'root' | 'title' | 'description'>): ApiDocument {
  const info = { title: o.title, description: o.description, version: '1.0.0', license: LICENSE };
  const generated = withOAuth2(app.getOpenAPI31Document({ openapi: '3.1.0', info, tags: API_TAGS }));
  const mounted = mountedAt(generated as unknown as ApiDocument, o.root);
  const shaped = addExamples(addSharedResponses(normalizePatterns(mounted)));
  return dropUnusedResponses(withDatabaseBusy(withHashingBusy(shaped)));
}

/** Registers the OpenAPI JSON, the docs page and the static files. */
export function registerDocs(app: App, o: DocsOptions): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'basic', {
    type: 'http',
    scheme: 'basic',
    description: 'login:password; add the header X-LDAP-Name for an account of an LDAP server',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'an API token, or the access token of a session (/v3/oauth_login)',
  });
  // The docs page's Authorize button: the password grant of /v3/oauth_login.
  app.openAPIRegistry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description: 'login and password through /v3/oauth_login; the access token lives as long as its session',
    flows: { password: { tokenUrl: `${o.root}/v3/oauth_login`, scopes: {} } },
  });

  // Built once, at the first request (every route is registered by then).
  let document: unknown;
  app.get('/openapi.json', (c) => c.json((document ??= apiDocument(app, o))));

  const staticBase = `${o.root}${o.staticPath}`;
  const html = docsHtml(o.title, staticBase, `${o.root}/openapi.json`);
  app.get(o.docsPrefix, (c) => c.html(html, 200, { 'Content-Security-Policy': DOCS_CSP, 'Cache-Control': 'no-cache' }));

  app.get(`${o.staticPath}/*`, async (c) => {
    // Hono has already percent-decoded the path (an encoded "/" stays encoded and matches no file).
    const rel = c.req.path.slice(staticBase.length + 1);
    // Only plain relative paths: no parent segments, no backslashes, no absolute or empty paths.
    if (
      rel === '' ||
      rel.startsWith('/') ||
      rel.includes('\\') ||
      rel.includes('\0') ||
      rel.split('/').some((seg) => seg === '..' || seg === '.' || seg === '') ||
      // The operator's password filter may lie in STATIC_DIR (the edge reads it from there): never served.
      rel.toLowerCase().endsWith(FILTER_EXTENSION)
    ) {
      throw new ProblemError('NOT_FOUND', { detail: `no static file at ${c.req.path}` });
    }
    const res = await c.var.deps.staticFiles(rel);
    if (!res) throw new ProblemError('NOT_FOUND', { detail: `no static file at ${c.req.path}` });
    const headers = new Headers(res.headers);
    headers.set('Content-Type', staticContentType(rel));
    headers.set('Cache-Control', rel.startsWith('vendor/') ? 'public, max-age=86400' : 'no-cache');
    headers.set('X-Content-Type-Options', 'nosniff');
    headers.set('Content-Security-Policy', STATIC_CSP);
    return new Response(res.body, { status: 200, headers });
  });
}

/**
 * Interactive API docs, fully offline: the Swagger UI assets are served from STATIC_DIR under
 * ROOT_PATH + STATIC_PATH (copied from swagger-ui-dist at install), never from a CDN.
 */
import type { App, AppDeps } from '../http/context.js';
import { FILTER_EXTENSION } from '../passwords/blocklist/index.js';
import { ProblemError } from '../http/problem.js';
import { html } from 'hono/html';
import { htmlDocument } from '../http/html.js';
import type { ApiDocument } from './document.js';

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

export interface DocsOptions {
  root: string;
  docsPrefix: string;
  staticPath: string;
  title: string;
  description: string;
}

/** What of the OpenAPI document differs between deployments. */
export type Deployment = Pick<DocsOptions, 'root' | 'title' | 'description'>;

/** Where the build writes the OpenAPI document, in STATIC_DIR (scripts/build-console.mjs). */
export const DOCUMENT_FILE = 'openapi/openapi.json';

/**
 * `doc` as deployment `o` serves it: its title and description, the one server (ROOT_PATH, a URL
 * relative to the document's origin) and the token URL of the docs page's Authorize button. Nothing
 * else of the document depends on the configuration (test/unit/openapi-document.test.ts).
 */
export function deployedAs<D extends ApiDocument>(doc: D, o: Deployment): D {
  const { info, components } = doc as { info?: object; components?: { securitySchemes?: Record<string, object> } };
  const schemes = components?.securitySchemes;
  const oauth2 = schemes?.oauth2 as { flows?: { password?: object } } | undefined;
  return {
    ...doc,
    info: { ...info, title: o.title, description: o.description },
    servers: [{ url: o.root || '/', description: 'This service (ROOT_PATH), on the origin that serves this document' }],
    ...(oauth2?.flows?.password
      ? {
          components: {
            ...components,
            securitySchemes: {
              ...schemes,
              oauth2: {
                ...oauth2,
                flows: {
                  ...oauth2.flows,
                  password: { ...oauth2.flows.password, tokenUrl: `${o.root}/v3/oauth_login` },
                },
              },
            },
          },
        }
      : {}),
  };
}

/**
 * The OpenAPI document written at build time (generate.ts, by scripts/build-console.mjs), from STATIC_DIR;
 * 503 naming the build step when it is missing.
 */
async function builtDocument(deps: Pick<AppDeps, 'staticFiles'>): Promise<ApiDocument> {
  const res = await deps.staticFiles(DOCUMENT_FILE);
  const doc = res?.ok ? ((await res.json().catch(() => undefined)) as ApiDocument | undefined) : undefined;
  if (typeof doc !== 'object' || doc === null || typeof doc.paths !== 'object') {
    const detail = 'the OpenAPI document is not built: run `npm run build:console` (scripts/build-console.mjs)';
    throw new ProblemError('SERVICE_UNAVAILABLE', { detail });
  }
  return doc;
}

/** Registers the OpenAPI JSON, the docs page and the static files. */
export function registerDocs(app: App, o: DocsOptions): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'basic', {
    type: 'http',
    scheme: 'basic',
    description: 'Login and password (login:password); add the header X-LDAP-Name for an account of an LDAP server',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description:
      'API token: a token made by POST /v4/users/me/tokens (or the console), or the access token of a session ' +
      '(/v3/oauth_login). Use this one for the API; not the metrics token.',
  });
  // The docs page's Authorize button: the password grant of /v3/oauth_login.
  app.openAPIRegistry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description:
      'Login and password through /v3/oauth_login, which gives an access token; it lives as long as its session',
    flows: { password: { tokenUrl: `${o.root}/v3/oauth_login`, scopes: {} } },
  });

  // Read once, at the first request: the document written at build time, made this deployment's.
  let document: ApiDocument | undefined;
  app.get('/openapi.json', async (c) => {
    document ??= deployedAs(await builtDocument(c.var.deps), o);
    return c.json(document);
  });

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

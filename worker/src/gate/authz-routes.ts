/**
 * Forward-auth (docs/integration.md): one decision (decision.ts), answered in each proxy's dialect.
 * - nginx `auth_request`: GET /v4/authz/auth-request with X-Original-URL and X-Original-Method. nginx
 *   understands 2xx, 401 and 403 only, so the sign-in address rides on the 401 as Location, which the
 *   configuration turns into the browser's redirect (`auth_request_set` + `error_page 401`).
 * - Caddy `forward_auth`, Traefik `ForwardAuth`: /v4/authz/forward-auth with X-Forwarded-Method,
 *   -Proto, -Host and -Uri; any other answer than 2xx goes to the client as it is, so a browser gets
 *   the 302 to the sign-in directly.
 * - Envoy `ext_authz` (HTTP service): /v4/authz/ext-authz + the original path (path_prefix), with the
 *   original method and Host, and X-Forwarded-Proto.
 * Only a peer in AUTH_TRUSTED_PROXIES may ask: anyone else is refused (403), never believed, since the
 * forwarded headers choose the service (oauth2-proxy GHSA-7x63-xv5r-3p2x, Authentik CVE-2024-47070).
 * GET /v4/authz/continue is where the console sends the browser back after the sign-in.
 */
import { z } from '@hono/zod-openapi';
import { GATE_DOCS as DOCS } from './gate-route-docs.js';
import type { Context } from 'hono';
import type { App, AppEnv } from '../http/context.js';
import { CONSOLE_PATH } from '../http/console-path.js';
import { trustedProxy } from '../http/forwarded.js';
import { requestHeader } from '../http/node-messages.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { publicRoute } from '../http/public-route.js';
import { recordDecision } from './access-audit.js';
import { readCredential } from './credential.js';
import { decide, findService, type Decision } from './decision.js';
import { servicesSnapshot } from './services.js';
import { normaliseUrl, urlFromParts } from './target.js';

type Dialect = 'nginx' | 'forward' | 'envoy';

/** The path of the return after the sign-in; the console's sign-in accepts it as `next` (signin-pages.ts). */
export const CONTINUE_PATH = '/v4/authz/continue';

/** Whether the caller (the connection's peer; on the edge the address Cloudflare saw) is a trusted proxy. */
function fromTrustedPeer(c: Context<AppEnv>): boolean {
  const deps = c.var.deps;
  return trustedProxy(c)(deps.peerAddress ? deps.peerAddress(c) : deps.clientAddress?.(c.req.raw, c.env));
}

/** The URL and method the proxy asks about, from its dialect's headers; undefined parts when absent. */
function target(c: Context<AppEnv>, dialect: Dialect): { url: URL | undefined; method: string; given: boolean } {
  const h = (name: string) => requestHeader(c, name);
  if (dialect === 'nginx') {
    const original = h('X-Original-URL');
    if (original !== undefined)
      return { url: normaliseUrl(original), method: h('X-Original-Method') ?? c.req.method, given: true };
  }
  if (dialect === 'envoy') {
    const root = c.var.deps.config.env.get('ROOT_PATH');
    const raw = new URL(c.req.url);
    const rest = raw.pathname.slice(`${root}/v4/authz/ext-authz`.length) || '/';
    const proto = h('X-Forwarded-Proto') ?? 'http';
    const host = h('Host') ?? raw.host;
    return { url: urlFromParts(proto.split(',')[0]!, host, rest + raw.search), method: c.req.method, given: true };
  }
  const [proto, host, uri] = [h('X-Forwarded-Proto'), h('X-Forwarded-Host'), h('X-Forwarded-Uri')];
  if (proto === undefined || host === undefined || uri === undefined)
    return { url: undefined, method: c.req.method, given: false };
  return { url: urlFromParts(proto, host, uri), method: h('X-Forwarded-Method') ?? c.req.method, given: true };
}

/** Where this service is public: AUTH_PUBLIC_URL, else the origin the request reached. */
function publicBase(c: Context<AppEnv>): string {
  const configured = c.var.scope.config.get('PUBLIC_URL').replace(/\/+$/, '');
  return configured || new URL(c.req.url).origin;
}

/** The console's sign-in, coming back to `url` (a registered service's address, checked again there). */
export function signInUrl(c: Context<AppEnv>, url: URL): string {
  const root = c.var.deps.config.env.get('ROOT_PATH');
  const back = `${root}${CONTINUE_PATH}?rd=${encodeURIComponent(url.href)}`;
  return `${publicBase(c)}${root}${CONSOLE_PATH}/login?next=${encodeURIComponent(back)}`;
}

/** A browser's navigation (it gets a redirect), rather than an API client (it gets 401). */
function isBrowser(c: Context<AppEnv>, method: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const mode = requestHeader(c, 'Sec-Fetch-Mode');
  if (mode !== undefined) return mode === 'navigate';
  return (requestHeader(c, 'Accept') ?? '').includes('text/html');
}

const REFUSAL_DETAIL: Record<string, string> = {
  'unknown-service': 'no protected service answers for this address',
  'bad-target': 'the forwarded address is missing or malformed',
  'not-allowed': 'this account may not enter this service',
  'token-audience': 'this API token is limited to other services',
  'second-factor-required': 'this service requires a second factor, which this credential cannot carry',
};

/** The answer of `d` in `dialect`. */
function answer(c: Context<AppEnv>, dialect: Dialect, d: Decision, url: URL | undefined, method: string): Response {
  // The identity headers as a plain object and an empty text body: the Node host writes such an answer
  // without building Fetch Headers and Response objects (docs/performance.md, "The gate's decisions").
  if (d.outcome === 'allow') return new Response('', { status: 200, headers: { ...d.headers } });
  if (d.outcome === 'refuse')
    throw new ProblemError('FORBIDDEN', { detail: REFUSAL_DETAIL[d.reason], extensions: { reason: d.reason } });
  const signIn = signInUrl(c, url!);
  if (dialect !== 'nginx' && isBrowser(c, method)) return c.redirect(signIn, 302);
  const secondStep = d.outcome === 'second-step';
  // RFC 9470: a Bearer client learns that a stronger authentication is wanted.
  const challenge = secondStep
    ? 'Bearer realm="auth", error="insufficient_user_authentication", ' +
      'error_description="a second factor is required"'
    : 'Bearer realm="auth"';
  throw new ProblemError(secondStep ? 'SECOND_FACTOR_REQUIRED' : 'UNAUTHENTICATED', {
    detail: secondStep ? 'sign in with a second factor' : 'sign in first',
    extensions: { reason: d.reason, signIn },
    headers: { 'WWW-Authenticate': challenge, ...(dialect === 'nginx' ? { Location: signIn } : {}) },
  });
}

async function gate(c: Context<AppEnv>, dialect: Dialect): Promise<Response> {
  const { scope } = c.var;
  if (!fromTrustedPeer(c)) {
    recordDecision(scope, c.var.deps, { outcome: 'refuse', reason: 'untrusted-proxy' }, {}, undefined);
    throw new ProblemError('FORBIDDEN', {
      detail: 'forward-auth answers the proxies of AUTH_TRUSTED_PROXIES only: their forwarded headers are not believed',
      extensions: { reason: 'untrusted-proxy' },
    });
  }
  const t = target(c, dialect);
  if (!t.given)
    throw new ProblemError('MALFORMED_REQUEST', {
      detail:
        dialect === 'nginx'
          ? 'send X-Original-URL (and X-Original-Method), or X-Forwarded-Proto, -Host and -Uri'
          : 'send X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Uri',
    });
  const snapshot = await servicesSnapshot(scope, c.var.deps);
  const service = t.url ? findService(snapshot.rules, t.url) : undefined;
  // No service, no credential read: an unknown host costs no lookup and checks no password.
  const read = service ? await readCredential(c, service) : { credential: { kind: 'none' as const } };
  const d = decide({
    credential: read.credential,
    url: t.url,
    services: snapshot.rules,
    method: t.method,
    clientAddress: scope.request.ip,
  });
  const p = 'principal' in read ? read.principal : undefined;
  const subject = p
    ? {
        account: { id: p.user.id, login: p.user.login },
        credentialId: p.sessionId ?? p.tokenId ?? `basic:${p.user.id}`,
      }
    : {};
  recordDecision(scope, c.var.deps, d, subject, t.url);
  return answer(c, dialect, d, t.url, t.method);
}

const TAGS = ['services'];

/**
 * A forwarded header, documented as an OpenAPI parameter rather than a validated request schema: each is
 * an optional string the decision reads itself, and a validator per decision was a tenth of its CPU
 * (docs/performance.md, "The gate's decisions").
 */
const header = (name: string, example: string) =>
  ({ in: 'header', name, required: false, schema: { type: 'string' }, example }) as const;
const allowed = {
  description: DOCS.authz1,
};
const authRequestRoute = publicRoute({
  method: 'get',
  operationId: 'authzAuthRequest',
  path: '/v4/authz/auth-request',
  tags: TAGS,
  summary: DOCS.authz2,
  description: DOCS.authz101,
  parameters: [
    header('x-original-url', 'https://app.example.com/page'),
    header('x-original-method', 'GET'),
    header('x-forwarded-proto', 'https'),
    header('x-forwarded-host', 'app.example.com'),
    header('x-forwarded-uri', '/page'),
  ],
  responses: { 200: allowed, ...problemResponses(400, 401, 403, 429) },
});
const forwardAuthRoute = publicRoute({
  method: 'get',
  operationId: 'authzForwardAuth',
  path: '/v4/authz/forward-auth',
  tags: TAGS,
  summary: DOCS.authz3,
  description: DOCS.authz102,
  parameters: [
    header('x-forwarded-proto', 'https'),
    header('x-forwarded-host', 'app.example.com'),
    header('x-forwarded-uri', '/page'),
    header('x-forwarded-method', 'GET'),
  ],
  responses: {
    200: allowed,
    302: { description: 'to the sign-in (browsers)' },
    ...problemResponses(400, 401, 403, 429),
  },
});
const extAuthzRoute = publicRoute({
  method: 'get',
  operationId: 'authzExtAuthz',
  path: '/v4/authz/ext-authz',
  tags: TAGS,
  summary: DOCS.authz4,
  description: DOCS.authz103,
  responses: { 200: allowed, 302: { description: 'to the sign-in (browsers)' }, ...problemResponses(401, 403, 429) },
});
const continueRoute = publicRoute({
  method: 'get',
  operationId: 'authzContinue',
  path: CONTINUE_PATH,
  tags: TAGS,
  summary: DOCS.authz5,
  description:
    'The console sends the browser here after its sign-in. `rd` must be an address of a protected service that ' +
    "the session's account may now enter: then 303 there. Not signed in: 303 to the sign-in again; the second " +
    "step still missing: 303 to the console's security page (enrol a factor); anything else (another host, a " +
    "malformed or ambiguous address): 303 to the console's home. Never an open redirect.",
  request: { query: z.object({ rd: z.string().max(4096).optional() }) },
  responses: { 303: { description: DOCS.authz6 }, ...problemResponses(403) },
});

const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Registers the forward-auth endpoints and the return after the sign-in. */
export function registerForwardAuth(app: App): void {
  app.openapi(authRequestRoute, (c) => gate(c, 'nginx'));
  app.openapi(forwardAuthRoute, (c) => gate(c, 'forward'));
  app.openapi(extAuthzRoute, (c) => gate(c, 'envoy'));
  // nginx's subrequest keeps the original method; Envoy's check request too, and adds the path.
  app.on(METHODS, '/v4/authz/auth-request', (c) => gate(c, 'nginx'));
  app.on(METHODS, '/v4/authz/forward-auth', (c) => gate(c, 'forward'));
  app.on(['GET', ...METHODS], '/v4/authz/ext-authz/*', (c) => gate(c, 'envoy'));
  app.on(METHODS, '/v4/authz/ext-authz', (c) => gate(c, 'envoy'));

  app.openapi(continueRoute, async (c) => {
    const { scope } = c.var;
    const root = c.var.deps.config.env.get('ROOT_PATH');
    const home = `${root}${CONSOLE_PATH}/`;
    const url = normaliseUrl(c.req.query('rd') ?? '');
    if (!url) return c.redirect(home, 303);
    const snapshot = await servicesSnapshot(scope, c.var.deps);
    const service = findService(snapshot.rules, url);
    if (!service) return c.redirect(home, 303);
    const read = await readCredential(c, service);
    const d = decide({
      credential: read.credential,
      url,
      services: snapshot.rules,
      method: 'GET',
      clientAddress: null,
    });
    if (d.outcome === 'allow') return c.redirect(url.href, 303);
    if (d.outcome === 'sign-in') return c.redirect(signInUrl(c, url), 303);
    if (d.outcome === 'second-step') return c.redirect(`${root}${CONSOLE_PATH}/security`, 303);
    throw new ProblemError('FORBIDDEN', { detail: REFUSAL_DETAIL[d.reason], extensions: { reason: d.reason } });
  });
}

/**
 * Token introspection (RFC 7662) for the platform's services, and the RFC 8414 metadata that names the
 * endpoint (docs/integration.md, "Introspection"). The caller authenticates with its service's
 * credential (client_secret_basic or client_secret_post). RFC 7662 §2.2: anything not valid for that
 * caller (unknown, expired, revoked, a blocked account, a token whose account may not enter the calling
 * service, or that lacks the second factor it requires) is `{"active": false}` with 200, never an error
 * that says why; so a service never learns about tokens outside its audience (better-auth PR #2313 let
 * any client introspect any token).
 */
import { z } from '@hono/zod-openapi';
import { GATE_DOCS as DOCS } from './gate-route-docs.js';
import type { Context, MiddlewareHandler } from 'hono';
import { revocationCheckMs } from '../accounts/sessions.js';
import { accountOfToken } from '../accounts/tokens.js';
import type { App, AppEnv } from '../http/context.js';
import { requestHeader } from '../http/node-messages.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { publicRoute } from '../http/public-route.js';
import { SESSION_AUDIENCE, sessionFromToken } from '../accounts/session-token.js';
import { gateAccount, tokenForServices } from './credential.js';
import { admits, type GateCredential } from './decision.js';
import { secretHash, servicesSnapshot, type ServiceRow } from './services.js';

export const INTROSPECT_PATH = '/v3/oauth/introspect';
const METADATA_PATH = '/.well-known/oauth-authorization-server';

const Form = z
  .object({
    token: z.string().optional().openapi({ description: DOCS.introspect1 }),
    token_type_hint: z.string().optional().openapi({ description: DOCS.introspect2 }),
    client_id: z.string().optional().openapi({ description: DOCS.introspect3 }),
    client_secret: z.string().optional(),
  })
  .openapi('IntrospectionRequest');
const Active = z
  .object({
    active: z.boolean(),
    sub: z.string().optional().openapi({ description: 'the account id' }),
    username: z.string().optional().openapi({ description: 'the login' }),
    scope: z.string().optional().openapi({ description: DOCS.introspect4 }),
    exp: z.number().int().optional().openapi({ description: DOCS.introspect5 }),
    iat: z.number().int().optional(),
    token_type: z.literal('Bearer').optional(),
    aud: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .openapi({ description: DOCS.introspect6 }),
    client_id: z.string().optional(),
  })
  .openapi('IntrospectionResponse');
const ClientError = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .openapi('IntrospectionError');

/**
 * RFC 7662 §2.1: the request is a urlencoded form. The route's form validator would also parse a multipart
 * body, and answer a malformed one with a problem instead of an OAuth error: 415 before it.
 */
const urlencodedOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (/^\s*multipart\//i.test(requestHeader(c, 'Content-Type') ?? ''))
    throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', { detail: 'send application/x-www-form-urlencoded' });
  await next();
};

const introspectRoute = publicRoute({
  method: 'post',
  operationId: 'introspectToken',
  path: INTROSPECT_PATH,
  middleware: [urlencodedOnly] as const,
  tags: ['services'],
  summary: DOCS.introspect7,
  description: DOCS.introspect9,
  // Fields are checked by the handler, which answers RFC 6749 errors (invalid_request, invalid_client).
  request: { body: { required: false, content: { 'application/x-www-form-urlencoded': { schema: Form } } } },
  responses: {
    200: { description: 'the answer', content: { 'application/json': { schema: Active } } },
    400: { description: 'invalid_request', content: { 'application/json': { schema: ClientError } } },
    401: { description: 'invalid_client', content: { 'application/json': { schema: ClientError } } },
    ...problemResponses(415),
  },
});
const metadataRoute = publicRoute({
  method: 'get',
  operationId: 'authorizationServerMetadata',
  path: METADATA_PATH,
  tags: ['services'],
  summary: DOCS.introspect8,
  description: DOCS.introspect10,
  responses: {
    200: {
      description: 'the metadata',
      content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
    },
    ...problemResponses(),
  },
});

/** The same length and bytes, in a time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The client id and secret of the request: HTTP Basic (RFC 6749 §2.3.1: form-encoded parts), else the form. */
function clientCredentials(
  c: Context<AppEnv>,
  form: Record<string, unknown>,
): { id: string; secret: string } | undefined {
  const header = requestHeader(c, 'Authorization');
  const basic = header && /^Basic\s+(.+)$/i.exec(header.trim());
  if (basic) {
    let text: string;
    try {
      text = atob(basic[1]!);
    } catch {
      return undefined;
    }
    const colon = text.indexOf(':');
    if (colon < 0) return undefined;
    try {
      return {
        id: decodeURIComponent(text.slice(0, colon).replace(/\+/g, ' ')),
        secret: decodeURIComponent(text.slice(colon + 1).replace(/\+/g, ' ')),
      };
    } catch {
      return undefined;
    }
  }
  const { client_id: id, client_secret: secret } = form;
  return typeof id === 'string' && typeof secret === 'string' ? { id, secret } : undefined;
}

/** The credential behind `token`, as the gate reads it (from the caches, like any other request). */
async function tokenCredential(
  c: Context<AppEnv>,
  token: string,
): Promise<
  | { credential: Extract<GateCredential, { kind: 'account' }>; exp?: number; iat?: number; scopes?: string[] | null }
  | undefined
> {
  const { scope } = c.var;
  if (token.includes('.')) {
    const found = await sessionFromToken(scope, token, SESSION_AUDIENCE);
    if (!found) return undefined;
    const s = found.session;
    const principal = { user: found.user, method: 'session' as const, sessionId: s.id, session: s };
    const secondFactor = s.secondFactorAt !== null || s.authMethod === 'passkey';
    const credential = {
      kind: 'account' as const,
      account: gateAccount(principal),
      method: 'session' as const,
      secondFactor,
    };
    return { credential, exp: s.expiresAt, iat: s.createdAt };
  }
  const found = await accountOfToken(scope.db, token, scope.now(), revocationCheckMs(scope.config));
  // A token narrowed to this service's API is no credential for another service (docs/api.md, "API token audiences").
  if (!found || !tokenForServices(found)) return undefined;
  const principal = { user: found.user, method: 'bearer' as const, tokenId: found.tokenId };
  const credential = {
    kind: 'account' as const,
    account: gateAccount(principal),
    method: 'token' as const,
    secondFactor: false,
    audiences: found.audiences,
  };
  return { credential, scopes: found.scopes, ...(found.expiresAt !== null ? { exp: found.expiresAt } : {}) };
}

/** Registers introspection and the metadata (`app`: the root, for RFC 8414's address of an issuer with a path). */
export function registerIntrospection(api: App, app: App, root: string): void {
  api.openapi(introspectRoute, async (c) => {
    const type = requestHeader(c, 'Content-Type') ?? '';
    if (!/^application\/x-www-form-urlencoded/i.test(type))
      return c.json(
        { error: 'invalid_request', error_description: 'send an application/x-www-form-urlencoded form' },
        400,
      );
    const form = await c.req.parseBody();
    const client = clientCredentials(c, form);
    const invalidClient = () =>
      c.json({ error: 'invalid_client', error_description: 'unknown client or wrong secret' }, 401, {
        'WWW-Authenticate': 'Basic realm="introspection"',
      });
    if (!client) return invalidClient();
    const snapshot = await servicesSnapshot(c.var.scope, c.var.deps);
    const service: ServiceRow | undefined = snapshot.byClientId.get(client.id);
    if (!service || !sameText(service.secretHash, secretHash(client.secret))) return invalidClient();
    const token = form.token;
    if (typeof token !== 'string' || token === '')
      return c.json({ error: 'invalid_request', error_description: 'token is required' }, 400);
    const found = await tokenCredential(c, token);
    const rule = snapshot.rules.find((r) => r.id === service.id);
    if (!found || !rule || !admits(rule, found.credential)) return c.json({ active: false }, 200);
    const a = found.credential.account;
    const limited = found.credential.audiences;
    // The audiences as the services know themselves: their client ids (a deleted service is dropped).
    const clientIds = new Map([...snapshot.byClientId.values()].map((r) => [r.name, r.clientId]));
    const aud = limited ? limited.flatMap((id) => clientIds.get(id) ?? []) : service.clientId;
    return c.json(
      {
        active: true,
        sub: a.id,
        username: a.login,
        ...(found.scopes ? { scope: found.scopes.join(' ') } : {}),
        ...(found.exp !== undefined ? { exp: Math.floor(found.exp / 1000) } : {}),
        ...(found.iat !== undefined ? { iat: Math.floor(found.iat / 1000) } : {}),
        token_type: 'Bearer' as const,
        aud,
        client_id: service.clientId,
      },
      200,
    );
  });

  const metadata = (c: Context<AppEnv>) => {
    const configured = c.var.scope.config.get('PUBLIC_URL').replace(/\/+$/, '');
    const issuer = `${configured || new URL(c.req.url).origin}${root}`;
    return c.json(
      {
        issuer,
        introspection_endpoint: `${issuer}${INTROSPECT_PATH}`,
        introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        token_endpoint: `${issuer}/v3/oauth_login`,
        token_endpoint_auth_methods_supported: ['none'],
        grant_types_supported: ['password'],
        response_types_supported: [],
        service_documentation: `${issuer}/docs`,
      },
      200,
      { 'Cache-Control': 'public, max-age=300' },
    );
  };
  api.openapi(metadataRoute, metadata);
  if (root !== '') app.get(`${METADATA_PATH}${root}`, metadata);
}

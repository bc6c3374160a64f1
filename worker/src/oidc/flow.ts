/**
 * The OIDC authorization code flow with PKCE, state and nonce, through oauth4webapi (which checks
 * issuer, audience, expiry and nonce of the ID token); the ID token's signature is checked too,
 * against the provider's JWKS. Discovery documents and JWKS are cached per isolate/process.
 */
import * as oauth from 'oauth4webapi';
import { eq } from 'drizzle-orm';
import { extServiceInsert, statusClass } from '../audit/ext-service.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { identityProviders, ROLES } from '../../../schema/index.js';
import { signClaims, verifyClaims } from '../accounts/session-keys.js';
import type { Db } from '../store/index.js';
import { openSecret } from '../store/secret-box.js';
import { resealClientSecret } from '../store/stored-secrets.js';
import type { ExternalIdentity } from '../users/external.js';

export type ProviderRow = typeof identityProviders.$inferSelect;

/** The signed cookie that carries a login's secrets from its start to the callback. */
export const FLOW_COOKIE = 'auth_oidc_flow';
const FLOW_AUDIENCE = 'auth-oidc-flow';
const FLOW_TTL_MS = 10 * 60_000;
const DISCOVERY_TTL_MS = 60 * 60_000;
const TIMEOUT_MS = 5000;

/** Plain loopback HTTP is allowed for development and tests only; any other issuer must use HTTPS. */
function insecureAllowed(url: URL): boolean {
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}
const requestOptions = (issuer: URL) => ({
  [oauth.allowInsecureRequests]: insecureAllowed(issuer),
  signal: AbortSignal.timeout(TIMEOUT_MS),
});

// Caches hold values, never promises: on Workers a request must not wait on another's I/O.
const discovery = new Map<string, { as: oauth.AuthorizationServer; at: number }>();
const jwks = new Map<string, oauth.JWKSCacheInput>();

function unreachable(provider: ProviderRow, err: unknown): ProblemError {
  return new ProblemError('BAD_GATEWAY', {
    detail: `the identity provider ${provider.name} is unreachable or misconfigured`,
    cause: err,
  });
}

/** The provider's metadata (discovery), cached for an hour. */
export async function authorizationServer(provider: ProviderRow, now: number): Promise<oauth.AuthorizationServer> {
  const hit = discovery.get(provider.issuer);
  if (hit && now - hit.at < DISCOVERY_TTL_MS) return hit.as;
  const issuer = new URL(provider.issuer);
  try {
    const res = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...requestOptions(issuer) });
    const as = await oauth.processDiscoveryResponse(issuer, res);
    discovery.set(provider.issuer, { as, at: now });
    return as;
  } catch (err) {
    throw unreachable(provider, err);
  }
}

/** The enabled provider `name`, or 404. */
export async function enabledProvider(db: Db, name: string): Promise<ProviderRow> {
  const rows = await db.select().from(identityProviders).where(eq(identityProviders.name, name)).limit(1);
  if (!rows[0] || !rows[0].enabled)
    throw new ProblemError('NOT_FOUND', { detail: `no identity provider named ${name}` });
  return rows[0];
}

/** A started login: where to send the browser, and the flow cookie's value. */
export interface StartedLogin {
  url: string;
  flowToken: string;
  expiresAt: number;
}

/**
 * Starts a login: the flow's secrets (PKCE verifier, state, nonce) go in a short-lived signed token
 * for the flow cookie; `redirectUri` is our callback as the browser reaches it.
 */
export async function startLogin(
  scope: RequestScope,
  provider: ProviderRow,
  o: { redirectUri: string; next: string | undefined },
): Promise<StartedLogin> {
  const now = scope.now();
  const as = await authorizationServer(provider, now);
  if (!as.authorization_endpoint) throw unreachable(provider, new Error('no authorization_endpoint'));
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const { redirectUri, next } = o;
  const flow = { idp: provider.name, verifier, state, nonce, redirectUri, ...(next ? { next } : {}) };
  const expiresAt = now + FLOW_TTL_MS;
  const flowToken = await signClaims(await scope.sessionKeys(), flow, expiresAt, FLOW_AUDIENCE);
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: provider.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: provider.scopes,
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  return { url: url.href, flowToken, expiresAt };
}

/**
 * `exchange`: the insert of the token exchange's event (ext_service_access), for the batch the login
 * ends with (idempotent, so every batch it can end with may carry it).
 */
export type CallbackResult =
  | { ok: true; claims: oauth.IDToken; next?: string; exchange: ReturnType<typeof extServiceInsert> }
  | { ok: false; error: string };

/** An OAuth error code as events keep it (the provider's text is not kept). */
const oauthError = (e: unknown) => (typeof e === 'string' && /^[a-z_]{1,64}$/.test(e) ? e : 'other');

/**
 * Completes a login at the callback (`responseUrl`: the callback's URL with the provider's answer)
 * with the flow cookie's value, which the caller clears: used once, a replayed callback finds no
 * flow; a state or nonce that does not match it is refused. An error the provider sends
 * (access_denied, ...) is returned for a redirect; protocol failures are 400 problems.
 */
export async function completeLogin(
  scope: RequestScope,
  provider: ProviderRow,
  o: { flowToken: string | undefined; responseUrl: URL },
): Promise<CallbackResult> {
  const now = scope.now();
  const token = o.flowToken;
  const flow = token ? await verifyClaims(await scope.sessionKeys(), token, FLOW_AUDIENCE, now) : undefined;
  if (
    !flow ||
    flow.idp !== provider.name ||
    typeof flow.state !== 'string' ||
    typeof flow.nonce !== 'string' ||
    typeof flow.verifier !== 'string' ||
    typeof flow.redirectUri !== 'string'
  ) {
    throw new ProblemError('MALFORMED_REQUEST', { detail: 'no OIDC login in progress (or it expired): start again' });
  }
  const as = await authorizationServer(provider, now);
  const client: oauth.Client = { client_id: provider.clientId };
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, client, o.responseUrl, flow.state);
  } catch (err) {
    if (err instanceof oauth.AuthorizationResponseError) return { ok: false, error: err.error };
    throw new ProblemError('MALFORMED_REQUEST', {
      detail: `the authorization response is refused: ${(err as Error).message}`,
    });
  }
  const issuer = new URL(provider.issuer);
  // Sealed with a previous key (a rotation): re-sealed with the current one as it is read.
  const reseal = resealClientSecret(scope.db, provider.name, provider.clientSecretEnc);
  const secret = await openSecret(scope.config, provider.clientSecretEnc, reseal);
  const clientAuth = oauth.ClientSecretBasic(secret);
  // The exchange is recorded (ext_service_access, §5.1): never the code, the verifier or the tokens.
  const started = scope.now();
  const call = (ok: boolean, durationMs: number, data: Record<string, unknown>, subjectLogin?: string) =>
    extServiceInsert(scope.db, {
      type: 'oidc.token_exchange',
      ok,
      at: started,
      durationMs,
      request: scope.request,
      ...(subjectLogin !== undefined ? { subjectLogin } : {}),
      data: { provider: provider.name, ...data },
    });
  let response: Response;
  try {
    response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      flow.redirectUri,
      flow.verifier,
      requestOptions(issuer),
    );
  } catch (err) {
    await call(false, scope.now() - started, { errorClass: 'PROVIDER_UNREACHABLE' })();
    throw unreachable(provider, err);
  }
  const took = scope.now() - started;
  const status = { statusClass: statusClass(response.status) };
  try {
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: flow.nonce,
      requireIdToken: true,
    });
    const cache = jwks.get(provider.issuer) ?? {};
    await oauth.validateApplicationLevelSignature(as, response, {
      ...requestOptions(issuer),
      [oauth.jwksCache]: cache,
    });
    jwks.set(provider.issuer, cache);
    const claims = oauth.getValidatedIdTokenClaims(result)!;
    const exchange = call(true, took, status, identityOfClaims(provider, claims).login);
    return { ok: true, claims, exchange, ...(typeof flow.next === 'string' ? { next: flow.next } : {}) };
  } catch (err) {
    const error = err instanceof oauth.ResponseBodyError ? oauthError(err.error) : 'id_token_invalid';
    await call(false, took, { ...status, error })();
    if (err instanceof oauth.ResponseBodyError)
      throw new ProblemError('MALFORMED_REQUEST', { detail: `the provider refused the code: ${err.error}` });
    if (err instanceof ProblemError) throw err;
    throw new ProblemError('MALFORMED_REQUEST', { detail: `the ID token is refused: ${(err as Error).message}` });
  }
}

const claimText = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** The external identity of an ID token's claims, mapped by the provider's claim names. */
export function identityOfClaims(provider: ProviderRow, claims: oauth.IDToken): ExternalIdentity {
  const login = claimText(claims[provider.claimLogin]) ?? claims.sub;
  const role = provider.claimRole ? claims[provider.claimRole] : undefined;
  return {
    source: 'oidc',
    sourceName: provider.name,
    // `sub` is unique per issuer only (OIDC Core §2): the validated `iss` is part of the key, so a
    // record pointed at another issuer reaches none of the accounts linked under the old one.
    issuer: claims.iss,
    externalId: claims.sub,
    login,
    displayName: claimText(claims[provider.claimDisplayName]) ?? login,
    email: claimText(claims[provider.claimEmail]) ?? null,
    role: ROLES.find((r) => r === role) ?? null,
    refreshRole: false,
    ...(provider.claimGroups ? { groups: groupsOfClaim(claims, provider.claimGroups) } : {}),
  };
}

/**
 * The group names of the claim `name` (docs/groups.md, "OIDC"): an array of strings, or one string;
 * a name with dots that is no claim of its own is a path into nested claims (`realm_access.roles`).
 * A claim that is absent or of another shape lists no groups (the account's groups of this provider
 * are then emptied: the token vouches for none).
 */
export function groupsOfClaim(claims: Record<string, unknown>, name: string): string[] {
  let value: unknown = claims[name];
  if (value === undefined && name.includes('.')) {
    value = name
      .split('.')
      .reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), claims);
  }
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return [...new Set(list.filter((v): v is string => typeof v === 'string').map((v) => v.trim()))].filter(
    (v) => v !== '',
  );
}

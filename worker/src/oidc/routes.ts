/** GET /v3/oidc/login/{idp_name} and its callback: login with a session through an OIDC provider. */
import { z } from '@hono/zod-openapi';
import type { App } from '../http/context.js';
import { clearAuthCookie, readAuthCookie, setAuthCookie } from '../http/cookies.js';
import { requestOrigin } from '../http/csrf.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { frontendWithError, safeRedirect } from '../http/redirect.js';
import { validated } from '../http/validated.js';
import { startPendingMerge, startSession } from '../sessions/route-common.js';
import { factorsOf } from '../accounts/factors.js';
import { throttleKey } from '../accounts/throttle.js';
import { loginKey } from '../auth/credentials.js';
import { secondStepRequired } from '../mfa/answers.js';
import { multiFactorOfClaims } from '../mfa/oidc-claims.js';
import { accountOfIdentity, assertMayLogIn, recordLogin } from '../users/external.js';
import { pendingMergeOf } from '../users/identity-merge.js';
import { FLOW_COOKIE, completeLogin, enabledProvider, identityOfClaims, startLogin } from './flow.js';
import { publicRoute } from '../auth/protected-route.js';
import { groupNamesOf } from '../accounts/model.js';

const Params = z.object({
  idp_name: z.string().min(1).max(63).openapi({ description: 'the name of the identity provider record' }),
});
const Next = z.object({
  next: z
    .string()
    .max(2048)
    .optional()
    .openapi({ description: 'where to go after the login: a same-origin path or a front-end URL' }),
});

const login = publicRoute({
  method: 'get',
  operationId: 'loginWithOidc',
  path: '/v3/oidc/login/{idp_name}',
  tags: ['auths'],
  summary: 'Log in through an OIDC identity provider',
  description:
    'Redirects the browser to the provider (authorization code flow with PKCE, state and nonce). No ' +
    'authentication; any role. 404 for an unknown provider, 502 when it is unreachable or misconfigured.',
  request: { params: Params, query: Next },
  responses: { 302: { description: 'to the provider' }, ...problemResponses(404, 422, 502) },
});

const callback = publicRoute({
  method: 'get',
  operationId: 'completeOidcLogin',
  path: '/v3/oidc/callback/{idp_name}',
  tags: ['auths'],
  summary: 'Where the OIDC provider sends the browser back',
  description: [
    'Checks state, exchanges the code (PKCE), validates the ID token (issuer, audience, signature, nonce, ' +
      'expiry), creates the account at its first login or refreshes it, and starts a session: 303 to `next` or ' +
      'DEFAULT_FRONTEND_URL. The exchange is an `oidc.token_exchange` audit event (ext_service_access), without ' +
      'the code or the tokens.',
    'An account with a second factor (docs/security-mfa.md) opens no session unless the record trusts the ' +
      "provider's claims (`trustMfaClaims`) and the ID token's `amr` names a multi-factor method or its `acr` is " +
      'accepted: DEFAULT_FRONTEND_URL with `auth_error=second_factor_required` and the pending-login cookie ' +
      '`auth_pending_login`, for POST /v3/login/second-factor. A trusted multi-factor login starts its session ' +
      'verified for step-up.',
    'Identities are keyed by the record, the issuer and the subject: after the issuer of a record changes, its ' +
      'logins reach none of the accounts linked under the old issuer (unless an admin moved the links, ' +
      '`relinkIdentities`).',
    'A login that collides with a local account goes to DEFAULT_FRONTEND_MERGE_URL with a pending merge for ' +
      '/v3/login/union (bound to this browser). A login that collides with another external account (LDAP, or ' +
      'OIDC of another record or issuer) is refused: DEFAULT_FRONTEND_URL with `auth_error=login_conflict`, ' +
      'nothing linked; an administrator must resolve it. An error from the provider (e.g. access_denied), or a ' +
      'blocked account (the same account rule as password logins: blocked by an administrator, or for ' +
      'inactivity), goes to DEFAULT_FRONTEND_URL with `auth_error` (`account_blocked`). A first login whose login ' +
      'claim breaks the login rule (letters, digits and . _ - @, starting with a letter or digit; no new lines, ' +
      'invisible characters, markup or compatibility characters), is still reserved after a deletion ' +
      '(USER_LOGIN_REUSE_DAY) or looks like another live or reserved login (Unicode TR #39 confusables) creates no ' +
      'account and goes to DEFAULT_FRONTEND_URL with `auth_error=login_not_allowed` and `auth_error_description` ' +
      'naming why. A replayed or forged state, a wrong nonce or an invalid ID token: 400.',
  ].join('\n\n'),
  request: { params: Params },
  responses: { 303: { description: 'to the front end' }, ...problemResponses(400, 404, 502) },
});

/** Registers the OIDC login endpoints. */
export function registerOidc(app: App): void {
  app.openapi(login, async (c) => {
    const provider = await enabledProvider(c.var.scope.db, validated(c, 'param', Params).idp_name);
    const redirectUri = `${requestOrigin(c)}${c.var.scope.config.get('ROOT_PATH')}/v3/oidc/callback/${provider.name}`;
    const next = validated(c, 'query', Next).next;
    const started = await startLogin(c.var.scope, provider, { redirectUri, next });
    setAuthCookie(c, started.flowToken, started.expiresAt, FLOW_COOKIE);
    return c.redirect(started.url, 302);
  });

  app.openapi(callback, async (c) => {
    const provider = await enabledProvider(c.var.scope.db, validated(c, 'param', Params).idp_name);
    // The flow cookie is used once: cleared before anything can fail.
    const flowToken = readAuthCookie(c, FLOW_COOKIE);
    clearAuthCookie(c, FLOW_COOKIE);
    const result = await completeLogin(c.var.scope, provider, { flowToken, responseUrl: new URL(c.req.url) });
    const config = c.var.scope.config;
    if (!result.ok) return c.redirect(frontendWithError(config, result.error), 303);
    const identity = identityOfClaims(provider, result.claims);
    // The token exchange's event goes in the batch the login ends with (written once: fixed id).
    const { exchange } = result;
    let outcome: Awaited<ReturnType<typeof accountOfIdentity>>;
    try {
      outcome = await accountOfIdentity(c.var.scope, identity, { also: [exchange()] });
    } catch (err) {
      // A login the service does not allow (see accountOfIdentity): the front end, with the cause.
      if (err instanceof ProblemError && err.code === 'LOGIN_NOT_ALLOWED') {
        return c.redirect(frontendWithError(config, err.code, err.detail), 303);
      }
      await exchange();
      throw err;
    }
    if ('collision' in outcome) {
      // Nothing changes here until the merge is proven: the exchange's event on its own.
      await exchange();
      try {
        await startPendingMerge(c, await pendingMergeOf(c.var.scope, { ...identity, login: outcome.collision.login }));
      } catch (err) {
        // Another external account holds the login (LOGIN_CONFLICT): to the front end, as other refusals.
        if (err instanceof ProblemError) return c.redirect(frontendWithError(config, err.code), 303);
        throw err;
      }
      return c.redirect(new URL(c.var.scope.config.get('DEFAULT_FRONTEND_MERGE_URL')).href, 303);
    }
    try {
      await assertMayLogIn(c.var.scope, outcome.user, { source: 'oidc', sourceName: provider.name }, [exchange()]);
    } catch (err) {
      if (err instanceof ProblemError) return c.redirect(frontendWithError(config, err.code), 303);
      throw err;
    }
    // The provider proved the identity (recorded as an LDAP directory's is); the second factor is
    // the provider's when the record trusts its claims, else the account's own, when it has one.
    const trusted = multiFactorOfClaims(provider, result.claims);
    const factors = await factorsOf(c.var.scope.db, outcome.user.id);
    const data = trusted ? { secondFactor: trusted } : undefined;
    const source = { source: 'oidc', sourceName: provider.name } as const;
    const user = await recordLogin(c.var.scope, outcome.user, source, { also: [exchange()], data });
    if (factors.length > 0 && !trusted) {
      const pending = await secondStepRequired(c, user, factors, {
        userId: user.id,
        login: user.login,
        kind: 'cookie',
        authMethod: 'oidc',
        throttleKey: throttleKey(loginKey(user.login), user.source === 'ldap' ? (user.sourceName ?? '') : undefined),
        known: false,
      });
      // The browser holds the pending cookie; the front end asks for the second step.
      return c.redirect(frontendWithError(config, pending.code), 303);
    }
    c.set('principal', { user, method: 'session', groups: groupNamesOf(user) });
    await startSession(c, user, 'cookie', 'oidc', trusted ? c.var.scope.now() : undefined);
    return c.redirect(safeRedirect(c, result.next, new URL(c.var.scope.config.get('DEFAULT_FRONTEND_URL')).href), 303);
  });
}

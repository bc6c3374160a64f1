/**
 * The one authentication middleware (specification, "Without a session" rule 3: the same headers
 * work on /v4/users): Basic, Bearer (an API token, or the access token of a session) and the
 * session cookie. It sets `c.var.principal`.
 */
import type { Context, MiddlewareHandler, Next } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv, Principal } from '../http/context.js';
import { groupNamesOf } from '../accounts/model.js';
import { inBackground } from '../http/background.js';
import { ProblemError } from '../http/problem.js';
import { authenticateLdapPassword, mergeRequiredProblem } from '../ldap/login.js';
import { explainEndedSession, signedSessionClaims, type SessionEnd } from '../sessions/ended.js';
import { clearAuthCookie, readAuthCookie } from '../http/cookies.js';
import { assertNotCrossSite } from '../http/csrf.js';
import { SESSION_AUDIENCE, sessionFromToken } from '../accounts/session-token.js';
import { verifyClaims } from '../accounts/session-keys.js';
import {
  CHALLENGES,
  challengeFor,
  malformed,
  parseBasic,
  parseBearer,
  splitAuthorization,
  type AuthenticateOptions,
  type Scheme,
} from '../auth/credentials.js';
import { authenticateLocalPassword, passwordExpiredProblem } from '../auth/password-login.js';
import { accountOfToken, touchToken } from '../accounts/tokens.js';
import { insufficientScope, tokenAllows } from '../accounts/token-scopes.js';
import { revocationCheckMs } from '../accounts/sessions.js';
import { assertEnrolled } from '../mfa/enforcement.js';
import { passwordChangeReason } from '../accounts/login-rule.js';
import { requestHeader } from '../http/node-messages.js';

function invalidToken(schemes: readonly Scheme[], end?: SessionEnd): ProblemError {
  return new ProblemError('INVALID_CREDENTIALS', {
    detail: end?.detail ?? 'the token is unknown, expired or revoked, or its account cannot log in',
    ...(end ? { extensions: { reason: end.reason } } : {}),
    headers: {
      'WWW-Authenticate': [
        ...new Set(
          schemes.map((s) => (s === 'Basic' ? CHALLENGES.Basic : `${CHALLENGES.Bearer}, error="invalid_token"`)),
        ),
      ].join(', '),
    },
  });
}

/**
 * Basic for an account with a second factor (docs/security-mfa.md): a password alone never
 * authenticates it. Told only after the right password (as the two-step login tells it).
 */
function basicWithSecondFactor(root: string): ProblemError {
  return new ProblemError('SECOND_FACTOR_NOT_ALLOWED_HERE', {
    detail:
      'this account has a second factor: Basic cannot carry it. Log in with a session (/v3/login, then ' +
      `${root}/v3/login/second-factor) and issue an API token (POST ${root}/v4/users/me/tokens) for scripts`,
    extensions: { apiTokens: `${root}/v4/users/me/tokens`, login: `${root}/v3/login` },
  });
}

/**
 * A route whose session credential suffices as signed (`signedSessionSuffices`: logout): the verified,
 * unexpired claims of `token`, set as `signedSession` without reading the session; false for anything else.
 */
async function signedOnly(c: Context<AppEnv>, token: string, o: AuthenticateOptions): Promise<boolean> {
  if (!o.signedSessionSuffices) return false;
  const { scope } = c.var;
  const claims = await verifyClaims(await scope.sessionKeys(), token, SESSION_AUDIENCE, scope.now());
  if (typeof claims?.sid !== 'string' || typeof claims.sub !== 'string') return false;
  c.set('signedSession', { sessionId: claims.sid, userId: claims.sub });
  return true;
}

/** The principal of a live session token; a Response when `o` lets an ended session log out again. */
async function fromSession(c: Context<AppEnv>, token: string, o: AuthenticateOptions): Promise<Principal | Response> {
  const found = await sessionFromToken(c.var.scope, token, SESSION_AUDIENCE);
  if (found) {
    const { user, session } = found;
    return { user, method: 'session', sessionId: session.id, session, groups: groupNamesOf(user) };
  }
  if (o.endedSessionIsLoggedOut && (await signedSessionClaims(c.var.scope, token, SESSION_AUDIENCE))) {
    clearAuthCookie(c);
    return c.body(null, 204);
  }
  // Only a token we signed learns why its session ended: nothing is told to anyone else.
  throw invalidToken(o.schemes, await explainEndedSession(c.var.scope, token, SESSION_AUDIENCE));
}

/**
 * Runs the rest of the request as `principal`; a request authenticated with Basic or Bearer is then
 * recorded as an API-access event (audit/api-access.ts: a successful read joins its aggregate of the
 * window, a refusal or a write is an event of its own; buffered, written after the response).
 * Cookie sessions are not: their logins and changes are audited, and a browser's every request
 * would drown the stream.
 */
async function proceed(
  c: Context<AppEnv>,
  next: Next,
  principal: Principal,
  scheme: Scheme,
  o: AuthenticateOptions,
): Promise<void> {
  if (!o.enrolment) assertEnrolled(c.var.scope.config, principal);
  // A session lives on while its password must be changed (its lifetime ended meanwhile): like Basic,
  // it may then only change it, whatever factor opened it (docs/security.md, "What ends what").
  if (principal.method === 'session' && !o.allowExpiredPassword) {
    const reason = passwordChangeReason(principal.user, c.var.scope.config, c.var.scope.now());
    if (reason) throw passwordExpiredProblem(reason);
  }
  c.set('principal', principal);
  await next();
  const recorder = c.var.deps.apiAccess;
  if (scheme === 'Cookie' || !recorder || !c.var.scope.config.get('AUDIT_API_ACCESS_ENABLED')) return;
  const { request, config } = c.var.scope;
  recorder.record(
    {
      at: c.var.scope.now(),
      user: { id: principal.user.id, login: principal.user.login },
      method: scheme === 'Basic' ? 'basic' : 'bearer',
      httpMethod: c.req.method,
      // The path only: query strings may carry codes or tokens.
      path: c.req.path,
      status: c.res.status,
      requestId: request.id,
      sourceIp: request.ip,
      userAgent: request.userAgent,
      ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
    },
    (work) => inBackground(c, work),
    config.get('AUDIT_API_ACCESS_WINDOW_SEC') * 1000,
  );
}

/** Middleware authenticating the request with one of `schemes`. */
export function authenticate(o: AuthenticateOptions): MiddlewareHandler<AppEnv> {
  if (o.schemes.length === 0) throw new TypeError('authenticate: at least one scheme is required');
  const challenge = challengeFor(o.schemes);
  const accepts = (s: Scheme) => o.schemes.includes(s);
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = requestHeader(c, 'Authorization');
    const parts = splitAuthorization(header);
    const { db } = c.var.scope;
    const now = c.var.scope.now();

    if (!header || !parts) {
      const cookie = accepts('Cookie') ? readAuthCookie(c) : undefined;
      if (!cookie)
        throw new ProblemError('UNAUTHENTICATED', {
          detail: `send credentials: ${o.schemes.join(' or ')}`,
          headers: { 'WWW-Authenticate': challenge },
        });
      // Cookies ride along on cross-site requests: unsafe methods must prove they are same-site.
      assertNotCrossSite(c);
      if (await signedOnly(c, cookie, o)) return next();
      const principal = await fromSession(c, cookie, o);
      if (principal instanceof Response) return principal;
      return proceed(c, next, principal, 'Cookie', o);
    }
    const scheme = o.schemes.find((s) => s !== 'Cookie' && s.toLowerCase() === parts.scheme.toLowerCase());
    if (!scheme) throw malformed(`unsupported authentication scheme; use ${o.schemes.join(' or ')}`, o.schemes);

    if (scheme === 'Basic') {
      const { login, password } = parseBasic(header, o.schemes);
      const ldapServer = requestHeader(c, 'X-LDAP-Name');
      if (ldapServer !== undefined) {
        // Without a session a collision with a local account cannot become a merge: 409.
        const outcome = await authenticateLdapPassword(c.var.scope, ldapServer, login, password, challenge);
        if ('merge' in outcome) throw mergeRequiredProblem(c.var.scope.config, outcome.merge);
        if (outcome.secondFactor) throw basicWithSecondFactor(c.var.scope.config.get('ROOT_PATH'));
        return proceed(
          c,
          next,
          { user: outcome.user, method: 'basic', groups: groupNamesOf(outcome.user) },
          'Basic',
          o,
        );
      }
      const { config } = c.var.scope;
      const result = await authenticateLocalPassword(c.var.scope, login, password, { challenge });
      if (result.secondFactor) throw basicWithSecondFactor(config.get('ROOT_PATH'));
      if (result.passwordExpired && o.allowExpiredPassword !== true)
        throw passwordExpiredProblem(result.passwordReason);
      return proceed(c, next, { user: result.user, method: 'basic', groups: groupNamesOf(result.user) }, 'Basic', o);
    }

    const token = parseBearer(header, o.schemes);
    if (token.includes('.')) {
      // A JWT: the access token of a session (/v3/oauth_login); it lives and dies with the session.
      // Signed only (logout): not an API access worth an event of its own; the logout is audited.
      if (await signedOnly(c, token, o)) return next();
      const principal = await fromSession(c, token, o);
      if (principal instanceof Response) return principal;
      return proceed(c, next, principal, 'Bearer', o);
    }
    const found = await accountOfToken(db, token, now, revocationCheckMs(c.var.scope.config));
    if (!found) throw invalidToken(o.schemes);
    // Its scopes, before anything else: the owner's role is the route's role check (accounts/token-scopes.ts).
    if (!tokenAllows(found.scopes, o.tokenScope ?? 'none')) throw insufficientScope(o.tokenScope ?? 'none');
    const touch = touchToken(db, found, now, c.var.scope.request.ip);
    if (touch) inBackground(c, touch);
    const principal: Principal = {
      user: found.user,
      method: 'bearer',
      tokenId: found.tokenId,
      groups: groupNamesOf(found.user),
    };
    return proceed(c, next, principal, 'Bearer', o);
  });
}

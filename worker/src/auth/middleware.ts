/**
 * The one authentication middleware (specification, "Without a session" rule 3: the same headers
 * work on /v4/users): Basic, Bearer (an API token, or the access token of a session) and the
 * session cookie. It sets `c.var.principal`.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv, Principal } from '../http/context.js';
import { inBackground } from '../http/background.js';
import { ProblemError } from '../http/problem.js';
import { authenticateLdapPassword, mergeRequiredProblem } from '../ldap/login.js';
import { explainEndedSession, signedSessionClaims, type SessionEnd } from '../sessions/ended.js';
import { assertNotCrossSite, clearAuthCookie, readAuthCookie } from '../sessions/http.js';
import { SESSION_AUDIENCE, sessionFromToken } from '../sessions/session-token.js';
import { CHALLENGES, challengeFor, malformed, parseBasic, parseBearer, splitAuthorization, type Scheme } from './credentials.js';
import { authenticateLocalPassword, passwordExpiredProblem } from './password-login.js';
import { accountOfToken, touchToken } from './tokens.js';

export interface AuthenticateOptions {
  schemes: readonly Scheme[];
  /** Let an expired password through (only the self password change needs this). */
  allowExpiredPassword?: boolean;
  /**
   * Logout is idempotent: a token we signed whose session has already ended (or is unknown) gets
   * 204 at once, ending nothing else. A forged token or no credential stays a 401.
   */
  endedSessionIsLoggedOut?: boolean;
}

function invalidToken(schemes: readonly Scheme[], end?: SessionEnd): ProblemError {
  return new ProblemError('INVALID_CREDENTIALS', {
    detail: end?.detail ?? 'the token is unknown, expired or revoked, or its account cannot log in',
    ...(end ? { extensions: { reason: end.reason } } : {}),
    headers: { 'WWW-Authenticate': [...new Set(schemes.map((s) => (s === 'Basic' ? CHALLENGES.Basic : `${CHALLENGES.Bearer}, error="invalid_token"`)))].join(', ') },
  });
}

/** The principal of a live session token; a Response when `o` lets an ended session log out again. */
async function fromSession(c: Context<AppEnv>, token: string, o: AuthenticateOptions): Promise<Principal | Response> {
  const found = await sessionFromToken(c, token, SESSION_AUDIENCE);
  if (found) return { user: found.user, method: 'session', sessionId: found.session.id, session: found.session };
  if (o.endedSessionIsLoggedOut && (await signedSessionClaims(c, token, SESSION_AUDIENCE))) {
    clearAuthCookie(c);
    return c.body(null, 204);
  }
  // Only a token we signed learns why its session ended: nothing is told to anyone else.
  throw invalidToken(o.schemes, await explainEndedSession(c, token, SESSION_AUDIENCE));
}

/** Middleware authenticating the request with one of `schemes`. */
export function authenticate(o: AuthenticateOptions): MiddlewareHandler<AppEnv> {
  if (o.schemes.length === 0) throw new TypeError('authenticate: at least one scheme is required');
  const challenge = challengeFor(o.schemes);
  const accepts = (s: Scheme) => o.schemes.includes(s);
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header('Authorization');
    const parts = splitAuthorization(header);
    const { verifier, clock } = c.var.deps;
    const db = c.var.db;
    const now = clock();

    if (!header || !parts) {
      const cookie = accepts('Cookie') ? readAuthCookie(c) : undefined;
      if (!cookie) throw new ProblemError('UNAUTHENTICATED', { detail: `send credentials: ${o.schemes.join(' or ')}`, headers: { 'WWW-Authenticate': challenge } });
      // Cookies ride along on cross-site requests: unsafe methods must prove they are same-site.
      assertNotCrossSite(c);
      const principal = await fromSession(c, cookie, o);
      if (principal instanceof Response) return principal;
      c.set('principal', principal);
      return next();
    }
    const scheme = o.schemes.find((s) => s !== 'Cookie' && s.toLowerCase() === parts.scheme.toLowerCase());
    if (!scheme) throw malformed(`unsupported authentication scheme; use ${o.schemes.join(' or ')}`, o.schemes);

    if (scheme === 'Basic') {
      const { login, password } = parseBasic(header, o.schemes);
      const ldapServer = c.req.header('X-LDAP-Name');
      if (ldapServer !== undefined) {
        // Without a session a collision with a local account cannot become a merge: 409.
        const outcome = await authenticateLdapPassword(c, ldapServer, login, password, challenge);
        if ('merge' in outcome) throw mergeRequiredProblem(c, outcome.merge);
        c.set('principal', { user: outcome.user, method: 'basic' });
        return next();
      }
      const result = await authenticateLocalPassword({ db, config: c.var.config, verifier, now, logger: c.var.logger, requestId: c.var.requestId, challenge }, login, password);
      if (result.passwordExpired && !o.allowExpiredPassword) throw passwordExpiredProblem();
      c.set('principal', { user: result.user, method: 'basic' });
      return next();
    }

    const token = parseBearer(header, o.schemes);
    if (token.includes('.')) {
      // A JWT: the access token of a session (/v3/oauth_login); it lives and dies with the session.
      const principal = await fromSession(c, token, o);
      if (principal instanceof Response) return principal;
      c.set('principal', principal);
      return next();
    }
    const found = await accountOfToken(db, token, now);
    if (!found) throw invalidToken(o.schemes);
    inBackground(c, touchToken(db, found, now));
    c.set('principal', { user: found.user, method: 'bearer', tokenId: found.tokenId });
    return next();
  });
}

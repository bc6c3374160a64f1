/**
 * The one authentication middleware for Basic and Bearer credentials (specification, "Without a
 * session"; rule 3: the same headers work on /v4/users). It sets `c.var.principal`.
 */
import type { MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/context.js';
import { inBackground } from '../http/background.js';
import { ProblemError } from '../http/problem.js';
import { CHALLENGES, malformed, parseBasic, parseBearer, splitAuthorization, type Scheme } from './credentials.js';
import { authenticateLocalPassword, passwordExpiredProblem } from './password-login.js';
import { accountOfToken, touchToken } from './tokens.js';

export interface AuthenticateOptions {
  schemes: readonly Scheme[];
  /** Let an expired password through (only the self password change needs this). */
  allowExpiredPassword?: boolean;
}

/** Middleware authenticating the request with one of `schemes`. */
export function authenticate(o: AuthenticateOptions): MiddlewareHandler<AppEnv> {
  if (o.schemes.length === 0) throw new TypeError('authenticate: at least one scheme is required');
  const challenge = o.schemes.map((s) => CHALLENGES[s]).join(', ');
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header('Authorization');
    const parts = splitAuthorization(header);
    if (!header || !parts) {
      throw new ProblemError('UNAUTHENTICATED', { detail: `send credentials: ${o.schemes.join(' or ')}`, headers: { 'WWW-Authenticate': challenge } });
    }
    const scheme = o.schemes.find((s) => s.toLowerCase() === parts.scheme.toLowerCase());
    if (!scheme) throw malformed(`unsupported authentication scheme; use ${o.schemes.join(' or ')}`, o.schemes);
    const { verifier, clock } = c.var.deps;
    const db = c.var.db;
    const now = clock();

    if (scheme === 'Basic') {
      const { login, password } = parseBasic(header, o.schemes);
      if (c.req.header('X-LDAP-Name') !== undefined) {
        throw new ProblemError('NOT_IMPLEMENTED', { detail: 'LDAP accounts (X-LDAP-Name) are not available yet on this service' });
      }
      const result = await authenticateLocalPassword({ db, config: c.var.config, verifier, now, requestId: c.var.requestId, challenge }, login, password);
      if (result.passwordExpired && !o.allowExpiredPassword) throw passwordExpiredProblem();
      c.set('principal', { user: result.user, method: 'basic' });
      return next();
    }

    const token = parseBearer(header, o.schemes);
    const found = await accountOfToken(db, token, now);
    if (!found) {
      throw new ProblemError('INVALID_CREDENTIALS', {
        detail: 'the token is unknown, expired or revoked, or its account cannot log in',
        headers: { 'WWW-Authenticate': o.schemes.map((s) => (s === 'Bearer' ? `${CHALLENGES.Bearer}, error="invalid_token"` : CHALLENGES[s])).join(', ') },
      });
    }
    inBackground(c, touchToken(db, { tokenId: found.tokenId, userId: found.user.id, lastUsedAt: found.lastUsedAt }, now));
    c.set('principal', { user: found.user, method: 'bearer', tokenId: found.tokenId });
    return next();
  });
}

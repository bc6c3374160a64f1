/**
 * The shared steps of every login with a session: check the credentials on the one password path
 * (a local account, or an LDAP account of a server record), then open the session within the
 * user's limit. Reading the body and setting cookies are the routes' (sessions/routes.ts).
 */
import { z } from '@hono/zod-openapi';
import { CHALLENGES, MAX_LOGIN_LENGTH, MAX_PASSWORD_LENGTH } from '../auth/credentials.js';
import { authenticateLocalPassword, passwordExpiredProblem } from '../auth/password-login.js';
import type { RequestScope } from '../http/scope.js';
import { authenticateLdapPassword, type LdapLoginOutcome } from '../ldap/login.js';
import type { UserRow } from '../users/model.js';
import { sessionToken } from './session-token.js';
import { createSession, type SessionAuthMethod, type SessionRow } from './store.js';

export const LoginBody = z
  .object({
    login: z.string().min(1).max(MAX_LOGIN_LENGTH),
    password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
    ldapServer: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: 'the LDAP server record, as X-LDAP-Name; omitted: a local account' }),
    next: z
      .string()
      .max(2048)
      .optional()
      .openapi({ description: 'form posts: where to go after the login (same-origin path or front-end URL only)' }),
  })
  .openapi('LoginRequest');

export type LoginInput = z.infer<typeof LoginBody>;

/**
 * Checks a login and password on the shared path. An LDAP login whose login is a local account's
 * becomes a pending merge (`merge`): never a silent login. An expired local password is 403 with
 * the way to change it.
 */
export async function checkPasswordForSession(
  scope: RequestScope,
  login: string,
  password: string,
  ldapServer?: string,
): Promise<LdapLoginOutcome> {
  if (ldapServer !== undefined) return authenticateLdapPassword(scope, ldapServer, login, password, CHALLENGES.Basic);
  const { db, lazyDb, config, verifier, logger, request } = scope;
  const ctx = { db, lazyDb, config, verifier, now: scope.now(), logger, request, challenge: CHALLENGES.Basic };
  const result = await authenticateLocalPassword(ctx, login, password);
  if (result.passwordExpired) {
    const problem = passwordExpiredProblem();
    problem.extensions.changePassword = `${config.get('ROOT_PATH')}/v4/users/me/password`;
    throw problem;
  }
  return { user: result.user };
}

/**
 * Opens a session for `user` (the oldest ends beyond the user's limit); returns it with its token.
 * `authMethod` records how the login was proven (issuing API tokens needs a recent password).
 * Written, like the login's own record, on the lazy connection (Node: reaches the disk within a
 * second, architecture.md §6): a power failure before that loses the session, its event and the
 * ends it caused together, and the client logs in again.
 */
export async function openSession(
  scope: RequestScope,
  user: UserRow,
  kind: SessionRow['kind'],
  authMethod: SessionAuthMethod,
): Promise<{ session: SessionRow; token: string }> {
  const session = await createSession(scope.lazyDb ?? scope.db, user, {
    kind,
    authMethod,
    now: scope.now(),
    config: scope.config,
    userAgent: scope.request.userAgent ?? undefined,
    request: scope.request,
  });
  return { session, token: await sessionToken(scope, session) };
}

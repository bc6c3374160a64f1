import { ANYONE, ANY_ROLE, protectedRoute } from '../auth/protected-route.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { clearAuthCookie } from '../http/cookies.js';
import { logOutSignedSession, revokeSessions, sessionPolicy } from '../accounts/sessions.js';

const logout = protectedRoute(
  {
    tokenScope: 'account:write',
    schemes: ['Cookie', 'Bearer'],
    roles: ANY_ROLE,
    endedSessionIsLoggedOut: true,
    enrolment: true,
    signedSessionSuffices: true,
  },
  {
    method: 'post',
    operationId: 'logout',
    path: '/v3/logout',
    tags: ['auths'],
    summary: 'End the current session',
    description: [
      'The session cookie (same-origin requests only) or the session access token as Bearer. Clears the cookie. ' +
        'The session is ended by the id its credential carries, signed, without reading it first (one database ' +
        'round trip).',
      'Idempotent: a cookie or access token that we signed whose session has already ended (logged out, ended by a ' +
        'newer login, a password change, an administrator, or expired) or is unknown also gets 204, and ends nothing.',
      'No credential, or a token we did not sign: 401. An API token is not a session: 400.',
    ].join('\n\n'),
    responses: { 204: { description: 'ended, or already ended' }, ...problemResponses(400) },
  },
);

const logoutAll = protectedRoute(
  { tokenScope: 'account:write', ...ANYONE, endedSessionIsLoggedOut: true, enrolment: true },
  {
    method: 'post',
    operationId: 'logoutAll',
    path: '/v3/logout/all',
    tags: ['auths'],
    summary: 'End every session of the caller',
    description: [
      'Session cookie, session access token, Basic or Bearer (API token). Ends every session of the caller (their ' +
        'OAuth access tokens too; API tokens are not sessions and stay) and clears the cookie.',
      'Idempotent: a cookie or access token that we signed whose session has already ended, or is unknown, gets 204 ' +
        'and ends nothing (an ended session is no proof of who the caller is).',
      'No credential, a token we did not sign, or wrong Basic credentials: 401.',
    ].join('\n\n'),
    responses: { 204: { description: 'ended, or already ended' } },
  },
);

/** Registers the logout endpoints (after the logins). */
export function registerLogout(app: App): void {
  app.openapi(logout, async (c) => {
    const signed = c.var.signedSession;
    if (signed) {
      await logOutSignedSession(c.var.scope.db, {
        id: signed.sessionId,
        userId: signed.userId,
        now: c.var.scope.now(),
        policy: sessionPolicy(c.var.scope.config),
        request: c.var.scope.request,
      });
      clearAuthCookie(c);
      return c.body(null, 204);
    }
    // Only an API token reaches here (a session credential is `signedSession`).
    const { user, method, sessionId } = c.var.principal;
    if (method !== 'session' || !sessionId)
      throw new ProblemError('MALFORMED_REQUEST', { detail: 'not a session: nothing to log out' });
    const now = c.var.scope.now();
    await revokeSessions(c.var.scope.db, user, {
      id: sessionId,
      now,
      actor: user,
      reason: 'logout',
      request: c.var.scope.request,
    });
    clearAuthCookie(c);
    return c.body(null, 204);
  });

  app.openapi(logoutAll, async (c) => {
    const user = c.var.principal.user;
    const now = c.var.scope.now();
    await revokeSessions(c.var.scope.db, user, {
      now,
      actor: user,
      reason: 'logout_all',
      request: c.var.scope.request,
    });
    clearAuthCookie(c);
    return c.body(null, 204);
  });
}

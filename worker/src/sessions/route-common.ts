/**
 * What the session-login route files share (sessions/routes.ts, sessions/second-step-routes.ts): the JSON
 * answer, the opening of a session with its cookie, the cookies of a pending merge, the answer of a login
 * (JSON or a form post's redirect).
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { PublicUserSchema, toPublicUser } from '../accounts/model.js';
import { isFormPost } from '../http/body.js';
import { setAuthCookie, setHostCookie } from '../http/cookies.js';
import { frontendWithError, safeRedirect } from '../http/redirect.js';
import type { PendingMerge } from '../users/identity-merge.js';
import type { UserRow } from '../accounts/model.js';
import { openSession, type OpenedSession } from './login.js';
import { BINDING_COOKIE, MERGE_COOKIE, signPendingMerge } from './merge.js';
import type { SessionAuthMethod, SessionRow } from '../accounts/sessions.js';

/** The answer of a session login (JSON). */
export const SessionResponse = z.object({ user: PublicUserSchema, expiresAt: z.string() }).openapi('SessionLogin');
export const formAndJson = <S extends z.ZodType>(schema: S) => ({
  'application/json': { schema },
  'application/x-www-form-urlencoded': { schema },
});

/**
 * Opens a session for `user` and sets its cookie (the session logins and the OIDC callback);
 * `secondFactorAt`: the login proved a second factor then (an OIDC provider's trusted claims).
 */
export async function startSession(
  c: Context<AppEnv>,
  user: UserRow,
  kind: SessionRow['kind'],
  authMethod: SessionAuthMethod,
  secondFactorAt?: number,
): Promise<OpenedSession> {
  const opened = await openSession(c.var.scope, user, kind, authMethod, secondFactorAt);
  setAuthCookie(c, opened.token, opened.session.expiresAt);
  return opened;
}

/** Sets the two cookies of a pending merge (an LDAP or OIDC login that collides with a local account). */
export async function startPendingMerge(c: Context<AppEnv>, merge: PendingMerge): Promise<void> {
  const cookies = await signPendingMerge(c.var.scope, merge);
  setAuthCookie(c, cookies.token, cookies.expiresAt, MERGE_COOKIE);
  setHostCookie(c, BINDING_COOKIE, cookies.binding, cookies.expiresAt);
}

/** Answers a session login: JSON 200, or 303 for a form post. */
export async function answerLogin(
  c: Context<AppEnv>,
  run: () => Promise<Awaited<ReturnType<typeof startSession>> & { next?: string }>,
) {
  const fallback = new URL(c.var.scope.config.get('DEFAULT_FRONTEND_URL')).href;
  if (!isFormPost(c)) {
    const { session } = await run();
    const user = c.var.principal.user;
    return c.json(
      { user: toPublicUser(user, c.var.scope.config), expiresAt: new Date(session.expiresAt).toISOString() },
      200,
    );
  }
  try {
    const { next } = await run();
    return c.redirect(safeRedirect(c, next, fallback), 303);
  } catch (err) {
    if (err instanceof ProblemError && err.code === 'MERGE_REQUIRED')
      return c.redirect(new URL(c.var.scope.config.get('DEFAULT_FRONTEND_MERGE_URL')).href, 303);
    if (err instanceof ProblemError && err.status < 500 && err.code !== 'VALIDATION')
      return c.redirect(frontendWithError(c.var.scope.config, err.code), 303);
    throw err;
  }
}

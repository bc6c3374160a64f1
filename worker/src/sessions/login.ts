/**
 * The shared steps of every login with a session: read the credentials from a JSON or form body,
 * check them on the one password path, create the session within the user's limit, set the cookie.
 */
import type { Context } from 'hono';
import { z } from '@hono/zod-openapi';
import { CHALLENGES, MAX_LOGIN_LENGTH, MAX_PASSWORD_LENGTH } from '../auth/credentials.js';
import { authenticateLocalPassword, passwordExpiredProblem } from '../auth/password-login.js';
import type { AppEnv } from '../http/context.js';
import { authenticateLdapPassword, mergeRequiredProblem } from '../ldap/login.js';
import { startPendingMerge } from './merge.js';
import { ProblemError } from '../http/problem.js';
import type { UserRow } from '../users/model.js';
import { setAuthCookie } from './http.js';
import { sessionToken } from './session-token.js';
import { createSession, type SessionAuthMethod, type SessionRow } from './store.js';

export const LoginBody = z
  .object({
    login: z.string().min(1).max(MAX_LOGIN_LENGTH),
    password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
    ldapServer: z.string().min(1).max(100).optional().openapi({ description: 'the LDAP server record, as X-LDAP-Name; omitted: a local account' }),
    next: z.string().max(2048).optional().openapi({ description: 'form posts: where to go after the login (same-origin path or front-end URL only)' }),
  })
  .openapi('LoginRequest');

export type LoginInput = z.infer<typeof LoginBody>;

/** Whether the request is a browser form post (answered with redirects rather than JSON). */
export function isFormPost(c: Context<AppEnv>): boolean {
  const type = c.req.header('Content-Type') ?? '';
  return type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data');
}

/** Reads a JSON or form body and validates it with `schema` (422 naming each bad field). */
export async function readBody<S extends z.ZodType>(c: Context<AppEnv>, schema: S, rename: Record<string, string> = {}): Promise<z.output<S>> {
  let raw: unknown;
  if (isFormPost(c)) {
    const form = await c.req.parseBody();
    raw = Object.fromEntries(Object.entries(form).filter(([, v]) => typeof v === 'string').map(([k, v]) => [rename[k] ?? k, v]));
  } else if ((c.req.header('Content-Type') ?? '').startsWith('application/json')) {
    raw = await c.req.json().catch(() => {
      throw new ProblemError('MALFORMED_REQUEST', { detail: 'malformed JSON in the request body' });
    });
  } else {
    throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', { detail: 'send application/json or an HTML form (application/x-www-form-urlencoded)' });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((i) => ({ location: 'body', path: i.path.map(String).join('.'), message: i.message }));
    throw new ProblemError('VALIDATION', { detail: errors.map((e) => `${e.path}: ${e.message}`).join('; '), extensions: { errors } });
  }
  return parsed.data;
}

/** Checks a login and password on the shared path; an expired password leads to the change flow. */
export async function checkPasswordForSession(c: Context<AppEnv>, login: string, password: string, ldapServer?: string): Promise<UserRow> {
  if (ldapServer !== undefined) {
    const outcome = await authenticateLdapPassword(c, ldapServer, login, password, CHALLENGES.Basic);
    if ('user' in outcome) return outcome.user;
    // The login is a local account's: never a silent login. The pending-merge cookie rides on the
    // answer (409 for JSON, 303 to DEFAULT_FRONTEND_MERGE_URL for forms); /v3/login/union completes it.
    await startPendingMerge(c, outcome.merge);
    throw mergeRequiredProblem(c, outcome.merge);
  }
  const result = await authenticateLocalPassword(
    { db: c.var.db, config: c.var.config, verifier: c.var.deps.verifier, now: c.var.deps.clock(), logger: c.var.logger, requestId: c.var.requestId, challenge: CHALLENGES.Basic },
    login,
    password,
  );
  if (result.passwordExpired) {
    const problem = passwordExpiredProblem();
    problem.extensions.changePassword = `${c.var.deps.config.env.get('ROOT_PATH')}/v4/users/me/password`;
    throw problem;
  }
  return result.user;
}

/**
 * Creates a session for `user` and sets its cookie; returns the session and its token. `authMethod`
 * records how the login was proven (issuing API tokens needs a recent password).
 */
export async function startSession(
  c: Context<AppEnv>,
  user: UserRow,
  kind: SessionRow['kind'],
  authMethod: SessionAuthMethod,
): Promise<{ session: SessionRow; token: string }> {
  const session = await createSession(c.var.db, user, {
    kind,
    authMethod,
    now: c.var.deps.clock(),
    config: c.var.config,
    userAgent: c.req.header('User-Agent'),
    requestId: c.var.requestId,
  });
  const token = await sessionToken(c, session);
  setAuthCookie(c, token, session.expiresAt);
  return { session, token };
}

/**
 * The front-end URL with an `auth_error` code, where a failed form login sends the browser; with
 * `description`, an `auth_error_description` too (OAuth's error_description, for the user).
 */
export function frontendWithError(c: Context<AppEnv>, code: string, description?: string): string {
  const url = new URL(c.var.config.get('DEFAULT_FRONTEND_URL'));
  url.searchParams.set('auth_error', code.toLowerCase());
  if (description) url.searchParams.set('auth_error_description', description);
  return url.href;
}

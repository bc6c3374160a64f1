/** Logins with a session: /v3/login, /v3/oauth_login, /v3/login/union (the second step and logout: beside). */
import { SessionResponse, answerLogin, formAndJson, startPendingMerge, startSession } from './route-common.js';
import { registerSecondStep } from './second-step-routes.js';
import { registerLogout } from './logout-routes.js';
import { z } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { publicRoute } from '../auth/protected-route.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { groupNamesOf } from '../accounts/model.js';
import { readBody } from '../http/body.js';
import { clearAuthCookie, clearHostCookie, readAuthCookie, readHostCookie, setAuthCookie } from '../http/cookies.js';
import { refuseCrossSiteLogin } from '../http/csrf.js';
import { mergeRequiredProblem } from '../ldap/login.js';
import { linkPendingMerge } from '../users/identity-merge.js';
import type { UserRow } from '../accounts/model.js';
import { LoginBody, checkLocalPassword, logInWithSession, type OpenedSession, type SecondStepNeeded } from './login.js';
import { readDeviceClaim, setDeviceCookie } from './device-cookie.js';
import { BINDING_COOKIE, MERGE_COOKIE, MergeBody, verifyPendingMerge } from './merge.js';
import type { SessionRow } from '../accounts/sessions.js';
import { requestHeader } from '../http/node-messages.js';
import { secondStepRequired } from '../mfa/answers.js';
import { checkSecondFactor, completePendingLogin, secondStepPlan } from '../mfa/second-step.js';
import { PENDING_TTL_MS } from '../accounts/pending-login.js';
import { isTotpCode } from '../accounts/totp.js';
import { W } from './session-api-words.js';

const login = publicRoute({
  method: 'post',
  operationId: 'login',
  path: '/v3/login',
  tags: ['auths'],
  summary: W.s1,
  description: W.d2,
  request: { body: { required: false, content: formAndJson(LoginBody) } }, // validated by readBody (JSON or form)
  responses: {
    200: { description: 'logged in', content: { 'application/json': { schema: SessionResponse } } },
    303: { description: 'form post: to the front end' },
    ...problemResponses(400, 401, 403, 409, 415, 422, 429, 502, 503, 504),
  },
});

// Fields are checked by the handler, which answers RFC 6749 errors (invalid_request, ...).
const OAuthForm = z
  .object({
    grant_type: z.string().optional().openapi({ example: 'password', description: 'required: password' }),
    username: z.string().optional().openapi({ description: 'required' }),
    password: z.string().optional().openapi({ description: 'required' }),
    scope: z.string().optional(),
    otp: z.string().optional().openapi({ description: W.d3 }),
  })
  .openapi('OAuthPasswordGrant');
const OAuthToken = z
  .object({ access_token: z.string(), token_type: z.literal('bearer'), expires_in: z.number().int() })
  .openapi('OAuthToken');
const OAuthError = z.object({ error: z.string(), error_description: z.string().optional() }).openapi('OAuthError');

/**
 * RFC 6749 §4.3.2: the grant is a urlencoded form. The route's form validator would also parse
 * multipart bodies, and answer a malformed one with a problem instead of an OAuth error: 415.
 */
const urlencodedOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (/^\s*multipart\//i.test(requestHeader(c, 'Content-Type') ?? '')) {
    throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', { detail: 'send the grant as application/x-www-form-urlencoded' });
  }
  await next();
};

const oauth = publicRoute({
  method: 'post',
  operationId: 'oauthLogin',
  path: '/v3/oauth_login',
  middleware: [urlencodedOnly] as const,
  tags: ['auths'],
  summary: W.s4,
  description: W.d5,
  // errors in the OAuth shape, by the handler
  request: { body: { required: false, content: { 'application/x-www-form-urlencoded': { schema: OAuthForm } } } },
  responses: {
    200: { description: 'the token', content: { 'application/json': { schema: OAuthToken } } },
    400: {
      description:
        'OAuth error (invalid_request, invalid_grant, unsupported_grant_type, insufficient_user_authentication)',
      content: { 'application/json': { schema: OAuthError } },
    },
    ...problemResponses(429),
  },
});

const union = publicRoute({
  method: 'post',
  operationId: 'completeLoginUnion',
  path: '/v3/login/union',
  tags: ['auths'],
  summary: W.s6,
  description: W.d7,
  request: { body: { required: false, content: formAndJson(MergeBody) } },
  responses: {
    200: { description: 'merged and logged in', content: { 'application/json': { schema: SessionResponse } } },
    303: { description: 'form post: to the front end' },
    ...problemResponses(400, 401, 403, 409, 415, 422, 429),
  },
});

/**
 * A local or LDAP login that opens a session of `kind` and sets its cookie; a collision with a local
 * account starts a pending merge (409) instead.
 */
async function sessionLogin(
  c: Context<AppEnv>,
  kind: SessionRow['kind'],
  login: string,
  password: string,
  ldapServer?: string,
  secondStep?: (step: SecondStepNeeded) => Promise<({ user: UserRow; device?: string } & OpenedSession) | null>,
): Promise<({ user: UserRow } & OpenedSession) | null> {
  // A local login presenting a device cookie uses that device's own failure budget (device-cookie.ts).
  const device = ldapServer === undefined ? await readDeviceClaim(c) : undefined;
  const outcome = await logInWithSession(c.var.scope, kind, login, password, ldapServer, device);
  if ('secondStep' in outcome) {
    // /v3/oauth_login checks its `otp` at once; the others answer 401 with a pending login.
    if (secondStep) {
      const done = await secondStep(outcome.secondStep);
      if (done?.device) await setDeviceCookie(c, c.var.scope, done.user.id, done.device);
      return done;
    }
    const { user, factors, pending } = outcome.secondStep;
    throw await secondStepRequired(c, user, factors, pending);
  }
  if ('merge' in outcome) {
    // The pending-merge cookie rides on the answer (409 for JSON, 303 to DEFAULT_FRONTEND_MERGE_URL
    // for forms); /v3/login/union completes it.
    await startPendingMerge(c, outcome.merge);
    throw mergeRequiredProblem(c.var.scope.config, outcome.merge);
  }
  setAuthCookie(c, outcome.token, outcome.session.expiresAt);
  if (outcome.device) await setDeviceCookie(c, c.var.scope, outcome.user.id, outcome.device);
  return outcome;
}

/** Registers the session endpoints. */
export function registerSessionRoutes(app: App): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'cookie', {
    type: 'apiKey',
    in: 'cookie',
    name: 'auth_session',
    description: 'Session cookie of POST /v3/login (same-origin requests only for unsafe methods)',
  });

  app.openapi(login, async (c) =>
    answerLogin(c, async () => {
      refuseCrossSiteLogin(c);
      const body = await readBody(c, LoginBody, { ldap_server: 'ldapServer' });
      const opened = (await sessionLogin(c, 'cookie', body.login, body.password, body.ldapServer))!;
      c.set('principal', { user: opened.user, method: 'session', groups: groupNamesOf(opened.user) });
      return { ...opened, next: body.next };
    }),
  );

  app.openapi(union, async (c) =>
    answerLogin(c, async () => {
      refuseCrossSiteLogin(c);
      const body = await readBody(c, MergeBody);
      // Single use: the identity, once linked, cannot be linked again (a replay is 409).
      const merge = await verifyPendingMerge(
        c.var.scope,
        readAuthCookie(c, MERGE_COOKIE),
        readHostCookie(c, BINDING_COOKIE),
      );
      const checked = await checkLocalPassword(c.var.scope, merge.login, body.password);
      const user = 'secondStep' in checked ? checked.secondStep.user : checked.user;
      await linkPendingMerge(c.var.scope, merge, user);
      clearAuthCookie(c, MERGE_COOKIE);
      clearHostCookie(c, BINDING_COOKIE);
      if ('secondStep' in checked) {
        const { factors, pending } = checked.secondStep;
        throw await secondStepRequired(c, user, factors, pending);
      }
      c.set('principal', { user, method: 'session', groups: groupNamesOf(user) });
      return { ...(await startSession(c, user, 'cookie', 'local_password')), next: body.next };
    }),
  );

  registerSecondStep(app);

  app.openapi(oauth, async (c) => {
    const oauthError = (error: string, description: string) =>
      c.json({ error, error_description: description }, 400, { 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    let form: Record<string, string>;
    try {
      form = Object.fromEntries(
        Object.entries(await c.req.parseBody()).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
    } catch {
      return oauthError('invalid_request', 'send an application/x-www-form-urlencoded body');
    }
    if (form.grant_type !== 'password')
      return oauthError('unsupported_grant_type', 'only grant_type=password is supported');
    if (!form.username || !form.password) return oauthError('invalid_request', 'username and password are required');
    try {
      refuseCrossSiteLogin(c);
      const otp = form.otp;
      const opened = await sessionLogin(c, 'oauth', form.username, form.password, undefined, async (step) => {
        if (!otp) return null;
        const scope = c.var.scope;
        const pending = { ...step.pending, jti: crypto.randomUUID(), expiresAt: scope.now() + PENDING_TTL_MS };
        const plan = secondStepPlan(scope, pending.throttleKey, pending.device);
        const input = isTotpCode(otp) ? { code: otp } : { recoveryCode: otp.slice(0, 64) };
        const { success } = await checkSecondFactor(scope, step.user, plan, input, 'oauth_login', step.user.source);
        return completePendingLogin(scope, pending, success);
      });
      if (!opened)
        return c.json(
          {
            error: 'insufficient_user_authentication',
            error_description: 'this account has a second factor: send its TOTP code or a recovery code as otp',
          },
          400,
          { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
        );
      const { session, token } = opened;
      const expiresIn = Math.max(0, Math.floor((session.expiresAt - c.var.scope.now()) / 1000));
      return c.json({ access_token: token, token_type: 'bearer' as const, expires_in: expiresIn }, 200, {
        'Cache-Control': 'no-store',
        Pragma: 'no-cache',
      });
    } catch (err) {
      // A throttled address (too many password checks, or too many failures) is no wrong grant: the
      // problem itself, 429 with Retry-After (RFC 6749 has no error for it).
      if (err instanceof ProblemError && err.status < 500 && err.status !== 429)
        return oauthError(
          err.status === 401 || err.status === 403 ? 'invalid_grant' : 'invalid_request',
          err.detail ?? err.title,
        );
      throw err;
    }
  });

  registerLogout(app);
}

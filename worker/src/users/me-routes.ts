/** The caller's own account and API tokens under /v4/users/me (Basic or Bearer). */
import { createRoute, z } from '@hono/zod-openapi';
import { CHALLENGES } from '../auth/credentials.js';
import { authenticate } from '../auth/middleware.js';
import { verifyCurrentPassword } from '../auth/password-login.js';
import { RECENT_PASSWORD_LOGIN_MS, assertRecentPassword } from '../auth/recent-password.js';
import { IssuedTokenSchema, TokenSchema, issueToken, listTokens, revokeToken } from '../auth/tokens.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { DAY_MS, PublicUserSchema, toPublicUser } from './model.js';
import { setPassword } from './password.js';

const ANY_ROLE = { 'x-required-roles': ['admin', 'auditor', 'user'] };
const anyAuth = authenticate({ schemes: ['Cookie', 'Basic', 'Bearer'] });
const passwordAuth = authenticate({ schemes: ['Cookie', 'Basic'] });

const me = createRoute({
  method: 'get',
  path: '/v4/users/me',
  tags: ['user_v4'],
  summary: "The caller's own account",
  description: 'Session cookie, Basic or Bearer. Any role.',
  security: [{ cookie: [] }, { basic: [] }, { bearer: [] }],
  middleware: [anyAuth] as const,
  ...ANY_ROLE,
  responses: { 200: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } }, ...problemResponses(401, 403) },
});

const TokenRequest = z
  .object({
    name: z.string().trim().min(1).max(100).openapi({ example: 'ci-pipeline' }),
    expiresInDays: z.number().int().min(1).max(3650).optional().openapi({ description: 'omitted: the token does not expire' }),
  })
  .strict()
  .openapi('ApiTokenRequest');

const issue = createRoute({
  method: 'post',
  path: '/v4/users/me/tokens',
  tags: ['user_v4'],
  summary: 'Issue an API token for the caller',
  description: [
    'Needs a recent proof of the password: Basic, or the cookie of a session started by a password login ' +
      `(/v3/login with a local or LDAP password, /v3/login/union) at most ${RECENT_PASSWORD_LOGIN_MS / 60_000} ` +
      'minutes ago. Otherwise 403 REAUTHENTICATION_REQUIRED (`reason`: stale_login, oauth_access_token, ' +
      'oidc_session, not_a_password): the cookie of /v3/oauth_login (its access token) and OIDC-started sessions ' +
      'never may; an API token or the OAuth access token as Bearer is 401.',
    'Any role. The secret is in this response only; it is stored as a hash.',
  ].join('\n\n'),
  security: [{ cookie: [] }, { basic: [] }],
  middleware: [passwordAuth] as const,
  ...ANY_ROLE,
  request: { body: { required: true, content: { 'application/json': { schema: TokenRequest } } } },
  responses: { 201: { description: 'the token, with its secret', content: { 'application/json': { schema: IssuedTokenSchema } } }, ...problemResponses(400, 401, 403, 422) },
});

const list = createRoute({
  method: 'get',
  path: '/v4/users/me/tokens',
  tags: ['user_v4'],
  summary: "The caller's live API tokens",
  description: 'Session cookie, Basic or Bearer. Any role. Never returns secrets.',
  security: [{ cookie: [] }, { basic: [] }, { bearer: [] }],
  middleware: [anyAuth] as const,
  ...ANY_ROLE,
  responses: { 200: { description: 'the tokens', content: { 'application/json': { schema: z.object({ items: z.array(TokenSchema) }) } } }, ...problemResponses(401, 403) },
});

const RevokeParams = z.object({ tokenId: z.uuid() });

const revoke = createRoute({
  method: 'delete',
  path: '/v4/users/me/tokens/{tokenId}',
  tags: ['user_v4'],
  summary: 'Revoke one of the caller’s API tokens',
  description: 'Session cookie, Basic or Bearer. Any role. The token stops working at once.',
  security: [{ cookie: [] }, { basic: [] }, { bearer: [] }],
  middleware: [anyAuth] as const,
  ...ANY_ROLE,
  request: { params: RevokeParams },
  responses: { 204: { description: 'revoked' }, ...problemResponses(401, 403, 404, 422) },
});

const PasswordChange = z
  .object({ oldPassword: z.string().min(1).max(1024), newPassword: z.string().min(1).max(1024) })
  .strict()
  .openapi('PasswordChange');

const changePassword = createRoute({
  method: 'put',
  path: '/v4/users/me/password',
  tags: ['user_v4'],
  summary: "Change the caller's password",
  description:
    [
      'Session cookie, Basic or Bearer, and the old password in the body. Any role. Allowed while the password is ' +
        'expired (the only thing allowed then).',
      'The old password is checked like a login, on the same failed-login count: a wrong one is 401 ' +
        'INVALID_CREDENTIALS and counts; after AUTH_FAILED_COUNT failures within AUTH_FAILED_TIMEOUT_MIN minutes the ' +
        'account is locked (its logins too) and the answer is 401 ACCOUNT_LOCKED with Retry-After, without checking ' +
        'the password.',
      'A change ends every other session of the user (their OAuth access tokens too): a change made with a session ' +
        'keeps that session; one made with Basic or an API token ends them all. API tokens are kept (the user lists ' +
        'and revokes them).',
      '409 for an LDAP or OIDC account (its password is not managed here). 422 PASSWORD_POLICY lists every broken ' +
        'rule, including reuse of one of the last USER_PASSWORD_HISTORY_DEPTH passwords.',
    ].join('\n\n'),
  security: [{ cookie: [] }, { basic: [] }, { bearer: [] }],
  middleware: [authenticate({ schemes: ['Cookie', 'Basic', 'Bearer'], allowExpiredPassword: true })] as const,
  ...ANY_ROLE,
  request: { body: { required: true, content: { 'application/json': { schema: PasswordChange } } } },
  responses: { 204: { description: 'changed' }, ...problemResponses(400, 401, 403, 409, 422) },
});

/** Registers /v4/users/me and its tokens. */
export function registerMe(app: App): void {
  app.openapi(me, (c) => c.json(toPublicUser(c.var.principal.user, c.var.config), 200));

  app.openapi(issue, async (c) => {
    const now = c.var.deps.clock();
    assertRecentPassword(c.var.principal, now);
    const body = validated(c, 'json', TokenRequest);
    const user = c.var.principal.user;
    const issued = await issueToken(c.var.db, user, {
      name: body.name,
      expiresAt: body.expiresInDays ? now + body.expiresInDays * DAY_MS : null,
      now,
      actor: user,
      requestId: c.var.requestId,
    });
    return c.json(issued, 201);
  });

  app.openapi(changePassword, async (c) => {
    const body = validated(c, 'json', PasswordChange);
    const { verifier, clock } = c.var.deps;
    const db = c.var.db;
    const { user, method, sessionId } = c.var.principal;
    if (user.source !== 'local') {
      const detail = 'the password of an external account is managed by its directory or provider';
      throw new ProblemError('CONFLICT', { detail });
    }
    // One hashing slot for the whole change (old password, history, new hash): 503 when busy, taken
    // before the attempt is reserved, so a 503 is never counted as a failure.
    await verifier.limit(async () => {
      const now = clock();
      // The old password is required even after Basic: a stolen token alone cannot change it. It is
      // counted like a login, or a stolen session or token would be an unthrottled password oracle.
      const challenge = method === 'basic' ? CHALLENGES.Basic : CHALLENGES.Bearer;
      const loginCtx = { db, config: c.var.config, verifier, now, requestId: c.var.requestId, logger: c.var.logger, challenge };
      await verifyCurrentPassword(loginCtx, user, body.oldPassword);
      await setPassword(user, body.newPassword, {
        db,
        config: c.var.config,
        verifier,
        now,
        actor: user,
        requestId: c.var.requestId,
        // ASVS 5.0 V7.4.3: the other sessions end; API tokens are the user's to keep (README).
        ends: { reason: 'password_change', keepSession: method === 'session' ? sessionId : undefined, tokens: false },
      });
    });
    return c.body(null, 204);
  });

  app.openapi(list, async (c) => c.json({ items: await listTokens(c.var.db, c.var.principal.user.id, c.var.deps.clock()) }, 200));

  app.openapi(revoke, async (c) => {
    const user = c.var.principal.user;
    const done = await revokeToken(c.var.db, user, validated(c, 'param', RevokeParams).tokenId, { now: c.var.deps.clock(), actor: user, requestId: c.var.requestId });
    if (!done) throw new ProblemError('NOT_FOUND', { detail: 'no such live token of yours' });
    return c.body(null, 204);
  });
}

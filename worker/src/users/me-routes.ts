/** The caller's own account and API tokens under /v4/users/me (Basic or Bearer). */
import { z } from '@hono/zod-openapi';
import { CHALLENGES } from '../auth/credentials.js';
import { ANYONE, ANY_ROLE, protectedRoute } from '../auth/protected-route.js';
import { verifyCurrentPassword } from '../auth/password-login.js';
import { assertRecentPassword } from '../auth/recent-password.js';
import { T } from './user-api-words.js';
import { IssuedTokenSchema, TokenSchema, issueToken, listTokens, revokeToken } from '../accounts/tokens.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { jsonText } from '../http/json-text.js';
import { PublicUserSchema, publicUserJson, toPublicUser } from '../accounts/model.js';
import { TokenRequest, tokenExpiry, tokenLimits, type AudienceChoices } from './token-request.js';
import { setPassword } from './password.js';
import { changeAccountStatement } from '../accounts/account-writes.js';
import { runAccountBatch } from '../accounts/writes.js';

const me = protectedRoute(
  // A session reads it while its password must be changed too: a client learns who it is and that it must.
  { ...ANYONE, tokenScope: 'account:read', enrolment: true, allowExpiredPassword: 'session' },
  {
    method: 'get',
    operationId: 'getCurrentUser',
    path: '/v4/users/me',
    tags: ['user_v4'],
    summary: "The caller's own account",
    responses: { 200: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } } },
  },
);

const OwnPatch = z
  .object({
    language: z.enum(['ru', 'en']).nullable().openapi({ description: T.language }),
  })
  .strict()
  .openapi('OwnAccountPatch');

const patchMe = protectedRoute(
  { tokenScope: 'account:write', ...ANYONE, enrolment: true, allowExpiredPassword: 'session' },
  {
    method: 'patch',
    operationId: 'updateCurrentUser',
    path: '/v4/users/me',
    tags: ['user_v4'],
    summary: "Change the caller's own preferences: the language of its mails",
    description: T.patchMe,
    request: { body: { required: true, content: { 'application/json': { schema: OwnPatch } } } },
    responses: {
      200: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } },
      ...problemResponses(422),
    },
  },
);

const issue = protectedRoute(
  { schemes: ['Cookie', 'Basic'], roles: ANY_ROLE, stepUp: true },
  {
    method: 'post',
    operationId: 'createOwnToken',
    path: '/v4/users/me/tokens',
    tags: ['user_v4'],
    summary: 'Issue an API token for the caller',
    description: T.issue,
    request: { body: { required: true, content: { 'application/json': { schema: TokenRequest } } } },
    responses: {
      201: {
        description: 'the token, with its secret',
        content: { 'application/json': { schema: IssuedTokenSchema } },
      },
    },
  },
);

const list = protectedRoute(
  { ...ANYONE, tokenScope: 'account:read' },
  {
    method: 'get',
    operationId: 'listOwnTokens',
    path: '/v4/users/me/tokens',
    tags: ['user_v4'],
    summary: "The caller's live API tokens",
    description: 'Never returns secrets.',
    responses: {
      200: {
        description: 'the tokens',
        content: { 'application/json': { schema: z.object({ items: z.array(TokenSchema) }) } },
      },
    },
  },
);

const audiences = protectedRoute(
  { ...ANYONE, tokenScope: 'none' },
  {
    method: 'get',
    operationId: 'listOwnTokenAudiences',
    path: '/v4/users/me/token-audiences',
    tags: ['user_v4'],
    summary: T.audiencesSummary,
    description: T.audiences,
    responses: {
      200: {
        description: 'the service names, sorted',
        content: {
          'application/json': {
            schema: z.object({ items: z.array(z.object({ name: z.string() })) }).openapi('TokenAudienceChoices'),
          },
        },
      },
    },
  },
);

const RevokeParams = z.object({ tokenId: z.uuid() });

const revoke = protectedRoute(
  { ...ANYONE, tokenScope: 'none' },
  {
    method: 'delete',
    operationId: 'revokeOwnToken',
    path: '/v4/users/me/tokens/{tokenId}',
    tags: ['user_v4'],
    summary: 'Revoke one of the caller’s API tokens',
    description: 'The token stops working at once.',
    request: { params: RevokeParams },
    responses: { 204: { description: 'revoked' }, ...problemResponses(404, 422) },
  },
);

const PasswordChange = z
  .object({ oldPassword: z.string().min(1).max(1024), newPassword: z.string().min(1).max(1024) })
  .strict()
  .openapi('PasswordChange');

const changePassword = protectedRoute(
  { tokenScope: 'none', ...ANYONE, allowExpiredPassword: true, stepUp: true },
  {
    method: 'put',
    operationId: 'changeOwnPassword',
    path: '/v4/users/me/password',
    tags: ['user_v4'],
    summary: "Change the caller's password",
    description: T.changePassword,
    request: { body: { required: true, content: { 'application/json': { schema: PasswordChange } } } },
    responses: { 204: { description: 'changed' }, ...problemResponses(400, 409, 422, 429) },
  },
);

/** Registers /v4/users/me and its tokens; `audienceChoices`: the gate's (gate/token-audiences.ts). */
export function registerMe(app: App, audienceChoices: AudienceChoices): void {
  app.openapi(me, (c) => jsonText(c, publicUserJson(c.var.principal.user, c.var.scope.config), 200));

  app.openapi(patchMe, async (c) => {
    const { language } = validated(c, 'json', OwnPatch);
    const { scope, principal } = c.var;
    const now = scope.now();
    await runAccountBatch(scope.db, [changeAccountStatement(scope.db, principal.user.id, { language }, now)]);
    return c.json(toPublicUser({ ...principal.user, language, updatedAt: now }, scope.config), 200);
  });

  app.openapi(issue, async (c) => {
    const now = c.var.scope.now();
    assertRecentPassword(c.var.principal, now);
    const body = validated(c, 'json', TokenRequest);
    const user = c.var.principal.user;
    const expiresAt = tokenExpiry(c.var.scope.config, body.expiresInDays, now);
    const issued = await issueToken(c.var.scope.db, user, {
      name: body.name,
      expiresAt,
      ...(await tokenLimits(c.var.scope, body, user, audienceChoices)),
      now,
      actor: user,
      request: c.var.scope.request,
    });
    return c.json(issued, 201);
  });

  app.openapi(changePassword, async (c) => {
    const body = validated(c, 'json', PasswordChange);
    const { scope } = c.var;
    const { user, method, sessionId } = c.var.principal;
    if (user.source !== 'local') {
      const detail = 'the password of an external account is managed by its directory or provider';
      throw new ProblemError('CONFLICT', { detail });
    }
    // One hashing slot for the whole change (old password, history, new hash): a 429 when refused,
    // taken before the attempt is reserved, so a refusal is never counted as a failure.
    await scope.verifier.limit(scope.request.ip, async () => {
      // The old password is required even after Basic: a stolen token alone cannot change it. It is
      // counted like a login, or a stolen session or token would be an unthrottled password oracle.
      const challenge = method === 'basic' ? CHALLENGES.Basic : CHALLENGES.Bearer;
      await verifyCurrentPassword(scope, user, body.oldPassword, challenge);
      await setPassword(scope, user, body.newPassword, {
        actor: user,
        // ASVS 5.0 V7.4.3: the other sessions end; API tokens are the user's to keep (docs/security.md, "What ends
        // what").
        ends: { reason: 'password_change', keepSession: method === 'session' ? sessionId : undefined, tokens: false },
      });
    });
    return c.body(null, 204);
  });

  app.openapi(audiences, async (c) =>
    c.json({ items: (await audienceChoices(c.var.scope, c.var.principal.user)).map((name) => ({ name })) }, 200),
  );

  app.openapi(list, async (c) =>
    c.json({ items: await listTokens(c.var.scope.db, c.var.principal.user.id, c.var.scope.now()) }, 200),
  );

  app.openapi(revoke, async (c) => {
    const user = c.var.principal.user;
    const done = await revokeToken(c.var.scope.db, user, validated(c, 'param', RevokeParams).tokenId, {
      now: c.var.scope.now(),
      actor: user,
      request: c.var.scope.request,
    });
    if (!done) throw new ProblemError('NOT_FOUND', { detail: 'no such live token of yours' });
    return c.body(null, 204);
  });
}

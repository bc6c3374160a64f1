/**
 * An account's API tokens under /v4/users/{userId}/tokens (admin role): listed (never the secrets) and revoked.
 * The account itself: account-routes.ts, which registers these last.
 */
import { z } from '@hono/zod-openapi';
import { TokenSchema, listTokens, revokeToken } from '../accounts/tokens.js';
import { liveAccount } from '../accounts/lookup.js';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { target, UserParam } from './account-route-common.js';

const TokenParam = z.object({ userId: z.string().min(1).max(64), tokenId: z.uuid() });

const tokensRoute = protectedRoute(adminOnly(superAccess.allowed, 'users:read'), {
  method: 'get',
  operationId: 'listUserTokens',
  path: '/v4/users/{userId}/tokens',
  tags: ['user_v4'],
  summary: "A user's live API tokens",
  description: 'Never the secrets.',
  request: { params: UserParam },
  responses: {
    200: {
      description: 'the tokens',
      content: { 'application/json': { schema: z.object({ items: z.array(TokenSchema) }) } },
    },
    ...problemResponses(404),
  },
});
const revokeTokenRoute = protectedRoute(adminOnly(superAccess.unprivilegedTargets('revoke the tokens of'), 'none'), {
  method: 'delete',
  operationId: 'revokeUserToken',
  path: '/v4/users/{userId}/tokens/{tokenId}',
  tags: ['user_v4'],
  summary: "Revoke a user's API token",
  description: 'It stops working at once.',
  request: { params: TokenParam },
  responses: { 204: { description: 'revoked' }, ...problemResponses(404, 422) },
});

/** Registers the operations on an account's API tokens. */
export function registerAccountTokens(app: App): void {
  app.openapi(tokensRoute, async (c) =>
    c.json({ items: await listTokens(c.var.scope.db, (await target(c)).id, c.var.scope.now()) }, 200),
  );

  app.openapi(revokeTokenRoute, async (c) => {
    const p = validated(c, 'param', TokenParam);
    const user = await liveAccount(c.var.scope.db, p.userId);
    const { scope, principal } = c.var;
    const o = { now: scope.now(), actor: principal.user, request: scope.request };
    if (!(await revokeToken(scope.db, user, p.tokenId, o)))
      throw new ProblemError('NOT_FOUND', { detail: 'no such live token' });
    return c.body(null, 204);
  });
}

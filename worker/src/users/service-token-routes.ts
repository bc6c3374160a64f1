/**
 * POST /v4/users/{userId}/tokens: an administrator issues an API token for a service account (docs/api.md,
 * "Service accounts"), which cannot sign in to issue its own. Listing and revoking them are the routes of
 * every account's tokens (account-routes.ts).
 */
import { z } from '@hono/zod-openapi';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import { assertRecentPassword } from '../auth/recent-password.js';
import { IssuedTokenSchema, issueToken } from '../accounts/tokens.js';
import { liveAccount } from '../accounts/lookup.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { TokenRequest, tokenExpiry, tokenLimits, type AudienceChoices } from './token-request.js';
import { T } from './user-api-words.js';

const UserParam = z.object({ userId: z.string().min(1).max(64) });

const issueFor = protectedRoute(
  { ...adminOnly(superAccess.refused('issue tokens for service accounts'), 'none'), stepUp: true },
  {
    method: 'post',
    operationId: 'createServiceAccountToken',
    path: '/v4/users/{userId}/tokens',
    tags: ['user_v4'],
    summary: T.serviceTokenSummary,
    description: T.serviceToken,
    request: {
      params: UserParam,
      body: { required: true, content: { 'application/json': { schema: TokenRequest } } },
    },
    responses: {
      201: {
        description: 'the token, with its secret',
        content: { 'application/json': { schema: IssuedTokenSchema } },
      },
      ...problemResponses(404, 409, 422),
    },
  },
);

/** Registers the issuance of service accounts' tokens. */
export function registerServiceTokens(app: App, audienceChoices: AudienceChoices): void {
  app.openapi(issueFor, async (c) => {
    const { scope, principal } = c.var;
    const now = scope.now();
    assertRecentPassword(principal, now);
    const owner = await liveAccount(scope.db, validated(c, 'param', UserParam).userId);
    // A person's tokens act as that person: only the person issues them.
    if (owner.kind !== 'service')
      throw new ProblemError('CONFLICT', { detail: 'only a service account is given tokens by an administrator' });
    const body = validated(c, 'json', TokenRequest);
    const issued = await issueToken(scope.db, owner, {
      name: body.name,
      expiresAt: tokenExpiry(scope.config, body.expiresInDays, now),
      ...(await tokenLimits(scope, body, owner, audienceChoices)),
      now,
      actor: principal.user,
      request: scope.request,
    });
    return c.json(issued, 201);
  });
}

/**
 * An account's access under /v4/users/{userId} (admin role): block and unblock, the end of a failed-login lock,
 * a password reset and temporary super-access. The account itself: account-routes.ts, which registers these
 * after its own; its API tokens: account-token-routes.ts.
 */
import { z } from '@hono/zod-openapi';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { requestHeader } from '../http/node-messages.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { answer, one, target, UserParam } from './account-route-common.js';
import { blockAccount, endSuperAccess, grantSuperAccess, unblockAccount, unlockAccount } from './admin-changes.js';
import { adminResetPassword } from './password.js';
import { T } from './user-api-words.js';

const Reset = z
  .object({
    password: z.string().min(1).max(1024),
    mustChangePassword: z.boolean().default(true),
    endPasskeys: z
      .boolean()
      .default(true)
      .openapi({
        description:
          "end the account's passkeys too (the default: a passkey signs in without the password, so a reset that " +
          'keeps them leaves an old credential alive); false keeps them, e.g. for a user who only forgot the password',
      }),
  })
  .strict()
  .openapi('PasswordReset');
const SuperAccess = z
  .object({
    minutes: z.number().int().min(1).max(1440).optional().openapi({ description: 'default DEBUG_COUNTDOWN_USER_SU' }),
  })
  .strict()
  .openapi('SuperAccessRequest');

const BLOCK_DESCRIPTION =
  'Its sessions and its reset and welcome links end for good (an unblock does not revive them) and its API tokens ' +
  'are refused at once, while it stays blocked. Not the last active administrator (409).';
const blockRoute = protectedRoute(adminOnly(superAccess.unprivilegedTargets('block'), 'users:write'), {
  method: 'post',
  operationId: 'blockUser',
  path: '/v4/users/{userId}/block',
  tags: ['user_v4'],
  summary: 'Block an account',
  description: BLOCK_DESCRIPTION,
  request: { params: UserParam },
  responses: { ...one, ...problemResponses(404, 409) },
});
const UNBLOCK_DESCRIPTION =
  'Also restarts its inactivity period. Sessions ended by the block stay ended; API tokens that were not revoked ' +
  "(an administrator's password reset revokes them all) work again.";
const unblockRoute = protectedRoute(adminOnly(superAccess.unprivilegedTargets('unblock'), 'users:write'), {
  method: 'post',
  operationId: 'unblockUser',
  path: '/v4/users/{userId}/unblock',
  tags: ['user_v4'],
  summary: 'Unblock an account',
  description: UNBLOCK_DESCRIPTION,
  request: { params: UserParam },
  responses: { ...one, ...problemResponses(404) },
});
const unlockRoute = protectedRoute(adminOnly(superAccess.unprivilegedTargets('unlock'), 'users:write'), {
  method: 'post',
  operationId: 'unlockUser',
  path: '/v4/users/{userId}/unlock',
  tags: ['user_v4'],
  summary: 'End a failed-login lock',
  request: { params: UserParam },
  responses: { ...one, ...problemResponses(404) },
});
const RESET_DESCRIPTION =
  'Policy-checked; by default the user must change it at the next login. Ends every session of the user (their ' +
  'OAuth access tokens too), revokes every API token of the account, ends its passkeys (unless `endPasskeys` is ' +
  'false; lent rights must keep them: 403) and its reset and welcome links, in the same transaction. 409 for an ' +
  'LDAP or OIDC account, and for a service account (it has no password).';
const resetRoute = protectedRoute(
  { ...adminOnly(superAccess.unprivilegedTargets('reset the password of'), 'none'), stepUp: true },
  {
    method: 'post',
    operationId: 'resetUserPassword',
    path: '/v4/users/{userId}/password',
    tags: ['user_v4'],
    summary: 'Reset a password',
    description: RESET_DESCRIPTION,
    request: { params: UserParam, body: { required: true, content: { 'application/json': { schema: Reset } } } },
    responses: { 204: { description: 'reset' }, ...problemResponses(400, 404, 409, 422) },
  },
);
const grantRoute = protectedRoute(
  { ...adminOnly(superAccess.refused('grant super-access'), 'users:write'), stepUp: true },
  {
    method: 'post',
    operationId: 'grantSuperAccess',
    path: '/v4/users/{userId}/super-access',
    tags: ['user_v4'],
    summary: 'Grant temporary super-access',
    description:
      `The account acts as an administrator until the access ends by itself after DEBUG_COUNTDOWN_USER_SU ` +
      `minutes (or \`minutes\`). Granted and ended in the audit log.\n\n${T.lentRights}`,
    request: { params: UserParam, body: { required: false, content: { 'application/json': { schema: SuperAccess } } } },
    responses: { ...one, ...problemResponses(400, 404, 422) },
  },
);
const revokeSuRoute = protectedRoute(adminOnly(superAccess.refused('end super-access'), 'users:write'), {
  method: 'delete',
  operationId: 'endSuperAccess',
  path: '/v4/users/{userId}/super-access',
  tags: ['user_v4'],
  summary: 'End super-access now',
  request: { params: UserParam },
  responses: { ...one, ...problemResponses(404) },
});

/** Registers the operations on an account's access. */
export function registerAccountAccess(app: App): void {
  app.openapi(blockRoute, async (c) => {
    const user = await target(c);
    await blockAccount(c.var.scope, c.var.principal.user, user);
    return answer(c, user.id);
  });

  app.openapi(unblockRoute, async (c) => {
    const user = await target(c);
    await unblockAccount(c.var.scope, c.var.principal.user, user);
    return answer(c, user.id);
  });

  app.openapi(unlockRoute, async (c) => {
    const user = await target(c);
    await unlockAccount(c.var.scope, c.var.principal.user, user);
    return answer(c, user.id);
  });

  app.openapi(resetRoute, async (c) => {
    const user = await target(c);
    await adminResetPassword(c.var.scope, c.var.principal.user, user, validated(c, 'json', Reset));
    return c.body(null, 204);
  });

  app.openapi(grantRoute, async (c) => {
    const user = await target(c);
    const body = (requestHeader(c, 'Content-Type') ?? '').startsWith('application/json')
      ? validated(c, 'json', SuperAccess)
      : {};
    await grantSuperAccess(c.var.scope, c.var.principal.user, user, body.minutes);
    return answer(c, user.id);
  });

  app.openapi(revokeSuRoute, async (c) => {
    const user = await target(c);
    await endSuperAccess(c.var.scope, c.var.principal.user, user);
    return answer(c, user.id);
  });
}

/**
 * Administration of existing accounts under /v4/users/{userId} (admin role), and the user list.
 * Creating accounts: create-routes.ts.
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { T } from './user-api-words.js';
import { superAccess } from '../auth/roles.js';
import { TokenSchema, listTokens, revokeToken } from '../accounts/tokens.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import {
  assertMayChangeRole,
  assertMayGrantAdmin,
  deleteAccount,
  unblockAccount,
  unlockAccount,
  updateAccount,
} from './admin-changes.js';
import { ACCOUNT_SORTS, accountLockedUntil, listAccounts, liveAccount } from '../accounts/lookup.js';
import { MAX_PAGE, pageOf, pageQuery } from '../http/paging.js';
import { PublicUserSchema, ROLES, toPublicUser, type UserRow } from '../accounts/model.js';
import { setPassword } from './password.js';
import { assertSessionLimit, endSessionsStatement, revokeDevicesStatement } from '../accounts/sessions.js';
import { endUserLinks } from '../accounts/reset-tokens.js';
import { requestHeader } from '../http/node-messages.js';
import { factorsOf } from '../accounts/factors.js';

const UserParam = z.object({ userId: z.string().min(1).max(64) });
const TokenParam = z.object({ userId: z.string().min(1).max(64), tokenId: z.uuid() });
const one = { 200: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } } };

const ListQuery = z.object({
  ...pageQuery,
  login: z.string().max(150).optional().openapi({ description: 'login prefix (case-insensitive)' }),
  q: z
    .string()
    .trim()
    .max(200)
    .optional()
    .openapi({
      description:
        'a substring of the login, the display name or the address (case-insensitive; for the name and the ' +
        'address, ASCII letters only); `%`, `_` and `\\` match themselves',
    }),
  role: z.enum(ROLES).optional(),
  status: z.enum(['active', 'blocked']).optional(),
  source: z.enum(['local', 'ldap', 'oidc']).optional(),
  kind: z.enum(['person', 'service']).optional().openapi({
    description: 'service: the service accounts only; person: the others (docs/api.md, "Service accounts")',
  }),
  sort: z.enum(ACCOUNT_SORTS).default('login'),
});
const UserPage = pageOf(PublicUserSchema, 'UserPage');

const Patch = z
  .object({
    displayName: z.string().trim().max(200).optional(),
    email: z.email().max(254).nullable().optional(),
    role: z.enum(ROLES).optional(),
    sessionLimit: z.number().int().min(1).nullable().optional(),
  })
  .strict()
  .openapi('UserPatch');
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

const listRoute = protectedRoute(adminOnly(superAccess.allowed, 'users:read'), {
  method: 'get',
  operationId: 'listUsers',
  path: '/v4/users',
  tags: ['user_v4'],
  summary: 'List accounts',
  description: T.listUsers,
  request: { query: ListQuery },
  responses: {
    200: { description: 'a page of accounts', content: { 'application/json': { schema: UserPage } } },
    ...problemResponses(422),
  },
});
const getRoute = protectedRoute(adminOnly(superAccess.allowed, 'users:read'), {
  method: 'get',
  operationId: 'getUser',
  path: '/v4/users/{userId}',
  tags: ['user_v4'],
  summary: 'Read an account',
  request: { params: UserParam },
  responses: { ...one, ...problemResponses(404) },
});
const patchRoute = protectedRoute(
  { ...adminOnly(superAccess.unprivilegedTargets('change'), 'users:write'), stepUp: true },
  {
    method: 'patch',
    operationId: 'updateUser',
    path: '/v4/users/{userId}',
    tags: ['user_v4'],
    summary: 'Update an account',
    description:
      'Nobody changes their own role; the last active administrator cannot be demoted (409); super-access cannot ' +
      'change roles (403). sessionLimit is at most AUTH_SESSIONS_MAX_COUNT. A new email ends the reset and welcome ' +
      'links mailed before.',
    request: { params: UserParam, body: { required: true, content: { 'application/json': { schema: Patch } } } },
    responses: { ...one, ...problemResponses(400, 404, 409, 422) },
  },
);
const deleteRoute = protectedRoute(adminOnly(superAccess.unprivilegedTargets('delete'), 'users:write'), {
  method: 'delete',
  operationId: 'deleteUser',
  path: '/v4/users/{userId}',
  tags: ['user_v4'],
  summary: 'Delete an account',
  description:
    'Its sessions and tokens stop at once; its login stays reserved for USER_LOGIN_REUSE_DAY days. Not the last ' +
    'active administrator (409).',
  request: { params: UserParam },
  responses: { 204: { description: 'deleted' }, ...problemResponses(404, 409) },
});
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

async function target(c: Context<AppEnv>): Promise<UserRow> {
  return liveAccount(c.var.scope.db, validated(c, 'param', UserParam).userId);
}

/** The account as now stored, with its lock, as the public shape. */
async function answer(c: Context<AppEnv>, id: string) {
  const user = await liveAccount(c.var.scope.db, id);
  const lockedUntil = await accountLockedUntil(c.var.scope.db, user, c.var.scope.now());
  return c.json(toPublicUser(user, c.var.scope.config, lockedUntil), 200);
}

/** Registers the administration of existing accounts. */
export function registerAccountAdmin(app: App): void {
  app.openapi(listRoute, async (c) => {
    const q = validated(c, 'query', ListQuery);
    const { rows, total } = await listAccounts(c.var.scope.db, q, c.var.scope.now());
    return c.json(
      {
        items: rows.map((r) => toPublicUser(r.user, c.var.scope.config, r.lockedUntil)),
        total,
        limit: q.limit,
        offset: q.offset,
      },
      200,
    );
  });

  app.openapi(getRoute, async (c) => answer(c, (await target(c)).id));

  app.openapi(patchRoute, async (c) => {
    const user = await target(c);
    const body = validated(c, 'json', Patch);
    const { scope, principal } = c.var;
    if (body.role !== undefined && body.role !== user.role && user.id === principal.user.id) {
      throw new ProblemError('FORBIDDEN', { detail: 'nobody changes their own role' });
    }
    if (body.role !== undefined && body.role !== user.role) assertMayChangeRole(c.var.principal.user);
    assertSessionLimit(c.var.scope.config, body.sessionLimit);
    const before = {
      displayName: user.displayName,
      email: user.email,
      role: user.role,
      sessionLimit: user.sessionLimit,
    };
    // A new address ends the links mailed to the old one (docs/security.md, "What ends what").
    const newAddress = body.email !== undefined && body.email !== user.email;
    const now = scope.now();
    await updateAccount(scope, principal.user, user, body, {
      audit: { type: 'user.updated', data: { before, after: body } },
      change: { role: body.role },
      extra: (happened) => (newAddress ? [endUserLinks(scope.db, user.id, now, happened)] : []),
    });
    return answer(c, user.id);
  });

  app.openapi(deleteRoute, async (c) => {
    const { scope, principal } = c.var;
    await deleteAccount(scope, principal.user, await target(c), scope.config.get('USER_LOGIN_REUSE_DAY'));
    return c.body(null, 204);
  });

  app.openapi(blockRoute, async (c) => {
    const user = await target(c);
    const { scope, principal } = c.var;
    const now = scope.now();
    // Sessions and reset/welcome links end for good (an unblock must not revive an unattended
    // browser or an old mail); API tokens are only refused while blocked (docs/security.md, "What ends what").
    await updateAccount(
      scope,
      principal.user,
      user,
      { status: 'blocked', blockedReason: 'admin' },
      {
        audit: { type: 'account.blocked', data: { reason: 'admin' } },
        change: { status: 'blocked' },
        extra: (happened) => [
          endSessionsStatement(scope.db, user.id, now, 'block', { when: happened }),
          revokeDevicesStatement(scope.db, user.id, happened),
          endUserLinks(scope.db, user.id, now, happened),
        ],
      },
    );
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
    if (user.kind === 'service')
      throw new ProblemError('CONFLICT', { detail: 'a service account has no password: it never signs in' });
    const body = validated(c, 'json', Reset);
    const { scope, principal } = c.var;
    // Lent rights may not remove second factors (removeUserSecondFactors): nor may they through a reset.
    if (body.endPasskeys && principal.user.role !== 'admin' && (await factorsOf(scope.db, user.id)).includes('passkey'))
      throw new ProblemError('FORBIDDEN', {
        detail: 'super-access cannot end the passkeys of an account: reset with endPasskeys false',
      });
    // An administrator's reset is incident response: every session, API token and passkey ends.
    await scope.verifier.limit(scope.request.ip, () =>
      setPassword(scope, user, body.password, {
        actor: principal.user,
        mustChange: body.mustChangePassword,
        ends: { reason: 'admin_reset', tokens: true, passkeys: body.endPasskeys },
      }),
    );
    return c.body(null, 204);
  });

  app.openapi(grantRoute, async (c) => {
    const user = await target(c);
    const body = (requestHeader(c, 'Content-Type') ?? '').startsWith('application/json')
      ? validated(c, 'json', SuperAccess)
      : {};
    const { scope, principal } = c.var;
    assertMayGrantAdmin(principal.user);
    const minutes = body.minutes ?? scope.config.get('DEBUG_COUNTDOWN_USER_SU');
    const until = scope.now() + minutes * 60_000;
    await updateAccount(
      scope,
      principal.user,
      user,
      { superAccessUntil: until },
      { audit: { type: 'super_access.granted', data: { until: new Date(until).toISOString(), minutes } } },
    );
    return answer(c, user.id);
  });

  app.openapi(revokeSuRoute, async (c) => {
    const user = await target(c);
    await updateAccount(
      c.var.scope,
      c.var.principal.user,
      user,
      { superAccessUntil: null },
      { audit: { type: 'super_access.ended', data: { by: 'admin' } } },
    );
    return answer(c, user.id);
  });

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

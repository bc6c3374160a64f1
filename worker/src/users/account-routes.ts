/**
 * Administration of existing accounts under /v4/users/{userId} (admin role), and the user list; registers
 * then the account's access (account-access-routes.ts) and its API tokens (account-token-routes.ts).
 * Creating accounts: create-routes.ts.
 */
import { z } from '@hono/zod-openapi';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { changeAccountDetails, deleteAccount } from './admin-changes.js';
import { ACCOUNT_SORTS, listAccounts } from '../accounts/lookup.js';
import { pageOf, pageQuery } from '../http/paging.js';
import { PublicUserSchema, ROLES, toPublicUser } from '../accounts/model.js';
import { answer, one, target, UserParam } from './account-route-common.js';
import { T } from './user-api-words.js';
import { registerAccountAccess } from './account-access-routes.js';
import { registerAccountTokens } from './account-token-routes.js';

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
    await changeAccountDetails(c.var.scope, c.var.principal.user, user, validated(c, 'json', Patch));
    return answer(c, user.id);
  });

  app.openapi(deleteRoute, async (c) => {
    const { scope, principal } = c.var;
    await deleteAccount(scope, principal.user, await target(c), scope.config.get('USER_LOGIN_REUSE_DAY'));
    return c.body(null, 204);
  });

  registerAccountAccess(app);
  registerAccountTokens(app);
}

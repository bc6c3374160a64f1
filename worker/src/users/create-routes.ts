/** POST /v4/users: creating a local account (admin role). Changing existing accounts: account-routes.ts. */
import { z } from '@hono/zod-openapi';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { PublicUserSchema, ROLES, toPublicUser } from '../accounts/model.js';
import { assertMayChangeRole } from './admin-changes.js';
import { assertSessionLimit } from '../accounts/sessions.js';
import { createLocalAccount } from './create.js';
import { T } from './user-api-words.js';
import { LoginSchema, normaliseLogin } from '../accounts/login-name.js';

const CreateUser = z
  .object({
    login: LoginSchema,
    password: z.string().min(1).max(1024).optional().openapi({
      description: T.firstPassword,
    }),
    displayName: z.string().trim().max(200).optional(),
    email: z.email().max(254).nullable().optional(),
    role: z.enum(ROLES).default('user'),
    sessionLimit: z
      .number()
      .int()
      .min(1)
      .nullable()
      .optional()
      .openapi({ description: 'at most AUTH_SESSIONS_MAX_COUNT; null: the default count' }),
    mustChangePassword: z
      .boolean()
      .default(false)
      .openapi({ description: 'the user must change the given password at first login (ignored without one)' }),
    kind: z.enum(['person', 'service']).default('person').openapi({
      description: T.kind,
    }),
  })
  .strict()
  .openapi('CreateUser');

const create = protectedRoute(adminOnly(superAccess.allowed, 'users:write'), {
  method: 'post',
  operationId: 'createUser',
  path: '/v4/users',
  tags: ['user_v4'],
  summary: 'Create a local account',
  description: T.createUser,
  request: { body: { required: true, content: { 'application/json': { schema: CreateUser } } } },
  responses: {
    201: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } },
    ...problemResponses(400, 409, 422),
  },
});

/** Registers POST /v4/users. */
export function registerAccountCreation(app: App): void {
  app.openapi(create, async (c) => {
    const body = validated(c, 'json', CreateUser);
    const login = normaliseLogin(body.login);
    const { scope } = c.var;
    const config = scope.config;
    assertSessionLimit(config, body.sessionLimit);
    if (body.role !== 'user') assertMayChangeRole(c.var.principal.user);
    // One hashing slot (429 when refused) for the new account's hash.
    const user = await scope.verifier.limit(scope.request.ip, () =>
      createLocalAccount(
        scope,
        { ...body, login, displayName: body.displayName ?? login },
        { actor: c.var.principal.user },
      ),
    );
    return c.json(toPublicUser(user, config), 201);
  });
}

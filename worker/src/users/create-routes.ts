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
import { LoginSchema, normaliseLogin } from '../accounts/login-name.js';

const CreateUser = z
  .object({
    login: LoginSchema,
    password: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .openapi({
        description:
          'the first password, which the administrator gives the user (the welcome mail says so, with no link); ' +
          'absent: the account has none, and the welcome mail links to choosing it (then `email` is required)',
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
    kind: z
      .enum(['person', 'service'])
      .default('person')
      .openapi({
        description:
          'service: an account that exists to own API tokens (a pipeline, a service), made without `password` ' +
          'and `email` (422 with either), which never signs in (docs/api.md, "Service accounts")',
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
  description:
    'The password must pass the password policy (422 PASSWORD_POLICY lists every broken rule). Without a ' +
    "password the account cannot sign in until its user chooses one through the welcome mail's link, which " +
    'needs `email` (422 without it); with one, the welcome mail says the account exists, that the ' +
    'administrator gives the password, and where to sign in. 422 when the ' +
    'login breaks the login rule (naming the refused character). 409 when the login is taken (ignoring case and ' +
    'width) or still reserved after a deletion (USER_LOGIN_REUSE_DAY). Super-access may create accounts of the ' +
    'role user only (403 for admin or auditor).',
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

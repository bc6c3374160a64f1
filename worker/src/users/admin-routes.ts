/** Administration of accounts under /v4/users (admin role). */
import { createRoute, z } from '@hono/zod-openapi';
import { authenticate } from '../auth/middleware.js';
import { adminOperation, superAccess } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { PublicUserSchema, toPublicUser } from './model.js';
import { assertMayChangeRole } from './accounts.js';
import { createLocalAccount } from './create.js';
import { LOGIN_MAX_LENGTH, LOGIN_RULE, loginViolation, normaliseLogin } from './login-name.js';

/** Logins: the login rule of every source (users/login-name.ts), checked on the NFC form. */
export const LoginSchema = z
  .string()
  .superRefine((value, ctx) => {
    const why = loginViolation(normaliseLogin(value));
    if (why) ctx.addIssue({ code: 'custom', message: why });
  })
  .openapi({
    example: 'j.doe',
    minLength: 1,
    maxLength: LOGIN_MAX_LENGTH,
    description:
      `1 to ${LOGIN_MAX_LENGTH} characters: ${LOGIN_RULE}. Stored in NFC; unique ignoring case and width ` +
      '(`Admin`, `ADMIN` and `ＡＤＭＩＮ` are one login).',
  });

const CreateUser = z
  .object({
    login: LoginSchema,
    password: z.string().min(1).max(1024),
    displayName: z.string().trim().max(200).optional(),
    email: z.email().max(254).nullable().optional(),
    role: z.enum(['admin', 'auditor', 'user']).default('user'),
    sessionLimit: z.number().int().min(1).nullable().optional().openapi({ description: 'at most AUTH_SESSIONS_MAX_COUNT; null: the default count' }),
    mustChangePassword: z.boolean().default(false).openapi({ description: 'the user must change the password at first login' }),
  })
  .strict()
  .openapi('CreateUser');

const create = createRoute({
  method: 'post',
  path: '/v4/users',
  tags: ['user_v4'],
  summary: 'Create a local account',
  description: 'Admin only. Session cookie, Basic or Bearer. The password must pass the password policy (422 PASSWORD_POLICY lists every broken rule). 422 when the login breaks the login rule (naming the refused character). 409 when the login is taken (ignoring case and width) or still reserved after a deletion (USER_LOGIN_REUSE_DAY). Super-access may create accounts of the role user only (403 for admin or auditor).',
  security: [{ cookie: [] }, { basic: [] }, { bearer: [] }],
  ...adminOperation(authenticate({ schemes: ['Cookie', 'Basic', 'Bearer'] }), superAccess.allowed),
  request: { body: { required: true, content: { 'application/json': { schema: CreateUser } } } },
  responses: {
    201: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } },
    ...problemResponses(400, 401, 403, 409, 422),
  },
});

/** Registers the admin endpoints of /v4/users. */
export function registerUserAdmin(app: App): void {
  app.openapi(create, async (c) => {
    const body = validated(c, 'json', CreateUser);
    const login = normaliseLogin(body.login);
    const { verifier, clock } = c.var.deps;
    const db = c.var.db;
    const config = c.var.config;
    const now = clock();
    const max = config.get('AUTH_SESSIONS_MAX_COUNT');
    if (body.sessionLimit && body.sessionLimit > max) {
      throw new ProblemError('VALIDATION', { detail: `sessionLimit: at most AUTH_SESSIONS_MAX_COUNT (${max})`, extensions: { errors: [{ location: 'json', path: 'sessionLimit', message: `at most ${max}` }] } });
    }
    if (body.role !== 'user') assertMayChangeRole(c.var.principal.user);
    // One hashing slot (503 when busy) for the new account's hash.
    const user = await verifier.limit(() =>
      createLocalAccount(
        { ...body, login, displayName: body.displayName ?? login },
        { db, config, hasher: verifier.hasher, now, actor: c.var.principal.user, requestId: c.var.requestId },
      ),
    );
    return c.json(toPublicUser(user, config), 201);
  });
}

/** Administration of accounts under /v4/users (admin role). */
import { createRoute, z } from '@hono/zod-openapi';
import { and, eq, gt } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import { loginKey } from '../auth/credentials.js';
import { authenticate } from '../auth/middleware.js';
import { requireRole } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { loginReservations } from '../../../schema/index.js';
import { PublicUserSchema, toPublicUser } from './model.js';
import { assertPasswordPolicy } from './password.js';
import { createLocalUser } from './store.js';
import { assertMayGrantAdmin } from './accounts.js';

/** Logins: letters of any script, digits and . _ - @, 1 to 150 characters, starting with a letter or digit. */
export const LoginSchema = z
  .string()
  .min(1)
  .max(150)
  .regex(/^[\p{L}\p{Nd}][\p{L}\p{Nd}._@-]*$/u, 'letters, digits and . _ - @, starting with a letter or digit')
  .openapi({ example: 'j.doe' });

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

const ADMIN = { 'x-required-roles': ['admin'] };

const create = createRoute({
  method: 'post',
  path: '/v4/users',
  tags: ['user_v4'],
  summary: 'Create a local account',
  description: 'Admin only. Session cookie, Basic or Bearer. The password must pass the password policy (422 PASSWORD_POLICY lists every broken rule). 409 when the login is taken or still reserved after a deletion (USER_LOGIN_REUSE_DAY). Super-access cannot create admin accounts (403).',
  security: [{ cookie: [] }, { basic: [] }, { bearer: [] }],
  middleware: [authenticate({ schemes: ['Cookie', 'Basic', 'Bearer'] }), requireRole('admin')] as const,
  ...ADMIN,
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
    const { verifier, clock } = c.var.deps;
    const db = c.var.db;
    const config = c.var.config;
    const now = clock();
    const max = config.get('AUTH_SESSIONS_MAX_COUNT');
    if (body.sessionLimit && body.sessionLimit > max) {
      throw new ProblemError('VALIDATION', { detail: `sessionLimit: at most AUTH_SESSIONS_MAX_COUNT (${max})`, extensions: { errors: [{ location: 'json', path: 'sessionLimit', message: `at most ${max}` }] } });
    }
    if (body.role === 'admin') assertMayGrantAdmin(c.var.principal.user);
    assertPasswordPolicy(body.password, config);
    const reserved = await db
      .select({ until: loginReservations.until })
      .from(loginReservations)
      .where(and(eq(loginReservations.loginKey, loginKey(body.login)), gt(loginReservations.until, now)));
    if (reserved[0]) {
      throw new ProblemError('CONFLICT', { detail: `the login belonged to a deleted account and is reserved until ${new Date(reserved[0].until).toISOString()}` });
    }
    const actor = c.var.principal.user;
    const user = await createLocalUser(db, {
      login: body.login,
      displayName: body.displayName ?? body.login,
      email: body.email ?? null,
      role: body.role,
      passwordHash: await verifier.limit(() => verifier.hasher.hash(body.password)),
      mustChangePassword: body.mustChangePassword,
      sessionLimit: body.sessionLimit ?? null,
      now,
      extra: (u) => [auditInsert(db, now, { stream: 'crud_admin', type: 'user.created', actor, subject: u, requestId: c.var.requestId, data: { role: u.role } })],
    });
    if (!user) throw new ProblemError('CONFLICT', { detail: 'the login is taken' });
    return c.json(toPublicUser(user, config), 201);
  });
}

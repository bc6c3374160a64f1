/**
 * The second-factor API (docs/security-mfa.md): the list of a user's own factors under /v4/users/me,
 * the step-up verification of a session, and an administrator's view and removal of a user's factors
 * (the enrolment of TOTP and recovery codes: enrolment-routes.ts). Factors are never shown.
 */
import { z } from '@hono/zod-openapi';
import { accountThrottleKey, factorList } from './factor-data.js';
import { FAILURES, registerEnrolment } from './enrolment-routes.js';
import { runAccountBatch } from '../accounts/writes.js';
import { ANYONE, adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import { attemptPlan } from '../accounts/throttle.js';
import type { App } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { secondFactorStatement } from '../accounts/sessions.js';
import { liveAccount } from '../accounts/lookup.js';
import { factorsOf, removeEveryFactor } from '../accounts/factors.js';
import { secondFactorInput } from './answers.js';
import { RECOVERY_CODES_LOW } from '../accounts/recovery-codes.js';
import { checkSecondFactor, REPLAY_DESCRIPTION } from './second-step.js';

const FactorList = z
  .object({
    factors: z.array(
      z.object({
        kind: z.enum(['totp', 'passkey']),
        confirmedAt: z.string(),
        lastUsedAt: z.string().nullable(),
      }),
    ),
    totpPending: z.boolean().openapi({ description: 'a TOTP enrolment was started and not confirmed yet' }),
    recoveryCodes: z.object({
      left: z.number().int(),
      low: z.boolean().openapi({ description: `fewer than ${RECOVERY_CODES_LOW} left while a factor is confirmed` }),
    }),
  })
  .openapi('SecondFactors');

const VerifyBody = z
  .object({
    code: z
      .string()
      .regex(/^\d{6}$/)
      .optional(),
    recoveryCode: z.string().min(1).max(64).optional(),
  })
  .openapi('SecondFactorVerification');
const UserParams = z.object({ userId: z.string().min(1).max(100) });

const listMine = protectedRoute(
  { tokenScope: 'account:read', ...ANYONE, enrolment: true },
  {
    method: 'get',
    path: '/v4/users/me/second-factors',
    operationId: 'listOwnSecondFactors',
    tags: ['user_v4'],
    summary: "The caller's second factors (never their secrets) and recovery codes left",
    responses: { 200: { description: 'the factors', content: { 'application/json': { schema: FactorList } } } },
  },
);

const verify = protectedRoute(
  { tokenScope: 'none', schemes: ['Cookie', 'Bearer'], roles: ANYONE.roles, enrolment: true },
  {
    method: 'post',
    path: '/v4/users/me/second-factor',
    operationId: 'verifyOwnSecondFactor',
    tags: ['user_v4'],
    summary: 'Step-up: verify a second factor for this session',
    description:
      'The session cookie or its OAuth access token, and exactly one of `code` and `recoveryCode`. Records the ' +
      'verification on the session: for MFA_STEP_UP_MIN minutes it may do sensitive operations. ' +
      `${FAILURES} ${REPLAY_DESCRIPTION} 400 when not a session; 409 when the account has no second factor; ` +
      '422: neither or both.',
    request: { body: { required: true, content: { 'application/json': { schema: VerifyBody } } } },
    responses: { 204: { description: 'verified' }, ...problemResponses(400, 409, 422, 429) },
  },
);

const listUser = protectedRoute(adminOnly(superAccess.allowed, 'users:read'), {
  method: 'get',
  path: '/v4/users/{userId}/second-factors',
  operationId: 'listUserSecondFactors',
  tags: ['user_v4'],
  summary: "A user's second factors (never their secrets)",
  request: { params: UserParams },
  responses: {
    200: { description: 'the factors', content: { 'application/json': { schema: FactorList } } },
    ...problemResponses(404),
  },
});

const removeUser = protectedRoute(
  { ...adminOnly(superAccess.refused('remove second factors'), 'none'), stepUp: true },
  {
    method: 'delete',
    path: '/v4/users/{userId}/second-factors',
    operationId: 'removeUserSecondFactors',
    tags: ['user_v4'],
    summary: 'Remove every second factor of a user (a lost authenticator): TOTP, passkeys, recovery codes',
    description:
      'Audited (mfa.factor_removed, crud_admin); every session of the user ends; the user is told by mail. 404 ' +
      'for an unknown user; 204 also when there was nothing to remove.',
    request: { params: UserParams },
    responses: { 204: { description: 'removed' }, ...problemResponses(404) },
  },
);

/** Registers the second-factor routes. */
export function registerMfa(app: App): void {
  app.openapi(listMine, async (c) => c.json(await factorList(c.var.scope.db, c.var.principal.user.id), 200));
  registerEnrolment(app);

  app.openapi(verify, async (c) => {
    const body = validated(c, 'json', VerifyBody);
    const input = secondFactorInput(body);
    const { user, method, sessionId, session } = c.var.principal;
    if (method !== 'session' || !sessionId)
      throw new ProblemError('MALFORMED_REQUEST', { detail: 'not a session: a step-up is recorded on a session' });
    const scope = c.var.scope;
    if ((await factorsOf(scope.db, user.id)).length === 0)
      throw new ProblemError('CONFLICT', { detail: 'this account has no second factor to verify' });
    const plan = attemptPlan(c.var.scope.config, accountThrottleKey(user), scope.request.ip);
    const { success } = await checkSecondFactor(scope, user, plan, input, 'step_up', user.source);
    const now = c.var.scope.now();
    await runAccountBatch(scope.db, [secondFactorStatement(scope.db, user.id, sessionId, now), ...success]);
    // The cached row of this session (accounts/sessions.ts) sees it at once on this instance.
    if (session) session.secondFactorAt = now;
    return c.body(null, 204);
  });

  app.openapi(listUser, async (c) => {
    const { userId } = validated(c, 'param', UserParams);
    const target = await liveAccount(c.var.scope.db, userId);
    return c.json(await factorList(c.var.scope.db, target.id), 200);
  });

  app.openapi(removeUser, async (c) => {
    const { userId } = validated(c, 'param', UserParams);
    const db = c.var.scope.db;
    const target = await liveAccount(db, userId);
    const actor = c.var.principal.user;
    // Every session of the user ends (the administrator's own, if it is theirs, too).
    await removeEveryFactor(db, target, { now: c.var.scope.now(), actor, by: 'admin', request: c.var.scope.request });
    return c.body(null, 204);
  });
}

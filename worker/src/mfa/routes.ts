/**
 * The second-factor API (docs/security-mfa.md): a user's own factors under /v4/users/me (TOTP
 * enrolment, recovery codes, the step-up verification of a session) and an administrator's view and
 * removal of a user's factors. Factors are never shown: a TOTP secret leaves the service once, at
 * the start of its enrolment, and recovery codes once, when generated.
 */
import { z } from '@hono/zod-openapi';
import { and, eq, isNull } from 'drizzle-orm';
import { runAccountBatch } from '../accounts/writes.js';
import { auditInsert } from '../audit/events.js';
import { CHALLENGES, loginKey } from '../auth/credentials.js';
import { failedLogin, lockedProblem } from '../auth/password-login.js';
import { ANYONE, adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import { attemptPlan, reserveAttempt, throttleKey } from '../accounts/throttle.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { validated } from '../http/validated.js';
import { secondFactorStatement } from '../accounts/sessions.js';
import { openSecret, SEALING_UNAVAILABLE, sealSecret } from '../store/secret-box.js';
import { liveAccount } from '../accounts/lookup.js';
import type { UserRow } from '../accounts/model.js';
import type { Context } from 'hono';
import { mfaTotp, passkeys } from '../../../schema/index.js';
import { factorsOf, recoveryCodesLeft, removeEveryFactor } from '../accounts/factors.js';
import { secondFactorInput } from './answers.js';
import { RECOVERY_CODES_LOW, regenerateRecoveryCodes } from '../accounts/recovery-codes.js';
import { checkSecondFactor, REPLAY_DESCRIPTION } from './second-step.js';
import {
  confirmTotpEnrolment,
  matchingStep,
  newTotpSecret,
  provisioning,
  removeTotp,
  startTotpEnrolment,
} from '../accounts/totp.js';

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

const TotpStart = z
  .object({
    otpauthUri: z.string().openapi({ description: 'the secret, once: otpauth://totp/... for an authenticator app' }),
    qrSvg: z.string().openapi({ description: 'the same URI as a QR code (SVG)' }),
  })
  .openapi('TotpEnrolment');
const CodeBody = z
  .object({
    code: z
      .string()
      .regex(/^\d{6}$/)
      .openapi({ example: '123456' }),
  })
  .openapi('TotpCode');
const VerifyBody = z
  .object({
    code: z
      .string()
      .regex(/^\d{6}$/)
      .optional(),
    recoveryCode: z.string().min(1).max(64).optional(),
  })
  .openapi('SecondFactorVerification');
const RecoveryCodes = z
  .object({ codes: z.array(z.string()).openapi({ description: '10 single-use codes, shown once' }) })
  .openapi('RecoveryCodes');
const UserParams = z.object({ userId: z.string().min(1).max(100) });

const FAILURES =
  'A wrong code is 401 INVALID_CREDENTIALS and counts like a wrong password of the account (401 ' +
  'ACCOUNT_LOCKED, 429 ADDRESS_THROTTLED once restricted).';

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

const startTotp = protectedRoute(
  { tokenScope: 'none', ...ANYONE, enrolment: true, stepUp: 'factors' },
  {
    method: 'post',
    path: '/v4/users/me/totp',
    operationId: 'startOwnTotpEnrolment',
    tags: ['user_v4'],
    summary: 'Start a TOTP enrolment: the secret, once, as an otpauth:// URI and a QR code',
    description:
      'Replaces an unconfirmed enrolment; 409 when a TOTP factor is confirmed already (remove it first). ' +
      'Confirm with POST /v4/users/me/totp/confirm. ' +
      SEALING_UNAVAILABLE,
    responses: {
      201: { description: 'started', content: { 'application/json': { schema: TotpStart } } },
      ...problemResponses(409, 503),
    },
  },
);

const confirmTotp = protectedRoute(
  { tokenScope: 'none', ...ANYONE, enrolment: true, stepUp: 'factors' },
  {
    method: 'post',
    path: '/v4/users/me/totp/confirm',
    operationId: 'confirmOwnTotp',
    tags: ['user_v4'],
    summary: 'Confirm a TOTP enrolment with a valid code',
    description:
      `${FAILURES} 409 without a started enrolment. The factor is then required at every login; the account's other ` +
      'sessions end (this one, if a session, counts as verified now) and the user is told by mail.',
    request: { body: { required: true, content: { 'application/json': { schema: CodeBody } } } },
    responses: { 204: { description: 'confirmed' }, ...problemResponses(400, 409, 422, 429) },
  },
);

const deleteTotp = protectedRoute(
  { tokenScope: 'none', ...ANYONE, stepUp: 'factors' },
  {
    method: 'delete',
    path: '/v4/users/me/totp',
    operationId: 'removeOwnTotp',
    tags: ['user_v4'],
    summary: "Remove the caller's TOTP factor",
    description:
      "404 without one. The account's other sessions end and the user is told by mail. The recovery codes stay " +
      '(they work again only once a factor is confirmed).',
    responses: { 204: { description: 'removed' }, ...problemResponses(404) },
  },
);

const newCodes = protectedRoute(
  { tokenScope: 'none', ...ANYONE, enrolment: true, stepUp: 'factors' },
  {
    method: 'post',
    path: '/v4/users/me/recovery-codes',
    operationId: 'generateOwnRecoveryCodes',
    tags: ['user_v4'],
    summary: 'Generate 10 recovery codes (the earlier ones stop working)',
    description: 'Shown once. 409 without a confirmed second factor.',
    responses: {
      201: { description: 'the codes', content: { 'application/json': { schema: RecoveryCodes } } },
      ...problemResponses(409),
    },
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

async function factorList(db: RequestScope['db'], userId: string) {
  const rows = await db.select().from(mfaTotp).where(eq(mfaTotp.userId, userId)).limit(1);
  const left = await recoveryCodesLeft(db, userId);
  const totp = rows[0];
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  const keys = await db.select().from(passkeys).where(eq(passkeys.userId, userId));
  const factors = [
    ...(totp?.confirmedAt
      ? [{ kind: 'totp' as const, confirmedAt: iso(totp.confirmedAt)!, lastUsedAt: iso(totp.lastUsedAt) }]
      : []),
    ...keys.map((k) => ({ kind: 'passkey' as const, confirmedAt: iso(k.createdAt)!, lastUsedAt: iso(k.lastUsedAt) })),
  ];
  return {
    factors,
    totpPending: totp !== undefined && totp.confirmedAt === null,
    recoveryCodes: { left, low: factors.length > 0 && left < RECOVERY_CODES_LOW },
  };
}

/** The throttle key of an account's own logins (code guesses count there, with its password's). */
export function accountThrottleKey(user: UserRow): string {
  return throttleKey(loginKey(user.login), user.source === 'ldap' ? (user.sourceName ?? '') : undefined);
}

/** The session of the request, when it is one (a second factor changed: the others end). */
function currentSession(c: Context<AppEnv>): string | undefined {
  const p = c.var.principal;
  return p.method === 'session' ? p.sessionId : undefined;
}

/** Registers the second-factor routes. */
export function registerMfa(app: App): void {
  app.openapi(listMine, async (c) => c.json(await factorList(c.var.scope.db, c.var.principal.user.id), 200));

  app.openapi(startTotp, async (c) => {
    const user = c.var.principal.user;
    const db = c.var.scope.db;
    const now = c.var.scope.now();
    if ((await factorsOf(db, user.id)).includes('totp'))
      throw new ProblemError('CONFLICT', { detail: 'a TOTP factor is confirmed already: remove it first' });
    const secret = newTotpSecret();
    await startTotpEnrolment(db, user.id, await sealSecret(c.var.scope.config, secret), now);
    const issuer = c.var.scope.config.get('PROJECT_DESCRIPTION') || 'auth';
    const { uri, qrSvg } = provisioning(secret, issuer, user.login);
    return c.json({ otpauthUri: uri, qrSvg }, 201, { 'Cache-Control': 'no-store' });
  });

  app.openapi(confirmTotp, async (c) => {
    const { code } = validated(c, 'json', CodeBody);
    const user = c.var.principal.user;
    const scope = c.var.scope;
    const db = c.var.scope.db;
    const now = c.var.scope.now();
    const [row] = await db
      .select()
      .from(mfaTotp)
      .where(and(eq(mfaTotp.userId, user.id), isNull(mfaTotp.confirmedAt)))
      .limit(1);
    if (!row) throw new ProblemError('CONFLICT', { detail: 'no TOTP enrolment started: POST /v4/users/me/totp' });
    const plan = attemptPlan(c.var.scope.config, accountThrottleKey(user), scope.request.ip);
    if ((await reserveAttempt(db, plan, now)).rowsAffected === 0) {
      throw await lockedProblem(scope, CHALLENGES.Bearer, plan);
    }
    const step = await matchingStep(await openSecret(c.var.scope.config, row.secretEnc), code, now);
    const keep = currentSession(c);
    // One transaction: the confirmation, the attempt's success, the sessions ended and the event.
    const confirmed =
      step !== undefined && (await confirmTotpEnrolment(db, user, { step, now, plan, keep, request: scope.request }));
    if (!confirmed) {
      const failure = auditInsert(db, now, {
        stream: 'user_activity',
        type: 'mfa.failure',
        subject: user,
        request: scope.request,
        data: { method: 'totp', via: 'enrolment', reason: 'wrong' },
      });
      await failedLogin(scope, CHALLENGES.Bearer, plan, user.login, user, { source: user.source, via: 'totp' }, [
        failure,
      ]);
      throw new ProblemError('INVALID_CREDENTIALS', { detail: 'the code is wrong or expired' });
    }
    if (keep && c.var.principal.session) c.var.principal.session.secondFactorAt = now;
    return c.body(null, 204);
  });

  app.openapi(deleteTotp, async (c) => {
    const user = c.var.principal.user;
    const scope = c.var.scope;
    const removed = await removeTotp(scope.db, user, {
      now: scope.now(),
      keep: currentSession(c),
      request: scope.request,
    });
    if (!removed) throw new ProblemError('NOT_FOUND', { detail: 'no confirmed TOTP factor' });
    return c.body(null, 204);
  });

  app.openapi(newCodes, async (c) => {
    const user = c.var.principal.user;
    const db = c.var.scope.db;
    const now = c.var.scope.now();
    if ((await factorsOf(db, user.id)).length === 0)
      throw new ProblemError('CONFLICT', { detail: 'confirm a second factor first (POST /v4/users/me/totp)' });
    const codes = await regenerateRecoveryCodes(db, user, now, c.var.scope.request);
    return c.json({ codes }, 201, { 'Cache-Control': 'no-store' });
  });

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

/**
 * The caller's own factors (docs/security-mfa.md): the enrolment of a TOTP authenticator (start, confirm,
 * remove) and new recovery codes. A TOTP secret leaves the service once, at the start of its enrolment, and
 * recovery codes once, when generated.
 */
import { confirmTotpWithCode } from './factor-data.js';
import { z } from '@hono/zod-openapi';
import { ANYONE, protectedRoute } from '../auth/protected-route.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { SEALING_UNAVAILABLE, sealSecret } from '../store/secret-box.js';
import type { Context } from 'hono';
import { factorsOf } from '../accounts/factors.js';
import { regenerateRecoveryCodes } from '../accounts/recovery-codes.js';
import { newTotpSecret, provisioning, removeTotp, startTotpEnrolment } from '../accounts/totp.js';

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
const RecoveryCodes = z
  .object({ codes: z.array(z.string()).openapi({ description: '10 single-use codes, shown once' }) })
  .openapi('RecoveryCodes');

/** How the routes that check a code describe its failures. */
export const FAILURES =
  'A wrong code is 401 INVALID_CREDENTIALS and counts like a wrong password of the account (401 ' +
  'ACCOUNT_LOCKED, 429 ADDRESS_THROTTLED once restricted).';

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

/** The session of the request, when it is one (a second factor changed: the others end). */
function currentSession(c: Context<AppEnv>): string | undefined {
  const p = c.var.principal;
  return p.method === 'session' ? p.sessionId : undefined;
}

/** Registers the enrolment routes (after the list of the caller's factors, before the step-up). */
export function registerEnrolment(app: App): void {
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
    const now = await confirmTotpWithCode(c.var.scope, c.var.principal.user, code, currentSession(c));
    if (currentSession(c) && c.var.principal.session) c.var.principal.session.secondFactorAt = now;
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
}

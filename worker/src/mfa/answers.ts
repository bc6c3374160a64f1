/**
 * The answers of the two-step login (docs/security-mfa.md): the 401 that starts a second step, with
 * the pending-login token in its body and in a short-lived HttpOnly cookie (a browser's second step
 * needs no script to carry it), and the second step's request body.
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import { clearAuthCookie, readAuthCookie, setAuthCookie } from '../http/cookies.js';
import { ProblemError } from '../http/problem.js';
import { PENDING_COOKIE, signPendingLogin, verifyPendingLogin, type PendingLogin } from '../accounts/pending-login.js';
import { recoveryCodesLeft } from '../accounts/factors.js';
import type { FactorKind } from '../accounts/factors.js';
import type { UserRow } from '../accounts/model.js';

/** The path of the second step, below ROOT_PATH. */
export const SECOND_STEP_PATH = '/v3/login/second-factor';

export const SecondStepBody = z
  .object({
    pendingToken: z
      .string()
      .max(4096)
      .optional()
      .openapi({ description: 'the pendingToken of the 401 (omitted: the auth_pending_login cookie)' }),
    code: z
      .string()
      .regex(/^\d{6}$/)
      .optional()
      .openapi({ description: 'a TOTP code (6 digits)', example: '123456' }),
    recoveryCode: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: 'one unused recovery code (instead of `code`)' }),
    next: z.string().max(2048).optional().openapi({ description: 'form posts: where to go after the login' }),
  })
  .openapi('SecondStepRequest');

/** The second factor a request presents: exactly one of `code` and `recoveryCode`, else 422. */
/** The code of a second step: a TOTP code or a recovery code (exactly one). */
export interface SecondFactorInput {
  code?: string;
  recoveryCode?: string;
}

export function secondFactorInput(body: { code?: string; recoveryCode?: string }): SecondFactorInput {
  if ((body.code === undefined) === (body.recoveryCode === undefined)) {
    throw new ProblemError('VALIDATION', {
      detail: 'send exactly one of code and recoveryCode',
      extensions: { errors: [{ location: 'body', path: 'code', message: 'exactly one of code and recoveryCode' }] },
    });
  }
  return body.code !== undefined ? { code: body.code } : { recoveryCode: body.recoveryCode! };
}

/**
 * Starts the second step of a right password: signs the pending login, sets its cookie and returns
 * the 401 SECOND_FACTOR_REQUIRED to throw, naming the factors and where to send the code.
 */
export async function secondStepRequired(
  c: Context<AppEnv>,
  user: UserRow,
  factors: FactorKind[],
  pending: Omit<PendingLogin, 'jti' | 'expiresAt'>,
): Promise<ProblemError> {
  const scope = c.var.scope;
  const { token, pending: signed } = await signPendingLogin(scope, pending);
  setAuthCookie(c, token, signed.expiresAt, PENDING_COOKIE);
  const left = await recoveryCodesLeft(scope.db, user.id);
  return new ProblemError('SECOND_FACTOR_REQUIRED', {
    detail: `the password is right; send a second factor to ${scope.config.get('ROOT_PATH')}${SECOND_STEP_PATH}`,
    extensions: {
      factors: [...factors, ...(left > 0 ? ['recovery_code'] : [])],
      pendingToken: token,
      expiresAt: new Date(signed.expiresAt).toISOString(),
      secondStep: `${scope.config.get('ROOT_PATH')}${SECOND_STEP_PATH}`,
      ...(factors.includes('passkey')
        ? { passkeyOptions: `${scope.config.get('ROOT_PATH')}${SECOND_STEP_PATH}/passkey/options` }
        : {}),
    },
    headers: { 'WWW-Authenticate': 'Bearer realm="auth"' },
  });
}

/** The pending login of a second step: the body's token, else the cookie's; 401 when neither is valid. */
export async function pendingOfRequest(c: Context<AppEnv>, bodyToken: string | undefined): Promise<PendingLogin> {
  return verifyPendingLogin(c.var.scope, bodyToken ?? readAuthCookie(c, PENDING_COOKIE));
}

/** Clears the pending-login cookie (after the second step opened the session). */
export function clearPendingCookie(c: Context<AppEnv>): void {
  clearAuthCookie(c, PENDING_COOKIE);
}

/**
 * A passkey as the second step of a two-step login (docs/security-mfa.md, "The two-step login"):
 * after a right password, the options of an assertion bound to the pending login (the account's
 * passkeys listed, its challenge naming the pending login), and the assertion that completes it
 * exactly as a code does. A refused assertion counts as a wrong code (mfa/second-step.ts).
 */
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import type { PendingLogin } from '../accounts/pending-login.js';
import { checkFactor, completePendingLogin, pendingSource, secondStepPlan } from '../mfa/second-step.js';
import type { CompletedLogin } from '../mfa/second-step.js';
import { secondFactorOptions } from './login.js';
import type { RelyingParty } from './relying-party.js';
import { listPasskeys } from './store.js';
import { verifyPasskeyAssertion } from './verify.js';

/** The options of the passkey second step of `pending`; 409 when the account has no passkey. */
export async function pendingPasskeyOptions(
  scope: RequestScope,
  rp: RelyingParty,
  pending: PendingLogin,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  if ((await listPasskeys(scope.db, pending.userId)).length === 0)
    throw new ProblemError('CONFLICT', { detail: 'this account has no passkey: send a code to the second step' });
  return secondFactorOptions(scope, rp, pending.userId, pending.jti);
}

/**
 * Completes `pending` with a passkey assertion: the guess is reserved on the budgets of a code, the
 * assertion must answer a challenge of this pending login with a passkey of its account (user
 * verification preferred, not required: the password was the first factor).
 */
export async function completeWithPasskey(
  scope: RequestScope,
  rp: RelyingParty,
  pending: PendingLogin,
  response: AuthenticationResponseJSON,
): Promise<CompletedLogin> {
  const plan = secondStepPlan(scope, pending.throttleKey, pending.device);
  const who = { id: pending.userId, login: pending.login };
  const o = { method: 'passkey' as const, via: 'login' as const, source: pendingSource(pending) };
  const success = await checkFactor(scope, who, plan, o, async () => {
    const result = await verifyPasskeyAssertion(scope, rp, response, {
      purpose: 'second-factor',
      userId: pending.userId,
      bound: pending.jti,
      requireUserVerification: false,
    });
    return result.ok
      ? { ok: true, data: { passkeyId: result.passkey.id } }
      : { ok: false, data: { reason: result.reason, ...(result.passkey ? { passkeyId: result.passkey.id } : {}) } };
  });
  return completePendingLogin(scope, pending, success);
}

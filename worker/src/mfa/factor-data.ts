import { and, eq, isNull } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import { CHALLENGES, loginKey } from '../auth/credentials.js';
import { failedLogin, lockedProblem } from '../auth/password-login.js';
import { attemptPlan, reserveAttempt, throttleKey } from '../accounts/throttle.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { openSecret } from '../store/secret-box.js';
import type { UserRow } from '../accounts/model.js';
import { mfaTotp, passkeys } from '../../../schema/index.js';
import { recoveryCodesLeft } from '../accounts/factors.js';
import { RECOVERY_CODES_LOW } from '../accounts/recovery-codes.js';
import { confirmTotpEnrolment, matchingStep } from '../accounts/totp.js';

/** A user's factors as the API shows them (never their secrets), and the recovery codes left. */
export async function factorList(db: RequestScope['db'], userId: string) {
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

/**
 * Confirms the started TOTP enrolment of `user` with a code: on the account's failure budget, a wrong
 * code counted like a wrong password; `keep`: the session that stays (the others end). Throws the
 * problem of a refusal (409 nothing started, 401 wrong, locked, throttled); answers the instant of the
 * confirmation.
 */
export async function confirmTotpWithCode(
  scope: RequestScope,
  user: UserRow,
  code: string,
  keep: string | undefined,
): Promise<number> {
  const db = scope.db;
  const now = scope.now();
  const [row] = await db
    .select()
    .from(mfaTotp)
    .where(and(eq(mfaTotp.userId, user.id), isNull(mfaTotp.confirmedAt)))
    .limit(1);
  if (!row) throw new ProblemError('CONFLICT', { detail: 'no TOTP enrolment started: POST /v4/users/me/totp' });
  const plan = attemptPlan(scope.config, accountThrottleKey(user), scope.request.ip);
  if ((await reserveAttempt(db, plan, now)).rowsAffected === 0) {
    throw await lockedProblem(scope, CHALLENGES.Bearer, plan);
  }
  const step = await matchingStep(await openSecret(scope.config, row.secretEnc), code, now);
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
  return now;
}

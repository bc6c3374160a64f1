/**
 * Checking a second factor (docs/security-mfa.md): a TOTP code or a recovery code, counted on the
 * same failure budgets as the password of the account (accounts/throttle.ts: a guess is reserved before
 * it is checked, a wrong one counts and may lock), and completing a pending login with it.
 */
import { and, eq, isNotNull } from 'drizzle-orm';
import { runAccountBatch, type AccountBatchItem } from '../accounts/writes.js';
import { loginRecordStatement } from '../accounts/login-rule.js';
import { auditInsert } from '../audit/events.js';
import { CHALLENGES } from '../auth/credentials.js';
import { failedLogin, lockedProblem } from '../auth/password-login.js';
import {
  attemptPlan,
  releaseAttempt,
  reserveAttempt,
  successStatements,
  type AttemptPlan,
} from '../accounts/throttle.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { deviceWrites } from '../accounts/devices.js';
import { sessionToken } from '../accounts/session-token.js';
import { sessionWrites, type SessionRow } from '../accounts/sessions.js';
import { openSecret } from '../store/secret-box.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import type { UserRow } from '../accounts/model.js';
import { mfaTotp, users } from '../../../schema/index.js';
import { recoveryCodesLeft } from '../accounts/factors.js';
import { consumePendingStatement, pendingUsedProblem, type PendingLogin } from '../accounts/pending-login.js';
import { useRecoveryCode } from '../accounts/recovery-codes.js';
import { acceptStep, matchingStep, TOTP_PERIOD_S } from '../accounts/totp.js';

/** What a second step presents: a TOTP code or a recovery code (exactly one). */

import type { SecondFactorInput } from './answers.js';
import { activeAccounts } from '../accounts/live.js';

export type { SecondFactorInput };
export type SecondStepMethod = 'totp' | 'recovery_code' | 'passkey';

/** Where a second factor is checked (the `via` of its events). */
export type SecondStepVia = 'login' | 'oauth_login' | 'step_up';

/**
 * The API description's sentence on a TOTP code used twice (docs/security-mfa.md, "A code used twice").
 */
export const REPLAY_DESCRIPTION =
  'The code of the last accepted step again (the code that just confirmed an enrolment, say): 401 ' +
  'INVALID_CREDENTIALS with `reason: "replayed"` and `retryAfter`, the seconds until the next code, not counted.';

/** The plan of a code guess for an account: its login's budget (or the device's), its total, the address's. */
export function secondStepPlan(scope: RequestScope, throttleKey: string, device?: string): AttemptPlan {
  return attemptPlan(scope.config, throttleKey, scope.request.ip, device);
}

/**
 * Whether `code` is right for the confirmed TOTP factor of `userId`, accepting its step at most once.
 * The code of the exact last accepted step again is a replay (docs/security-mfa.md, "A code used
 * twice"): refused, but told apart from a wrong code, with the seconds until the next step's code.
 * Only that step's code is: an older step's code within the window is a wrong one.
 */
async function totpVerdict(scope: RequestScope, userId: string, code: string, now: number): Promise<FactorVerdict> {
  const confirmed = and(eq(mfaTotp.userId, userId), isNotNull(mfaTotp.confirmedAt));
  const [row] = await scope.db.select().from(mfaTotp).where(confirmed).limit(1);
  if (!row) return { ok: false };
  const step = await matchingStep(await openSecret(scope.config, row.secretEnc), code, now);
  if (step === undefined) return { ok: false };
  if (await acceptStep(scope.db, userId, step, now)) return { ok: true };
  // Read again: a request with the same code may have accepted this step since the row was read.
  const [last] = await scope.db.select({ step: mfaTotp.lastStep }).from(mfaTotp).where(confirmed).limit(1);
  if (last?.step !== step) return { ok: false };
  const retryAfter = Math.max(1, Math.ceil(((step + 1) * TOTP_PERIOD_S * 1000 - now) / 1000));
  return { ok: false, replayed: { retryAfter } };
}

/**
 * Checks a second factor of `user` on `plan`: the guess is reserved first (a restricted login is
 * refused without checking: 401 ACCOUNT_LOCKED / 429), a wrong, replayed or unknown code is counted
 * as a failed login (401 INVALID_CREDENTIALS). Returns the method and the statements that forget
 * the failures, to commit with what the success opens.
 */
export async function checkSecondFactor(
  scope: RequestScope,
  user: Pick<UserRow, 'id' | 'login'>,
  plan: AttemptPlan,
  input: SecondFactorInput,
  via: SecondStepVia,
  source: UserRow['source'] = 'local',
): Promise<{ method: SecondStepMethod; success: AccountBatchItem[] }> {
  const method: SecondStepMethod = input.code !== undefined ? 'totp' : 'recovery_code';
  const success = await checkFactor(scope, user, plan, { method, via, source }, async (now) =>
    method === 'totp'
      ? await totpVerdict(scope, user.id, input.code!, now)
      : { ok: await useRecoveryCode(scope.db, user.id, input.recoveryCode!, now) },
  );
  return { method, success };
}

/** What a factor check found: accepted or not, and what the failure event should add. */
export interface FactorVerdict {
  ok: boolean;
  data?: Record<string, unknown>;
  /** Refused as the code of the last accepted step again: not counted; the next code in `retryAfter` s. */
  replayed?: { retryAfter: number };
}

/**
 * The frame of every second-factor check (a code, a recovery code, a passkey assertion): reserves
 * the guess on `plan` (restricted: 401 ACCOUNT_LOCKED / 429 before anything is checked), runs
 * `check`, counts a refusal as a failed login with its mfa.failure event (401 INVALID_CREDENTIALS),
 * except a replay of the last accepted code, which proves nothing new: its reservation is released
 * and it is told as such (`reason: "replayed"`, `retryAfter`), and returns a success's statements (the failures
 * forgotten, mfa.verified) to commit with what it opens.
 */
export async function checkFactor(
  scope: RequestScope,
  user: Pick<UserRow, 'id' | 'login'>,
  plan: AttemptPlan,
  o: { method: SecondStepMethod; via: SecondStepVia; source: UserRow['source'] },
  check: (now: number) => Promise<FactorVerdict>,
): Promise<AccountBatchItem[]> {
  const now = scope.now();
  const { method, via } = o;
  const reserved = await reserveAttempt(scope.db, plan, now);
  if (reserved.rowsAffected === 0) throw await lockedProblem(scope, CHALLENGES.Basic, plan);
  const verdict = await check(now);
  if (!verdict.ok) {
    const subject = { id: user.id, login: user.login };
    const reason = verdict.replayed ? 'replayed' : 'wrong';
    const event = auditInsert(scope.db, now, {
      stream: 'user_activity',
      type: 'mfa.failure',
      subject,
      request: scope.request,
      data: { method, via, reason, ...verdict.data },
    });
    if (verdict.replayed) {
      const { retryAfter } = verdict.replayed;
      await runAccountBatch(scope.db, [releaseAttempt(scope.db, plan), event]);
      throw new ProblemError('INVALID_CREDENTIALS', {
        detail: `this code was already used: wait for the next one (${retryAfter} s)`,
        extensions: { reason, retryAfter },
        headers: { 'WWW-Authenticate': CHALLENGES.Basic },
      });
    }
    await failedLogin(scope, CHALLENGES.Basic, plan, user.login, user as UserRow, { source: o.source, via: method }, [
      event,
    ]);
    const what = { totp: 'code', recovery_code: 'recovery code', passkey: 'passkey' }[method];
    throw new ProblemError('INVALID_CREDENTIALS', {
      detail:
        method === 'passkey'
          ? 'the passkey was not accepted (not one of the account, a used or expired challenge, or no valid signature)'
          : `the ${what} is wrong, expired or already used`,
      headers: { 'WWW-Authenticate': CHALLENGES.Basic },
    });
  }
  const left = method === 'recovery_code' ? await recoveryCodesLeft(scope.db, user.id) : undefined;
  const verified = auditInsert(scope.db, now, {
    stream: 'user_activity',
    type: 'mfa.verified',
    subject: { id: user.id, login: user.login },
    request: scope.request,
    data: { method, via, ...verdict.data, ...(left !== undefined ? { left } : {}) },
  });
  return [...successStatements(scope.db, plan), verified];
}

/** The source of the account of a pending login (for its events). */
export function pendingSource(p: PendingLogin): UserRow['source'] {
  return p.authMethod === 'ldap_password' ? 'ldap' : p.authMethod === 'oidc' ? 'oidc' : 'local';
}

/** A completed pending login: the account, its new session with its token, the device for the cookie. */
export interface CompletedLogin {
  user: UserRow;
  session: SessionRow;
  token: string;
  device?: string;
}

/**
 * Completes a verified pending login once its second factor passed (`success`: checkSecondFactor's
 * statements, or a passkey's): one transaction marks the token used (a replay fails there and opens
 * nothing), forgets the failures, records the login and opens the session as the password login
 * would (session limit, device of a local login, events), with its second-factor time.
 */
export async function completePendingLogin(
  scope: RequestScope,
  pending: PendingLogin,
  success: AccountBatchItem[],
): Promise<CompletedLogin> {
  const db = scope.db;
  const now = scope.now();
  const [row] = await db
    .select()
    .from(users)
    .where(and(eq(users.id, pending.userId), activeAccounts))
    .limit(1);
  if (!row) throw pendingUsedProblem();
  const user: UserRow = { ...row, lastLoginAt: now, lastActivityAt: now };
  const { row: session, writes } = sessionWrites(db, user, {
    kind: pending.kind,
    authMethod: pending.authMethod,
    now,
    config: scope.config,
    userAgent: scope.request.userAgent ?? undefined,
    request: scope.request,
    secondFactorAt: now,
  });
  const local = pending.authMethod === 'local_password';
  const d = local
    ? deviceWrites(
        db,
        user,
        pending.device,
        now,
        pending.known ? undefined : { request: scope.request, via: pending.kind },
      )
    : undefined;
  try {
    await runAccountBatch(db, [
      consumePendingStatement(db, pending),
      ...success,
      loginRecordStatement(db, user.id, now),
      ...(local
        ? [
            auditInsert(db, now, {
              stream: 'user_activity',
              type: 'login.success',
              subject: user,
              request: scope.request,
              data: { source: 'local', secondFactor: true },
            }),
          ]
        : []),
      ...writes,
      ...(d?.writes ?? []),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw pendingUsedProblem();
    throw err;
  }
  return { user, session, token: await sessionToken(scope, session), device: d?.id };
}

/**
 * TOTP (RFC 6238: HMAC-SHA-1, 6 digits, 30 s steps) with otplib, which runs on Node and in workerd
 * without nodejs_compat (@noble/hashes, @scure/base). The accepted window is the current step and
 * one step either side (docs/security-mfa.md, "Accepted window"); a code is accepted at most once:
 * the account's last accepted step moves forward in one conditional UPDATE, so of two hosts that
 * see the same code, one wins.
 */
import { and, eq, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { generate, generateSecret, generateURI } from 'otplib';
import { renderSVG } from 'uqr';
import type { RequestMeta } from '../http/scope.js';
import type { Db } from '../store/index.js';
import { mfaTotp } from '../../../schema/index.js';
import { factorChangeStatements, type FactorChange } from './factors.js';
import type { UserRow } from './model.js';
import { secondFactorStatement } from './sessions.js';
import { successStatements, type AttemptPlan } from './throttle.js';
import { runAccountBatch } from './writes.js';

export const TOTP_PERIOD_S = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted before and after the current one (clock skew of authenticator and server). */
export const TOTP_SKEW_STEPS = 1;

/** The time step of `now` (ms). */
export function stepOf(now: number): number {
  return Math.floor(now / 1000 / TOTP_PERIOD_S);
}

/** A new random secret (20 bytes, Base32, as authenticator apps expect). */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The otpauth:// URI of a secret, and its QR code as SVG (uqr: no canvas, runs everywhere). */
export function provisioning(secret: string, issuer: string, label: string): { uri: string; qrSvg: string } {
  const uri = generateURI({ issuer, label, secret, algorithm: 'sha1', digits: TOTP_DIGITS, period: TOTP_PERIOD_S });
  return { uri, qrSvg: renderSVG(uri) };
}

/** Compares two strings in time independent of where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Whether `code` has the form of a TOTP code (6 digits). */
export function isTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code);
}

/**
 * The step within the accepted window whose code `code` is, newest first; undefined when none is.
 * Every step of the window is computed, so the time does not tell which one matched.
 */
export async function matchingStep(secret: string, code: string, now: number): Promise<number | undefined> {
  if (!isTotpCode(code)) return undefined;
  const current = stepOf(now);
  let found: number | undefined;
  for (let s = current + TOTP_SKEW_STEPS; s >= current - TOTP_SKEW_STEPS; s--) {
    const expected = await generate({ strategy: 'hotp', secret, counter: s, digits: TOTP_DIGITS, algorithm: 'sha1' });
    if (sameText(expected, code) && found === undefined) found = s;
  }
  return found;
}

/**
 * Records `step` as the last accepted one of the account's confirmed factor, only when it is newer than
 * the last: true when this call accepted it, false for a replay. (An enrolment's first code confirms it
 * with its consequences: confirmTotpEnrolment.)
 */
export async function acceptStep(db: Db, userId: string, step: number, now: number): Promise<boolean> {
  const r = await db
    .update(mfaTotp)
    .set({ lastStep: step, lastUsedAt: now })
    .where(and(eq(mfaTotp.userId, userId), lt(mfaTotp.lastStep, step), isNotNull(mfaTotp.confirmedAt)));
  return r.rowsAffected > 0;
}

/**
 * Starts the TOTP enrolment of `userId` with its sealed secret, replacing an unconfirmed one; never
 * over a confirmed factor (a concurrent confirmation won: nothing is written).
 */
export async function startTotpEnrolment(db: Db, userId: string, secretEnc: string, now: number): Promise<void> {
  await db
    .insert(mfaTotp)
    .values({ userId, secretEnc, createdAt: now, confirmedAt: null, lastStep: 0 })
    .onConflictDoUpdate({
      target: mfaTotp.userId,
      set: { secretEnc, createdAt: now, lastStep: 0, lastUsedAt: null },
      setWhere: isNull(mfaTotp.confirmedAt),
    });
}

/**
 * Confirms the TOTP enrolment of `user` with the code of `step` (matchingStep), in one transaction with
 * what a confirmation also writes: the attempt's success (`plan`: its counted failures forgotten), the
 * session `keep` verified at `now`, the account's other sessions ended and the event that mails the
 * user. Each of those runs only when the confirmation did (conditioned in SQL on the factor confirmed by
 * this call), so false (no enrolment left, or the step not newer than the last: a replay) writes nothing:
 * the caller counts the failure.
 */
export async function confirmTotpEnrolment(
  db: Db,
  user: UserRow,
  o: { step: number; now: number; plan: AttemptPlan; keep?: string; request?: RequestMeta },
): Promise<boolean> {
  const mine = eq(mfaTotp.userId, user.id);
  const byThisCall = and(mine, eq(mfaTotp.confirmedAt, o.now), eq(mfaTotp.lastStep, o.step));
  const confirmed = sql`exists (select 1 from ${mfaTotp} where ${byThisCall})`;
  const change = { type: 'mfa.factor_added', data: { factor: 'totp' }, now: o.now, request: o.request, keep: o.keep };
  const [result] = await runAccountBatch(db, [
    db
      .update(mfaTotp)
      .set({ lastStep: o.step, lastUsedAt: o.now, confirmedAt: o.now })
      .where(and(mine, lt(mfaTotp.lastStep, o.step), isNull(mfaTotp.confirmedAt))),
    ...successStatements(db, o.plan, confirmed),
    ...(o.keep ? [secondFactorStatement(db, user.id, o.keep, o.now, confirmed)] : []),
    ...factorChangeStatements(db, user, change as FactorChange, confirmed),
  ]);
  return result.rowsAffected > 0;
}

/**
 * Removes the user's own confirmed TOTP factor; in the same transaction the account's other sessions
 * (all but `keep`) end and the event that mails the user is written, both only when there is a
 * factor to remove. False when there was none (nothing written).
 */
export async function removeTotp(
  db: Db,
  user: UserRow,
  o: { now: number; keep?: string; request?: RequestMeta },
): Promise<boolean> {
  const confirmed = and(eq(mfaTotp.userId, user.id), isNotNull(mfaTotp.confirmedAt));
  const present = sql`exists (select 1 from ${mfaTotp} where ${confirmed})`;
  const change = { type: 'mfa.factor_removed', data: { factor: 'totp', by: 'self' }, ...o } as const;
  const [, , removed] = await runAccountBatch(db, [
    ...factorChangeStatements(db, user, change, present),
    db.delete(mfaTotp).where(confirmed),
  ]);
  return removed.rowsAffected > 0;
}

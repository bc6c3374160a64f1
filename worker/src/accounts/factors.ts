/**
 * The second factors of an account (docs/security-mfa.md): which confirmed kinds it has. An account
 * with at least one must pass a second step at every password login, and its sensitive operations
 * need a recent second-factor verification (step-up).
 */
import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from '../store/index.js';
import { mfaRecoveryCodes, mfaTotp, passkeys, users } from '../../../schema/index.js';

/**
 * A kind of confirmed second factor: a TOTP authenticator, or a registered passkey (it serves as the
 * second step after a password too). Recovery codes are no factor of their own: they stand in for one.
 */
export type FactorKind = 'totp' | 'passkey';

/** The confirmed factor kinds of the account `userId` (empty: a password alone logs it in). */
export async function factorsOf(db: Db, userId: string): Promise<FactorKind[]> {
  // One query (one round trip to a far database: architecture.md §6), a row per kind.
  const totp = db
    .select({ userId: mfaTotp.userId, kind: sql<FactorKind>`'totp'`.as('kind') })
    .from(mfaTotp)
    .where(and(eq(mfaTotp.userId, userId), isNotNull(mfaTotp.confirmedAt)));
  const passkey = db
    .selectDistinct({ userId: passkeys.userId, kind: sql<FactorKind>`'passkey'`.as('kind') })
    .from(passkeys)
    .where(eq(passkeys.userId, userId));
  return factorsAmong(await totp.unionAll(passkey), userId);
}

/**
 * The query of the second factors of the accounts of login key `lk` (a confirmed TOTP factor, a
 * registered passkey: one row per kind and account), to join a login's first batch (its attempt
 * reservation and account read): the factors cost no round trip of their own.
 */
export function factorsOfLoginKey(db: Db, lk: string) {
  const totp = db
    .select({ userId: mfaTotp.userId, kind: sql<FactorKind>`'totp'`.as('kind') })
    .from(mfaTotp)
    .innerJoin(users, eq(users.id, mfaTotp.userId))
    .where(and(eq(users.loginKey, lk), isNull(users.deletedAt), isNotNull(mfaTotp.confirmedAt)));
  const passkey = db
    .selectDistinct({ userId: passkeys.userId, kind: sql<FactorKind>`'passkey'`.as('kind') })
    .from(passkeys)
    .innerJoin(users, eq(users.id, passkeys.userId))
    .where(and(eq(users.loginKey, lk), isNull(users.deletedAt)));
  return totp.unionAll(passkey);
}

/** The factor kinds of account `userId` among the rows of `factorsOfLoginKey`, in factorsOf's order. */
export function factorsAmong(rows: readonly { userId: string; kind: FactorKind }[], userId: string): FactorKind[] {
  const kinds = new Set(rows.filter((r) => r.userId === userId).map((r) => r.kind));
  return (['totp', 'passkey'] as const).filter((k) => kinds.has(k));
}

/** How many unused recovery codes the account has. */
export async function recoveryCodesLeft(db: Db, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)` })
    .from(mfaRecoveryCodes)
    .where(and(eq(mfaRecoveryCodes.userId, userId), isNull(mfaRecoveryCodes.usedAt)));
  return Number(row?.n ?? 0);
}

/** What a second step may use: the confirmed factors, and recovery codes while any is left. */
export async function secondStepMethods(db: Db, userId: string): Promise<string[]> {
  const [factors, left] = await Promise.all([factorsOf(db, userId), recoveryCodesLeft(db, userId)]);
  return [...factors, ...(left > 0 ? ['recovery_code'] : [])];
}

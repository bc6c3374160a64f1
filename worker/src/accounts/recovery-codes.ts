/**
 * Recovery codes (docs/security-mfa.md): 10 random single-use codes, shown once, stored as SHA-256
 * (each holds 50 random bits, so a fast hash suffices, as for API tokens); a code is used by one
 * conditional UPDATE, so two hosts cannot both accept it.
 */
import { and, eq, isNull } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { RequestMeta } from '../http/scope.js';
import { tokenHash } from './tokens.js';
import type { Db } from '../store/index.js';
import { mfaRecoveryCodes } from '../../../schema/index.js';
import type { UserRow } from './model.js';

export const RECOVERY_CODE_COUNT = 10;
/** Below this many unused codes the account is warned (its listing says `low: true`). */
export const RECOVERY_CODES_LOW = 3;
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A new code: 10 characters of a 31-letter alphabet without look-alikes, as xxxxx-xxxxx. */
function newCode(): string {
  const out: string[] = [];
  while (out.length < 10) {
    const [b] = crypto.getRandomValues(new Uint8Array(1));
    // Rejection sampling keeps every letter equally likely.
    if (b! < 248) out.push(ALPHABET[b! % 31]!);
  }
  return `${out.slice(0, 5).join('')}-${out.slice(5).join('')}`;
}

/** The stored form of a code of `userId`, as typed (case, spaces and dashes do not matter). */
export function recoveryCodeHash(userId: string, code: string): string {
  return tokenHash(`${userId}:${code.toLowerCase().replace(/[\s-]/g, '')}`);
}

/** Statements replacing the account's codes with 10 new ones; the codes, to show once. */
function newRecoveryCodes(db: Db, userId: string, now: number) {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
  const rows = codes.map((code) => ({
    id: crypto.randomUUID(),
    userId,
    codeHash: recoveryCodeHash(userId, code),
    createdAt: now,
  }));
  const writes = [
    db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId)),
    db.insert(mfaRecoveryCodes).values(rows),
  ] as const;
  return { codes, writes };
}

/**
 * Replaces the account's recovery codes with 10 new ones, with their audit event, in one transaction;
 * the codes, to show once.
 */
export async function regenerateRecoveryCodes(
  db: Db,
  user: UserRow,
  now: number,
  request?: RequestMeta,
): Promise<string[]> {
  const { codes, writes } = newRecoveryCodes(db, user.id, now);
  await db.batch([
    ...writes,
    auditInsert(db, now, {
      stream: 'user_activity',
      type: 'mfa.recovery_codes_generated',
      subject: user,
      request,
      data: { count: codes.length },
    }),
  ]);
  return codes;
}

/** Uses an unused code of the account: true when this call used it. */
export async function useRecoveryCode(db: Db, userId: string, code: string, now: number): Promise<boolean> {
  const r = await db
    .update(mfaRecoveryCodes)
    .set({ usedAt: now })
    .where(
      and(
        eq(mfaRecoveryCodes.userId, userId),
        eq(mfaRecoveryCodes.codeHash, recoveryCodeHash(userId, code)),
        isNull(mfaRecoveryCodes.usedAt),
      ),
    );
  return r.rowsAffected > 0;
}

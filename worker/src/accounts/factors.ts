/**
 * The second factors of an account (docs/security-mfa.md): which confirmed kinds it has. An account
 * with at least one must pass a second step at every password login, and its sensitive operations
 * need a recent second-factor verification (step-up). What a change of factors also writes (the
 * account's other sessions end, the event that mails the user) and the removal of every factor.
 */
import { and, eq, isNotNull, isNull, sql, type SQL } from 'drizzle-orm';
import { auditInsert, auditInsertWhen, type AuditEvent, type AuditEventType } from '../audit/events.js';
import type { RequestMeta } from '../http/scope.js';
import { reusableStatement, type Db } from '../store/index.js';
import { mfaRecoveryCodes, mfaTotp, passkeys, users } from '../../../schema/index.js';
import type { UserRow } from './model.js';
import { endSessionsStatement } from './sessions.js';
import { runAccountBatch, type AccountBatchItem } from './writes.js';
import { liveAccounts } from './live.js';

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
export const factorsOfLoginKey = reusableStatement(
  (db, p) => {
    const totp = db
      .select({ userId: mfaTotp.userId, kind: sql<FactorKind>`'totp'`.as('kind') })
      .from(mfaTotp)
      .innerJoin(users, eq(users.id, mfaTotp.userId))
      .where(and(eq(users.loginKey, p.key), liveAccounts, isNotNull(mfaTotp.confirmedAt)));
    const passkey = db
      .selectDistinct({ userId: passkeys.userId, kind: sql<FactorKind>`'passkey'`.as('kind') })
      .from(passkeys)
      .innerJoin(users, eq(users.id, passkeys.userId))
      .where(and(eq(users.loginKey, p.key), liveAccounts));
    return totp.unionAll(passkey);
  },
  ['key'],
);

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

/** A change of an account's second factors: what its audit event says, who made it, from where. */
export interface FactorChange {
  type: Extract<AuditEventType, 'mfa.factor_added' | 'mfa.factor_removed'>;
  data: Record<string, unknown>;
  now: number;
  request?: RequestMeta;
  /** Who made it, when not the user: an administrator (or the operator command). */
  actor?: NonNullable<AuditEvent['actor']>;
  /** The session of the request that made it (the user's own): it keeps going. */
  keep?: string;
}

/**
 * The writes that go with a changed factor (in the batch of the change): the account's other sessions
 * end (ASVS V7.4.3) and the event that mails the user; only while `when` holds, when given (a
 * condition on the change, read by the statements themselves, so they can run before it).
 */
export function factorChangeStatements(
  db: Db,
  user: UserRow,
  c: FactorChange,
  when?: SQL,
): [AccountBatchItem, AccountBatchItem] {
  const admin = c.actor !== undefined && c.actor.id !== user.id;
  const event: AuditEvent = {
    stream: admin ? 'crud_admin' : 'user_activity',
    type: c.type,
    actor: c.actor ?? user,
    subject: user,
    request: c.request,
    data: c.data,
  };
  return [
    endSessionsStatement(db, user.id, c.now, admin ? 'admin' : 'second_factor', { except: c.keep, when }),
    when === undefined ? auditInsert(db, c.now, event) : auditInsertWhen(db, c.now, event, when),
  ];
}

/**
 * Removes every second factor of `user` (TOTP, confirmed or not; passkeys; recovery codes, used or
 * not), in one transaction with its consequences (factorChangeStatements: every session ends, the event
 * mails the user); returns how many rows were removed. An administrator's removal (`by: 'admin'`)
 * writes nothing more when there was nothing to remove; the operator command's is audited at every
 * use (ops/commands.ts), so its sessions end and its event is written whatever it found.
 */
export async function removeEveryFactor(
  db: Db,
  user: UserRow,
  o: { now: number; actor: NonNullable<AuditEvent['actor']>; by: 'admin' | 'operator'; request?: RequestMeta },
): Promise<number> {
  const anyFactor = sql`(exists (select 1 from ${mfaTotp} where ${mfaTotp.userId} = ${user.id})
    or exists (select 1 from ${mfaRecoveryCodes} where ${mfaRecoveryCodes.userId} = ${user.id})
    or exists (select 1 from ${passkeys} where ${passkeys.userId} = ${user.id}))`;
  const change: FactorChange = {
    type: 'mfa.factor_removed',
    data: { factor: 'all', by: o.by },
    now: o.now,
    request: o.request,
    actor: o.actor,
  };
  // The consequences first, conditioned on what is still there to remove; then the deletions.
  const consequences = factorChangeStatements(db, user, change, o.by === 'operator' ? undefined : anyFactor);
  const results = await runAccountBatch(db, [
    ...consequences,
    db.delete(mfaTotp).where(eq(mfaTotp.userId, user.id)),
    db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, user.id)),
    db.delete(passkeys).where(eq(passkeys.userId, user.id)),
  ]);
  return results.slice(consequences.length).reduce((n, r) => n + r.rowsAffected, 0);
}

/**
 * Ends every passkey of `userId` (an administrator's or the operator's password reset: incident response
 * leaves no old credential alive, docs/security.md, "What ends what"). TOTP and recovery codes stay: they
 * never sign in alone.
 */
export function endPasskeysStatement(db: Db, userId: string) {
  return db.delete(passkeys).where(eq(passkeys.userId, userId));
}

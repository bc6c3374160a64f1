/**
 * The writes of passkey rows (docs/security-passkeys.md): a registration, a rename, a removal, the
 * record of a use. Adding or removing one ends the account's other sessions (ASVS 5.0 V7.4.3, as a
 * password change does) in the same transaction as the change and its audit event, whose handler
 * mails the owner. The WebAuthn ceremonies themselves are passkeys/'s.
 */
import { and, eq, lt, or, sql } from 'drizzle-orm';
import { auditInsert, auditInsertWhen } from '../audit/events.js';
import type { RequestMeta } from '../http/scope.js';
import type { Db } from '../store/index.js';
import { passkeys } from '../../../schema/index.js';
import type { UserRow } from './model.js';
import { endSessionsStatement, secondFactorStatement } from './sessions.js';
import { runAccountBatch } from './writes.js';

export type PasskeyRow = typeof passkeys.$inferSelect;

/** Where a change of `user`'s passkeys came from: when, the request, the session that keeps going. */
export interface PasskeyChange {
  now: number;
  request?: RequestMeta;
  /** The session of the request that made it: it keeps going. */
  keep?: string;
}

/**
 * Stores the verified passkey `row` of `user`; the account's other sessions end, with its audit
 * event, in one transaction. A credential registered already fails the insert (a unique violation,
 * store/unique-violation.ts), and nothing is written.
 */
export async function addPasskey(db: Db, user: UserRow, row: PasskeyRow, c: PasskeyChange): Promise<void> {
  await runAccountBatch(db, [
    db.insert(passkeys).values(row),
    endSessionsStatement(db, user.id, c.now, 'passkey_change', { except: c.keep }),
    // The registration verified the user on the new passkey: the session that made it counts as verified
    // now, as a TOTP confirmation's does (an enrolment that MFA_REQUIRED_ROLES asked for is then complete).
    ...(c.keep ? [secondFactorStatement(db, user.id, c.keep, c.now)] : []),
    auditInsert(db, c.now, {
      stream: 'crud_user',
      type: 'passkey.registered',
      actor: user,
      subject: user,
      request: c.request,
      data: {
        passkeyId: row.id,
        name: row.name,
        backupEligible: row.backupEligible,
        backupState: row.backupState,
        aaguid: row.aaguid,
      },
    }),
  ]);
}

/** Renames passkey `id` of `user`, with its audit event, in one transaction; false when it is not theirs. */
export async function renamePasskeyOf(
  db: Db,
  user: UserRow,
  id: string,
  name: string,
  c: Omit<PasskeyChange, 'keep'>,
): Promise<boolean> {
  const [updated] = await db.batch([
    db
      .update(passkeys)
      .set({ name })
      .where(and(eq(passkeys.id, id), eq(passkeys.userId, user.id))),
    // Audited only when the update above renamed it (changes() reads the previous statement).
    auditInsertWhen(
      db,
      c.now,
      {
        stream: 'crud_user',
        type: 'passkey.renamed',
        actor: user,
        subject: user,
        request: c.request,
        data: { passkeyId: id, name },
      },
      sql`changes() > 0`,
    ),
  ]);
  return updated.rowsAffected > 0;
}

/**
 * Removes `passkey` of `user`; in the same transaction the account's other sessions end and the event
 * is written, both only while the passkey is there to remove. False when it was not (nothing written).
 */
export async function removePasskeyOf(
  db: Db,
  user: UserRow,
  passkey: Pick<PasskeyRow, 'id' | 'name'>,
  c: PasskeyChange,
): Promise<boolean> {
  const theirs = and(eq(passkeys.id, passkey.id), eq(passkeys.userId, user.id));
  const present = sql`exists (select 1 from ${passkeys} where ${theirs})`;
  const event = {
    stream: 'crud_user',
    type: 'passkey.removed',
    actor: user,
    subject: user,
    request: c.request,
    data: { passkeyId: passkey.id, name: passkey.name },
  } as const;
  const [, , deleted] = await runAccountBatch(db, [
    endSessionsStatement(db, user.id, c.now, 'passkey_change', { except: c.keep, when: present }),
    auditInsertWhen(db, c.now, event, present),
    db.delete(passkeys).where(theirs),
  ]);
  return deleted.rowsAffected > 0;
}

/**
 * Records a verified assertion of `passkeyId`: its new signature counter, backup state and time of use.
 * The counter only grows (or stays 0 for authenticators without one), so of two concurrent assertions
 * with the same counter one wins: false for the other (a replay or a cloned authenticator).
 */
export async function recordPasskeyUse(
  db: Db,
  passkeyId: string,
  use: { counter: number; backupState: boolean; now: number },
): Promise<boolean> {
  const recorded = await db
    .update(passkeys)
    .set({ counter: use.counter, lastUsedAt: use.now, backupState: use.backupState })
    .where(
      and(
        eq(passkeys.id, passkeyId),
        or(lt(passkeys.counter, use.counter), sql`(${passkeys.counter} = 0 and ${use.counter} = 0)`),
      ),
    );
  return recorded.rowsAffected > 0;
}

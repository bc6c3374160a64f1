/** Passkey rows: the account's list, one by credential id, and their public shape. */
import { z } from '@hono/zod-openapi';
import { and, asc, eq } from 'drizzle-orm';
import { passkeys, users } from '../../../schema/index.js';
import type { Db } from '../store/index.js';
import type { UserRow } from '../accounts/model.js';
import type { PasskeyRow } from '../accounts/passkeys.js';
import { liveAccounts } from '../accounts/live.js';

export type { PasskeyRow } from '../accounts/passkeys.js';

/** How many passkeys one account may hold. */
export const MAX_PASSKEYS = 20;
/** The longest passkey name. */
export const MAX_NAME_LENGTH = 100;

export const PasskeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    createdAt: z.string().openapi({ format: 'date-time' }),
    lastUsedAt: z.string().nullable().openapi({ format: 'date-time' }),
    backupEligible: z.boolean().openapi({ description: 'whether it may be synced (a multi-device passkey)' }),
    backupState: z.boolean().openapi({ description: 'whether it was synced when last seen' }),
    transports: z.array(z.string()).openapi({ description: 'as the browser reported them (internal, hybrid, usb...)' }),
  })
  .openapi('Passkey');
export type PublicPasskey = z.infer<typeof PasskeySchema>;

/** The public shape of a passkey (never its public key or credential id). */
export function toPublicPasskey(p: PasskeyRow): PublicPasskey {
  return {
    id: p.id,
    name: p.name,
    createdAt: new Date(p.createdAt).toISOString(),
    lastUsedAt: p.lastUsedAt === null ? null : new Date(p.lastUsedAt).toISOString(),
    backupEligible: p.backupEligible,
    backupState: p.backupState,
    transports: p.transports,
  };
}

/** The passkeys of an account, oldest first. */
export function listPasskeys(db: Db, userId: string): Promise<PasskeyRow[]> {
  return db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt));
}

/** One passkey of an account, if it is that account's. */
export async function passkeyOf(db: Db, userId: string, id: string): Promise<PasskeyRow | undefined> {
  const rows = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .limit(1);
  return rows[0];
}

/** The passkey of a credential id with its live (not deleted) account. */
export async function passkeyByCredential(
  db: Db,
  credentialId: string,
): Promise<{ passkey: PasskeyRow; user: UserRow } | undefined> {
  const rows = await passkeyByCredentialQuery(db, credentialId);
  return rows[0];
}

/** The query of `passkeyByCredential` (at most one row), also for a batch. */
export function passkeyByCredentialQuery(db: Db, credentialId: string) {
  return db
    .select({ passkey: passkeys, user: users })
    .from(passkeys)
    .innerJoin(users, eq(users.id, passkeys.userId))
    .where(and(eq(passkeys.credentialId, credentialId), liveAccounts))
    .limit(1);
}

/** The WebAuthn user handle of an account: its id's UTF-8 bytes (never the login: it may change). */
export function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(userId);
}

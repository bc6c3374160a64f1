/**
 * The one way credentials are written (architecture.md §2 and §6). accounts/ is the only writer of
 * `users`, `sessions`, `api_tokens`, `password_history`, the second factors (`mfa_totp`,
 * `mfa_recovery_codes`, `mfa_pending_uses`, `passkeys`, `passkey_challenges_used`) and `devices`: code
 * outside it calls its named functions, which run each change with its consequences (sessions ended, the
 * audit event) in one batch, and never builds a write of those tables itself
 * (test/unit/account-writes.test.ts). Every insert, update or delete of `users`, `sessions` and
 * `api_tokens` is an AccountWrite, which names the account it touches, and runs through
 * `runAccountBatch` (or `accountWriting`), which invalidates that account's cached token and session
 * lookups (store/credential-cache.ts) when the write starts and again when it ends. Code outside
 * accounts/ cannot run an AccountWrite any other way (it is not a drizzle statement). The activity
 * touches (last use of a token or session, last activity) do not come through here.
 */
import type { BatchItem } from 'drizzle-orm/batch';
import { invalidateAccount } from '../store/credential-cache.js';
import type { Db } from '../store/db.js';

/** A statement writing credential tables, for the accounts it touches; only runAccountBatch runs it. */
export class AccountWrite {
  readonly #statement: BatchItem<'sqlite'>;
  constructor(
    statement: BatchItem<'sqlite'>,
    /** The accounts whose credentials it may change. */
    readonly accounts: readonly string[],
  ) {
    this.#statement = statement;
  }

  /** The drizzle statement (runAccountBatch only). */
  static statementOf(w: AccountWrite): BatchItem<'sqlite'> {
    return w.#statement;
  }
}

/**
 * The name under which the writes that end `userId`'s device cookies are also invalidated: the cached
 * checks of those devices (auth/password-login.ts) hold across the account's other writes (a login's
 * new session), and go with these.
 */
export const devicesOfAccount = (userId: string) => `devices:${userId}`;

/** A write of `userId`'s credentials (accounts/ only). */
export const accountWrite = (userId: string, statement: BatchItem<'sqlite'>) => new AccountWrite(statement, [userId]);

export type AccountBatchItem = BatchItem<'sqlite'> | AccountWrite;

/** Runs `run` between two invalidations of each of `userIds` (the write's start and end). */
export async function accountWriting<T>(userIds: Iterable<string>, run: () => Promise<T>): Promise<T> {
  const ids = [...new Set(userIds)];
  for (const id of ids) invalidateAccount(id);
  try {
    return await run();
  } finally {
    for (const id of ids) invalidateAccount(id);
  }
}

/** The result of one statement of a batch (what callers read of it). */
export interface StatementResult {
  rowsAffected: number;
}

/**
 * Runs `items` in one batch (one transaction), in order; the accounts of its AccountWrites are
 * invalidated around it. Results as drizzle's batch answers them, one per item.
 */
export async function runAccountBatch<const T extends readonly AccountBatchItem[]>(
  db: Db,
  items: T,
): Promise<{ -readonly [K in keyof T]: StatementResult }> {
  if (items.length === 0) return [] as unknown as { -readonly [K in keyof T]: StatementResult };
  const accounts = items.flatMap((i) => (i instanceof AccountWrite ? i.accounts : []));
  const statements = items.map((i) => (i instanceof AccountWrite ? AccountWrite.statementOf(i) : i)) as [
    BatchItem<'sqlite'>,
    ...BatchItem<'sqlite'>[],
  ];
  const results = await accountWriting(accounts, () => db.batch(statements));
  return results as unknown as { -readonly [K in keyof T]: StatementResult };
}

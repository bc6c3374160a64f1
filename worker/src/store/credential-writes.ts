/**
 * Which writes can change who a credential authenticates (architecture.md §6): any statement that inserts,
 * updates or deletes rows of `users`, `sessions` or `api_tokens`, except the touches that only
 * record activity (last use of a token, last request of a session, last activity of an account).
 * The database handle (createDb) counts them, in this process or isolate, in `credentialEpoch`:
 * the in-process cache of token and session lookups (auth/credential-cache.ts) drops everything
 * it holds whenever the count moves, so a revocation, block, deletion, logout, role or password
 * change made here takes effect at once here, whichever code path made it.
 */
import type { Client, InArgs, InStatement, ResultSet, Transaction, TransactionMode } from '@libsql/client';

let epoch = 0;

/** The number of credential-changing writes started or finished in this process (or isolate). */
export function credentialEpoch(): number {
  return epoch;
}

/** Moves the epoch (a write is starting or has finished). */
export function bumpCredentialEpoch(): void {
  epoch++;
}

const WATCHED = /["`\s(](users|sessions|api_tokens)["`\s(]/i;
const WRITE = /^\s*(with\b[\s\S]*\b)?(insert|update|delete|replace)\b/i;
// The activity touches (accounts/tokens.ts, accounts/sessions.ts), as drizzle writes them: one column, by id.
const TOUCH = new RegExp(
  '^update "(api_tokens|sessions|users)" set "(last_used_at|last_seen_at|last_activity_at)" = \\? ' +
    'where "\\1"\\."id" = \\?$',
);

/** Whether a statement may change what a credential authenticates. */
export function isCredentialWrite(sql: string): boolean {
  return WRITE.test(sql) && WATCHED.test(sql) && !TOUCH.test(sql.trim());
}

const sqlOf = (s: InStatement | [string, InArgs?]): string =>
  typeof s === 'string' ? s : Array.isArray(s) ? s[0] : s.sql;

/** Runs `run`, moving the epoch before it starts and after it settles when `write`. */
async function watched<T>(write: boolean, run: () => Promise<T>): Promise<T> {
  if (!write) return run();
  bumpCredentialEpoch();
  try {
    return await run();
  } finally {
    bumpCredentialEpoch();
  }
}

/** A client that counts credential-changing writes; everything else goes to `client` unchanged. */
export function watchCredentialWrites(client: Client): Client {
  const watchTransaction = (tx: Transaction): Transaction => ({
    execute: (stmt: InStatement) => watched(isCredentialWrite(sqlOf(stmt)), () => tx.execute(stmt)),
    batch: (stmts: InStatement[]) =>
      watched(
        stmts.some((s) => isCredentialWrite(sqlOf(s))),
        () => tx.batch(stmts),
      ),
    executeMultiple: (sql: string) => watched(true, () => tx.executeMultiple(sql)),
    rollback: () => watched(true, () => tx.rollback()),
    commit: () => watched(true, () => tx.commit()),
    close: () => {
      bumpCredentialEpoch();
      tx.close();
    },
    get closed() {
      return tx.closed;
    },
  });
  return {
    execute: ((stmtOrSql: InStatement | string, args?: InArgs): Promise<ResultSet> => {
      const text = typeof stmtOrSql === 'string' ? stmtOrSql : stmtOrSql.sql;
      const run = () => (typeof stmtOrSql === 'string' ? client.execute(stmtOrSql, args) : client.execute(stmtOrSql));
      return watched(isCredentialWrite(text), run);
    }) as Client['execute'],
    batch: (stmts, mode) =>
      watched(
        stmts.some((s) => isCredentialWrite(sqlOf(s))),
        () => client.batch(stmts, mode),
      ),
    migrate: (stmts) => watched(true, () => client.migrate(stmts)),
    transaction: (async (mode?: TransactionMode) => {
      bumpCredentialEpoch();
      return watchTransaction(await client.transaction(mode));
    }) as Client['transaction'],
    executeMultiple: (sql) => watched(true, () => client.executeMultiple(sql)),
    sync: () => client.sync(),
    close: () => client.close(),
    reconnect: () => client.reconnect(),
    get closed() {
      return client.closed;
    },
    get protocol() {
      return client.protocol;
    },
  };
}

/**
 * The Node host's embedded libSQL client: the `Client` of @libsql/client (what drizzle drives),
 * over one connection of the `libsql` package (libSQL's better-sqlite3-compatible binding, the
 * engine @libsql/client embeds), with every statement prepared once and reused.
 *
 * Why not @libsql/client's own embedded client: it prepares every statement again at every call
 * and asks the engine for its columns twice, which made up a third of the CPU of an authenticated
 * request (architecture.md §6); it also opens a connection per concurrent call (up to 20), each with its own
 * page cache and without the busy timeout set on the first. Here:
 * - statements are cached by SQL text (drizzle builds the same text for the same query), at most
 *   STATEMENT_CACHE_SIZE, least recently used out first;
 * - one connection serves every call: each call runs synchronously to its end (the engine is
 *   synchronous), so calls never interleave and a batch is one transaction with nothing between
 *   its statements;
 * - an interactive transaction (`client.transaction()`, unused by the service) gets a connection
 *   of its own for its lifetime, as in @libsql/client;
 * - a call that meets another connection's lock (SQLITE_BUSY: WORKERS, a second host, an operator's
 *   sqlite3 shell) is run again after a pause, for up to `busyTimeoutMs`, instead of SQLite's own
 *   busy timeout: that one sleeps inside the synchronous call and so blocked the whole process (every
 *   request, /health too) while it waited. A busy call has changed nothing (a batch rolls back), so
 *   running it again whole is safe. Past the wait the SQLITE_BUSY error is thrown (the app's 503).
 * Results keep @libsql/client's shape: integers as numbers (a RangeError past 2^53), blobs as
 * ArrayBuffer, rows readable by index and by column name, errors as LibsqlError with its codes.
 * The file format is SQLite's, as before: a database moves freely between this client, sqld and
 * the edge host's HTTP client.
 */
import { Buffer } from 'node:buffer';
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { open as openFile, type FileHandle } from 'node:fs/promises';
import {
  LibsqlBatchError,
  LibsqlError,
  type Client,
  type InArgs,
  type InStatement,
  type InValue,
  type ResultSet,
  type Row,
  type Transaction,
  type TransactionMode,
} from '@libsql/client';
import Database from 'libsql';

/** Statements kept prepared per connection. */
export const STATEMENT_CACHE_SIZE = 500;

type Connection = InstanceType<typeof Database>;
type Statement = ReturnType<Connection['prepare']>;
type SqlValue = number | bigint | string | Buffer | null;

/** A prepared statement and what is known about its results, computed once. */
interface Prepared {
  stmt: Statement;
  /** column names and declared types; undefined for a statement that returns no rows */
  columns?: string[];
  columnTypes?: string[];
  /** the prototype of its rows: index getters over the values, and `length` */
  rowProto?: object;
  /** the column names that become properties, with their index (the first of duplicates) */
  named?: [number, string][];
}

const VALUES = Symbol('values');
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_INT64 = -9223372036854775808n;
const MAX_INT64 = 9223372036854775807n;

/** A result set of @libsql/client's shape. */
class Result implements ResultSet {
  constructor(
    readonly columns: string[],
    readonly columnTypes: string[],
    readonly rows: Row[],
    readonly rowsAffected: number,
    readonly lastInsertRowid: bigint | undefined,
  ) {}

  toJSON() {
    const json = (v: unknown) =>
      typeof v === 'bigint' ? `${v}` : v instanceof ArrayBuffer ? Buffer.from(v).toString('base64') : v;
    return {
      columns: this.columns,
      columnTypes: this.columnTypes,
      rows: this.rows.map((r) => Array.prototype.map.call(r, json)),
      rowsAffected: this.rowsAffected,
      lastInsertRowid: this.lastInsertRowid === undefined ? null : `${this.lastInsertRowid}`,
    };
  }
}

/**
 * The prototype of the rows of one statement: `row[i]` and `row.length` read the values (not
 * enumerable, as in @libsql/client), while each column name is an own enumerable property set by
 * `makeRow`. Built once per statement instead of defining every property of every row.
 */
function rowPrototype(width: number): object {
  const proto: Record<PropertyKey, unknown> = {};
  Object.defineProperty(proto, 'length', { value: width });
  for (let i = 0; i < width; i++) {
    Object.defineProperty(proto, i, {
      get(this: { [VALUES]: unknown[] }) {
        return this[VALUES][i];
      },
    });
  }
  return proto;
}

function fromSql(v: unknown): unknown {
  if (typeof v === 'bigint') {
    if (v < MIN_SAFE || v > MAX_SAFE) {
      throw new RangeError('Received integer which cannot be safely represented as a JavaScript number');
    }
    return Number(v);
  }
  if (v instanceof Buffer) return v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength);
  return v;
}

/** Statements that change the schema. */
const DDL = /^\s*(create|alter|drop)\b/i;

/** Reads the columns of a statement that returns rows, and builds what its rows need. */
function describeColumns(p: Prepared): void {
  const cols = p.stmt.columns();
  p.columns = cols.map((c) => c.name);
  p.columnTypes = cols.map((c) => c.type ?? '');
  p.rowProto = rowPrototype(cols.length);
  // The first of two columns of the same name wins, as in @libsql/client.
  p.named = p.columns
    .map((name, i) => [i, name] as [number, string])
    .filter(([i, name]) => p.columns!.indexOf(name) === i);
}

function makeRow(p: Prepared, raw: unknown[]): Row {
  const values = raw.map(fromSql);
  const row = Object.create(p.rowProto!) as Record<PropertyKey, unknown>;
  // A symbol key: not listed by Object.keys or JSON, so only the column names show.
  row[VALUES] = values;
  for (const [i, name] of p.named!) row[name] = values[i];
  return row as unknown as Row;
}

function toSql(v: InValue): SqlValue {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) {
      throw new RangeError('Only finite numbers (not Infinity or NaN) can be passed as arguments');
    }
    return v;
  }
  if (typeof v === 'bigint') {
    if (v < MIN_INT64 || v > MAX_INT64) {
      throw new RangeError('bigint is too large to be represented as a 64-bit integer and passed as argument');
    }
    return v;
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof ArrayBuffer) return Buffer.from(v);
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof Date) return v.valueOf();
  if (v === undefined) throw new TypeError('undefined cannot be passed as argument to the database');
  return v;
}

function toArgs(args: InArgs | undefined): SqlValue[] | Record<string, SqlValue> {
  if (args === undefined) return [];
  if (Array.isArray(args)) return args.map(toSql);
  const named: Record<string, SqlValue> = {};
  for (const [name, v] of Object.entries(args)) {
    named[name[0] === '@' || name[0] === '$' || name[0] === ':' ? name.slice(1) : name] = toSql(v);
  }
  return named;
}

const BASE_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  12: 'SQLITE_NOTFOUND',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  16: 'SQLITE_EMPTY',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  22: 'SQLITE_NOLFS',
  23: 'SQLITE_AUTH',
  24: 'SQLITE_FORMAT',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
  27: 'SQLITE_NOTICE',
  28: 'SQLITE_WARNING',
};

/** An engine error as @libsql/client reports it (LibsqlError with the base and extended codes). */
function mapError(e: unknown): unknown {
  if (e instanceof Database.SqliteError) {
    const raw = (e as { rawCode?: number }).rawCode;
    const code = raw === undefined ? 'SQLITE_UNKNOWN' : (BASE_CODES[raw & 0xff] ?? `SQLITE_UNKNOWN_${raw & 0xff}`);
    return new LibsqlError(e.message, code, e.code, raw, e);
  }
  return e;
}

function batchError(e: unknown, i: number): unknown {
  if (e instanceof LibsqlBatchError) return e;
  if (e instanceof LibsqlError) {
    const cause = e.cause instanceof Error ? e.cause : undefined;
    return new LibsqlBatchError(e.message, i, e.code, e.extendedCode, e.rawCode, cause);
  }
  return e;
}

const BEGIN: Record<TransactionMode, string> = {
  write: 'BEGIN IMMEDIATE',
  read: 'BEGIN TRANSACTION READONLY',
  deferred: 'BEGIN DEFERRED',
};

/** One connection and its statement cache. */
class CachedConnection {
  private readonly cache = new Map<string, Prepared>();

  constructor(readonly db: Connection) {}

  /** Forgets every prepared statement (after a change of the schema). */
  forget(): void {
    this.cache.clear();
  }

  private prepare(sql: string): Prepared {
    let p = this.cache.get(sql);
    if (p) {
      // Most recently used last: Map keeps insertion order.
      this.cache.delete(sql);
      this.cache.set(sql, p);
      return p;
    }
    const stmt = this.db.prepare(sql);
    stmt.safeIntegers(true);
    p = { stmt };
    if (stmt.reader) {
      stmt.raw(true);
      describeColumns(p);
    }
    // A statement that changes the schema is not kept, and the others are prepared again after
    // it: SQLite re-prepares a statement whose tables changed, but the columns read here would be
    // stale (`select *` after an added column).
    if (DDL.test(sql)) return p;
    this.cache.set(sql, p);
    if (this.cache.size > STATEMENT_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    return p;
  }

  /** Runs one statement to its end. */
  execute(stmt: InStatement | [string, InArgs?]): ResultSet {
    const [sql, args] =
      typeof stmt === 'string' ? [stmt, undefined] : Array.isArray(stmt) ? stmt : [stmt.sql, stmt.args];
    try {
      const p = this.prepare(sql);
      const bound = toArgs(args);
      if (p.columns) {
        const raw = p.stmt.all(bound) as unknown[][];
        // Another process changed the table under a cached `select *`: read its columns again.
        if (raw.length > 0 && raw[0]!.length !== p.columns.length) describeColumns(p);
        return new Result(
          p.columns,
          p.columnTypes!,
          raw.map((r) => makeRow(p, r)),
          0,
          undefined,
        );
      }
      const info = p.stmt.run(bound);
      if (DDL.test(sql)) this.forget();
      return new Result([], [], [], info.changes, BigInt(info.lastInsertRowid));
    } catch (e) {
      throw mapError(e);
    }
  }

  /** Statements in one transaction; any failure rolls it back. */
  batch(stmts: Array<InStatement | [string, InArgs?]>, begin: string): ResultSet[] {
    this.execute(begin);
    try {
      const results = stmts.map((s, i) => {
        try {
          if (!this.db.inTransaction) {
            throw new LibsqlBatchError('The transaction has been rolled back', i, 'TRANSACTION_CLOSED');
          }
          return this.execute(s);
        } catch (e) {
          throw batchError(e, i);
        }
      });
      this.execute('COMMIT');
      return results;
    } finally {
      if (this.db.open && this.db.inTransaction) this.execute('ROLLBACK');
    }
  }

  close(): void {
    this.cache.clear();
    if (this.db.open) this.db.close();
  }
}

/** Options of the embedded client. */
export interface EmbeddedClientOptions {
  /** ms a call waits (without blocking the event loop) for another connection's lock before SQLITE_BUSY */
  busyTimeoutMs?: number;
  /**
   * Commit without waiting for the disk (PRAGMA synchronous = NORMAL) when the database is in WAL
   * mode (otherwise the default, FULL, stays): a commit survives a crash of the process at once, and
   * reaches the disk within LAZY_FLUSH_MS: the client flushes the WAL file (fdatasync, on libuv's
   * thread pool, never on the event loop) that long after its first commit not yet flushed, unless a
   * checkpoint or a commit of a FULL connection got there first. For writes whose loss on a power
   * failure within that window is accepted (architecture.md §6), so that they never hold the event
   * loop for an fsync.
   */
  lazyDurability?: boolean;
  /** A failed flush of lazyDurability (the commits stay in the WAL; the next flush tries again). */
  onFlushError?: (err: unknown) => void;
  /** How long a commit of lazyDurability waits for the disk at most (ms); default LAZY_FLUSH_MS. */
  flushAfterMs?: number;
}

/** The longest a commit of a lazyDurability client waits for the disk (ms). */
export const LAZY_FLUSH_MS = 1000;

/**
 * Flushes the WAL file `walPath` to the disk within `afterMs` of each `written()`: one fdatasync (any
 * descriptor of the file flushes its pages) covers every commit made before it started.
 */
function walFlusher(walPath: string, afterMs: number, onError: (err: unknown) => void) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = async () => {
    timer = undefined; // a commit from now on is covered by the next flush
    let file: FileHandle | undefined;
    try {
      file = await openFile(walPath, 'r');
      await file.datasync();
    } catch (err) {
      // No WAL file: a checkpoint that truncated it, or the last connection closed, did the work.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError(err);
    } finally {
      await file?.close().catch(() => {});
    }
  };
  return {
    written(): void {
      if (timer) return;
      timer = setTimeout(() => void flush(), afterMs);
      timer.unref();
    },
    /** At close: whatever is pending goes to the disk now. */
    flushNow(): void {
      if (!timer) return;
      clearTimeout(timer);
      timer = undefined;
      try {
        const fd = openSync(walPath, 'r');
        try {
          fdatasyncSync(fd);
        } finally {
          closeSync(fd);
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError(err);
      }
    },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function isBusy(e: unknown): boolean {
  return e instanceof LibsqlError && e.code === 'SQLITE_BUSY';
}

/**
 * Runs `call` (synchronous, all or nothing) again while it meets a lock, for up to `waitMs`.
 * `afterBusy` runs after each busy failure: a statement that met SQLITE_BUSY stays "in progress" in
 * the binding (it has no reset), and every later COMMIT of its connection would then fail ("SQL
 * statements in progress") until that very statement ran again; a fresh connection drops it.
 */
async function whileBusy<T>(waitMs: number, call: () => T, afterBusy: () => void): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      return call();
    } catch (e) {
      if (!isBusy(e)) throw e;
      afterBusy();
      if (Date.now() + pause > deadline) throw e;
    }
    await sleep(pause);
  }
}

/** Opens the embedded database at `path` (a file path or `:memory:`). */
export function createEmbeddedClient(path: string, o: EmbeddedClientOptions = {}): Client {
  const waitMs = Math.max(0, Math.floor(o.busyTimeoutMs ?? 0));
  const open = () => {
    const db = new Database(path);
    // No engine-side wait (it would sleep inside the synchronous call): whileBusy waits instead.
    db.pragma('busy_timeout = 0');
    // Only in WAL mode: with a rollback journal, NORMAL could corrupt the file on a power failure.
    // (libsql's pragma() ignores better-sqlite3's `simple` option: always rows.)
    const journal = () => (db.pragma('journal_mode') as Array<{ journal_mode?: string }>)[0]?.journal_mode;
    if (o.lazyDurability && journal() === 'wal') {
      db.pragma('synchronous = NORMAL');
      flusher ??= walFlusher(`${path}-wal`, o.flushAfterMs ?? LAZY_FLUSH_MS, o.onFlushError ?? (() => {}));
    }
    return new CachedConnection(db);
  };
  let flusher: ReturnType<typeof walFlusher> | undefined;
  let main: CachedConnection | undefined = open();
  const live = (): CachedConnection => {
    if (!main) throw new LibsqlError('The client is closed', 'CLIENT_CLOSED');
    return main;
  };
  /** After SQLITE_BUSY: the main connection, with its statement that met it, is replaced. */
  const renewMain = () => {
    if (!main) return;
    main.close();
    main = open();
  };
  const client: Client = {
    protocol: 'file',
    get closed() {
      return main === undefined;
    },
    async execute(stmtOrSql: InStatement | string, args?: InArgs): Promise<ResultSet> {
      const stmt = typeof stmtOrSql === 'string' ? { sql: stmtOrSql, args: args ?? [] } : stmtOrSql;
      const result = await whileBusy(waitMs, () => live().execute(stmt), renewMain);
      flusher?.written();
      return result;
    },
    async batch(stmts, mode = 'deferred') {
      const results = await whileBusy(waitMs, () => live().batch(stmts, BEGIN[mode]), renewMain);
      flusher?.written();
      return results;
    },
    async migrate(stmts) {
      return whileBusy(
        waitMs,
        () => {
          const c = live();
          c.execute('PRAGMA foreign_keys=off');
          try {
            return c.batch(stmts, BEGIN.deferred);
          } finally {
            c.execute('PRAGMA foreign_keys=on');
            c.forget();
          }
        },
        renewMain,
      ).finally(() => flusher?.written());
    },
    async transaction(mode: TransactionMode = 'write'): Promise<Transaction> {
      live();
      // Its own connection for its lifetime: other calls go on meanwhile on the main one.
      let c = open();
      const renew = () => {
        c.close();
        c = open();
      };
      try {
        await whileBusy(waitMs, () => c.execute(BEGIN[mode]), renew);
      } catch (e) {
        c.close();
        throw e;
      }
      return embeddedTransaction(c, () => flusher?.written());
    },
    async executeMultiple(sql) {
      const c = live();
      try {
        c.db.exec(sql);
      } catch (e) {
        throw mapError(e);
      } finally {
        c.forget();
        flusher?.written();
      }
    },
    async sync() {
      throw new LibsqlError('sync() is for embedded replicas, which this client does not open', 'SYNC_NOT_SUPPORTED');
    },
    close() {
      flusher?.flushNow();
      main?.close();
      main = undefined;
    },
    reconnect() {
      main?.close();
      main = open();
    },
  } as Client;
  return client;
}

function embeddedTransaction(c: CachedConnection, committed: () => void): Transaction {
  let settled = false;
  const use = () => {
    if (settled || !c.db.inTransaction) throw new LibsqlError('The transaction is closed', 'TRANSACTION_CLOSED');
    return c;
  };
  const settle = () => {
    if (settled) return;
    settled = true;
    if (c.db.open && c.db.inTransaction) c.execute('ROLLBACK');
    c.close();
  };
  return {
    async execute(stmt: InStatement) {
      return use().execute(stmt);
    },
    async batch(stmts: InStatement[]) {
      const t = use();
      return stmts.map((s, i) => {
        try {
          return t.execute(s);
        } catch (e) {
          throw batchError(e, i);
        }
      });
    },
    async executeMultiple(sql: string) {
      try {
        use().db.exec(sql);
      } catch (e) {
        throw mapError(e);
      }
    },
    async rollback() {
      settle();
    },
    async commit() {
      try {
        use().execute('COMMIT');
        committed();
      } finally {
        settle();
      }
    },
    close: settle,
    get closed() {
      return settled || !c.db.inTransaction;
    },
  } as Transaction;
}

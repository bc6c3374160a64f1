// Development/test stand-in for sqld: speaks libSQL's "Hrana over HTTP" v2 protocol (JSON encoding,
// docs/HTTP_V2_SPEC.md + HRANA_2_SPEC.md in the libsql repo) on top of the embedded engine, so that
// `@libsql/client` with an http:// URL (and `@libsql/client/web` in workerd) can use a local file.
// Not for production: no TLS, no JWT verification (a shared bearer token at most), no replication.
//
// Usage: tsx scripts/libsql-dev-server.ts --path data/edge.db [--port 8080] [--host 127.0.0.1] [--auth-token T]
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'libsql';

type Conn = InstanceType<typeof Database>;
type SqlValue = null | bigint | number | string | Buffer;
type ProtoValue =
  | { type: 'null' }
  | { type: 'integer'; value: string }
  | { type: 'float'; value: number }
  | { type: 'text'; value: string }
  | { type: 'blob'; base64: string };
type ProtoError = { message: string; code: string };
type ProtoStmt = {
  sql?: string | null;
  sql_id?: number | null;
  args?: ProtoValue[];
  named_args?: { name: string; value: ProtoValue }[];
  want_rows?: boolean;
};
type ProtoCond =
  | { type: 'ok' | 'error'; step: number }
  | { type: 'not'; cond: ProtoCond }
  | { type: 'and' | 'or'; conds: ProtoCond[] }
  | { type: 'is_autocommit' };
type StreamReq = {
  type: string;
  stmt?: ProtoStmt;
  batch?: { steps: { condition?: ProtoCond | null; stmt: ProtoStmt }[] };
  sql?: string | null;
  sql_id?: number | null;
};
type Stream = {
  db: Conn;
  sqls: Map<number, string>;
  meta: ReturnType<Conn['prepare']>;
  idle?: NodeJS.Timeout;
  closed: boolean;
};

const MAX_BODY = 10 * 1024 * 1024;
const IDLE_MS = 10_000;
const BUSY_TIMEOUT_MS = 5_000;

/** Error reported to the client as a Hrana `Error` ({ message, code }). */
class HranaError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}
/** SqliteError carries the extended SQLite code (e.g. SQLITE_CONSTRAINT_UNIQUE) in `code`. */
function toProtoError(e: unknown): ProtoError {
  const code = (e as { code?: unknown } | null)?.code;
  return { message: e instanceof Error ? e.message : String(e), code: typeof code === 'string' ? code : 'INTERNAL' };
}

// ---------------------------------------------------------------------------------------------
// SQL scanning. libsql-js exposes neither sqlite3_bind_parameter_name() nor the "tail" of a
// prepared statement, so we tokenize just enough SQL (strings, quoted identifiers, comments,
// words, parameters, semicolons) to (a) number parameters exactly like SQLite does, (b) split a
// `sequence` into statements and (c) reject `execute` with several statements (libsql-js would
// silently run only the first one). Binding named args through libsql-js's object form is avoided
// on purpose: it aborts the whole process (Rust panic) when the SQL also contains a bare `?`.
type Token = { kind: 'word' | 'quoted' | 'param' | 'semi' | 'other'; text: string; start: number; end: number };
const isIdChar = (c: string | undefined) => c !== undefined && (/[A-Za-z0-9_$]/.test(c) || c > '\x7f');

function* tokenize(sql: string): Generator<Token> {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!,
      start = i;
    let kind: Token['kind'] = 'other';
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '-' && sql[i + 1] === '-') {
      const e = sql.indexOf('\n', i);
      i = e < 0 ? sql.length : e + 1;
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const e = sql.indexOf('*/', i + 2);
      i = e < 0 ? sql.length : e + 2;
      continue;
    }
    if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c; // quotes are escaped by doubling them
      for (i++; ; i++) {
        const e = sql.indexOf(close, i);
        if (e < 0) {
          i = sql.length;
          break;
        }
        i = e + 1;
        if (close === ']' || sql[i] !== close) break;
      }
      kind = c === "'" ? 'other' : 'quoted';
    } else if (c === '?') {
      for (i++; /[0-9]/.test(sql[i] ?? ''); i++);
      kind = 'param';
    } else if (c === ':' || c === '@' || c === '$') {
      // Same rules as SQLite's tokenizer, including Tcl-style `$a::b(x)` names.
      let n = 0;
      for (i++; i < sql.length; i++) {
        if (isIdChar(sql[i])) n++;
        else if (sql[i] === '(' && n > 0) {
          const e = sql.indexOf(')', i);
          i = e < 0 ? sql.length : e + 1;
          break;
        } else if (sql[i] === ':' && sql[i + 1] === ':') i++;
        else break;
      }
      kind = n > 0 ? 'param' : 'other';
    } else if (isIdChar(c)) {
      while (isIdChar(sql[i])) i++;
      kind = 'word';
    } else {
      i++;
      kind = c === ';' ? 'semi' : 'other';
    }
    yield { kind, text: sql.slice(start, i), start, end: i };
  }
}

/** Split SQL text into statements. Inside CREATE TRIGGER ... BEGIN ... END, `;` does not end the statement. */
function splitSql(sql: string): string[] {
  const out: string[] = [];
  let start = -1,
    words: string[] = [],
    depth = 0;
  for (const t of tokenize(sql)) {
    if (t.kind === 'semi') {
      const trigger = words[0] === 'CREATE' && (words[1] === 'TRIGGER' || words[2] === 'TRIGGER');
      if (start >= 0 && (!trigger || (depth === 0 && words.includes('BEGIN')))) {
        out.push(sql.slice(start, t.end));
        start = -1;
        words = [];
        depth = 0;
      }
      continue;
    }
    if (start < 0) start = t.start;
    if (t.kind !== 'word') continue;
    const w = t.text.toUpperCase();
    words.push(w);
    if (w === 'BEGIN' || w === 'CASE') depth++;
    else if (w === 'END') depth--;
  }
  if (start >= 0) out.push(sql.slice(start));
  return out;
}

/** Parameter numbering as in SQLite's sqlite3ExprAssignVarNumber(): returns index -> name (null for `?`). */
function sqlParams(sql: string): { names: (string | null)[]; byName: Map<string, number> } {
  const names: (string | null)[] = [],
    byName = new Map<string, number>();
  for (const t of tokenize(sql)) {
    if (t.kind !== 'param') continue;
    let idx: number;
    if (t.text === '?') idx = names.length + 1;
    else if (t.text[0] === '?') idx = Number(t.text.slice(1));
    else idx = byName.get(t.text) ?? names.length + 1;
    if (!(idx >= 1 && idx <= 32766))
      throw new HranaError(`Parameter ${t.text} out of range (SQLite allows ?1 to ?32766)`, 'SQL_PARSE_ERROR');
    while (names.length < idx) names.push(null);
    if (t.text !== '?') {
      names[idx - 1] = t.text;
      byName.set(t.text, idx);
    }
  }
  return { names, byName };
}

const firstWords = (sql: string) =>
  [...tokenize(sql)].filter((t) => t.kind === 'word').map((t) => t.text.toUpperCase());

// ---------------------------------------------------------------------------------------------
// Values. Integers travel as decimal strings; the engine runs with safeIntegers, so every SQLite
// INTEGER comes back as a BigInt and every REAL as a JS number (2.0 stays a float).
function valueFromProto(v: ProtoValue): SqlValue {
  switch (v?.type) {
    case 'null':
      return null;
    case 'integer': {
      const n = BigInt(v.value);
      if (n < -(2n ** 63n) || n >= 2n ** 63n)
        throw new HranaError(`Integer ${v.value} out of 64-bit range`, 'ARGS_INVALID');
      return n;
    }
    case 'float':
      return Number(v.value);
    case 'text':
      return String(v.value);
    case 'blob':
      return Buffer.from(v.base64, 'base64');
    default:
      throw new HranaError(`Unknown value ${JSON.stringify(v)}`, 'ARGS_INVALID');
  }
}
function valueToProto(v: unknown): ProtoValue {
  if (v === null || v === undefined) return { type: 'null' };
  if (typeof v === 'bigint') return { type: 'integer', value: v.toString() };
  if (typeof v === 'number') return { type: 'float', value: v };
  if (typeof v === 'string') return { type: 'text', value: v };
  if (v instanceof Uint8Array) return { type: 'blob', base64: Buffer.from(v).toString('base64') };
  throw new Error(`Unexpected value from engine: ${typeof v}`);
}

/** Resolve positional + named args into one positional array (named args win, as the spec says). */
function bindArgs(sql: string, stmt: ProtoStmt): SqlValue[] {
  const { names, byName } = sqlParams(sql);
  const values: (SqlValue | undefined)[] = new Array(names.length).fill(undefined);
  (stmt.args ?? []).forEach((v, i) => {
    if (i >= names.length)
      throw new HranaError(
        `Statement has ${names.length} parameters, got ${stmt.args!.length} positional args`,
        'ARGS_INVALID',
      );
    values[i] = valueFromProto(v);
  });
  for (const { name, value } of stmt.named_args ?? []) {
    // Names should carry their prefix (":a"); without one, guess it like sqld does.
    const idx = /^[:@$]/.test(name)
      ? byName.get(name)
      : /^\?\d+$/.test(name)
        ? Number(name.slice(1))
        : (byName.get(`:${name}`) ?? byName.get(`@${name}`) ?? byName.get(`$${name}`));
    if (idx === undefined || idx > names.length)
      throw new HranaError(`Statement has no parameter named ${name}`, 'ARGS_INVALID');
    values[idx - 1] = valueFromProto(value);
  }
  const missing = names.findIndex((n, i) => n !== null && values[i] === undefined);
  if (missing >= 0) throw new HranaError(`Missing value for parameter ${names[missing]}`, 'ARGS_INVALID');
  return values.map((v) => v ?? null);
}

// ---------------------------------------------------------------------------------------------
// Execution.

/** Retry on SQLITE_BUSY without blocking the event loop. A native busy_timeout would block this
 * single-threaded server, so the stream holding the lock could never send its COMMIT. */
async function retryBusy<T>(fn: () => T): Promise<T> {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    try {
      return fn();
    } catch (e) {
      // Only plain SQLITE_BUSY: e.g. SQLITE_BUSY_SNAPSHOT can never succeed on retry.
      if ((e as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** Every engine access goes through this: touching a closed libsql-js connection (or one of its
 * statements) aborts the process with a Rust panic instead of throwing. */
function conn(s: Stream): Conn {
  if (s.closed) throw new HranaError('Stream is closed', 'STREAM_CLOSED');
  return s.db;
}

const colsOf = (p: ReturnType<Conn['prepare']>) =>
  p.reader ? p.columns().map((c) => ({ name: c.name, decltype: c.type ?? null })) : [];

/** Runs one statement; on SQLITE_BUSY it is retried (retryBusy) as the SAME prepared statement: one
 * that met SQLITE_BUSY stays "in progress" (libsql-js cannot reset it) until it runs again, and
 * until then every COMMIT of the connection fails with "SQL statements in progress". */
async function execStmt(s: Stream, sql: string, stmt: ProtoStmt) {
  const parts = splitSql(sql),
    words = firstWords(sql);
  if (parts.length === 0) throw new HranaError('SQL text contains no statement', 'SQL_NO_STATEMENT');
  if (parts.length > 1) throw new HranaError('SQL text contains more than one statement', 'SQL_MANY_STATEMENTS');
  const args = bindArgs(sql, stmt);
  const prepared = conn(s).prepare(sql);
  const [before] = s.meta.all([]) as [[bigint, bigint, bigint]];
  // Reader statements must be drained with all(): run() leaves them un-reset, which would keep a
  // read transaction (and a stale snapshot) open on this connection.
  const runOnce = (): unknown[][] => {
    conn(s); // before each try: the stream may have closed while the retry waited
    if (prepared.reader) return prepared.raw(true).all(args) as unknown[][];
    prepared.run(args);
    return [];
  };
  const rows = await retryBusy(runOnce);
  conn(s);
  const [after] = s.meta.all([]) as [[bigint, bigint, bigint]];
  const isInsert =
    words[0] === 'INSERT' ||
    words[0] === 'REPLACE' ||
    (words[0] === 'WITH' && (words.includes('INSERT') || words.includes('REPLACE')));
  return {
    cols: colsOf(prepared),
    rows: stmt.want_rows === false ? [] : rows.map((r) => r.map(valueToProto)),
    // changes() is sticky across SELECTs; report it only if this statement changed something.
    affected_row_count: after[0] !== before[0] ? Number(after[1]) : 0,
    last_insert_rowid: isInsert ? after[2].toString() : null,
  };
}

function sqlOf(s: Stream, src: { sql?: string | null; sql_id?: number | null }): string {
  if (typeof src.sql === 'string') return src.sql;
  const sql = src.sql_id != null ? s.sqls.get(src.sql_id) : undefined;
  if (sql === undefined) throw new HranaError(`SQL text ${src.sql_id} not found`, 'SQL_NOT_FOUND');
  return sql;
}

async function execBatch(s: Stream, steps: NonNullable<StreamReq['batch']>['steps']) {
  const results: (Awaited<ReturnType<typeof execStmt>> | null)[] = [],
    errors: (ProtoError | null)[] = [];
  const evalCond = (c: ProtoCond): boolean => {
    switch (c.type) {
      case 'ok':
        return results[c.step] != null; // steps not (yet) executed are neither ok nor error
      case 'error':
        return errors[c.step] != null;
      case 'not':
        return !evalCond(c.cond);
      case 'and':
        return c.conds.every(evalCond);
      case 'or':
        return c.conds.some(evalCond);
      case 'is_autocommit':
        return !conn(s).inTransaction;
      default:
        throw new HranaError(`Unknown batch condition ${JSON.stringify(c)}`, 'BATCH_COND_INVALID');
    }
  };
  for (const step of steps) {
    let result = null,
      error = null;
    try {
      if (!step.condition || evalCond(step.condition)) result = await execStmt(s, sqlOf(s, step.stmt), step.stmt);
    } catch (e) {
      error = toProtoError(e);
    }
    results.push(result);
    errors.push(error);
  }
  return { step_results: results, step_errors: errors };
}

async function execRequest(s: Stream, req: StreamReq): Promise<object> {
  conn(s); // fails if a previous `close` in this pipeline closed the stream
  switch (req.type) {
    case 'close':
      closeStream(s);
      return { type: 'close' };
    case 'execute':
      return { type: 'execute', result: await execStmt(s, sqlOf(s, req.stmt!), req.stmt!) };
    case 'batch':
      return { type: 'batch', result: await execBatch(s, req.batch?.steps ?? []) };
    case 'sequence':
      for (const sql of splitSql(sqlOf(s, req))) await execStmt(s, sql, { want_rows: false });
      return { type: 'sequence' };
    case 'describe': {
      const sql = sqlOf(s, req),
        words = firstWords(sql),
        prepared = conn(s).prepare(sql);
      // is_readonly is a keyword heuristic: libsql-js does not expose sqlite3_stmt_readonly().
      const readonly =
        /^(SELECT|VALUES|EXPLAIN|BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)$/.test(words[0] ?? '') ||
        (words[0] === 'WITH' && !words.some((w) => /^(INSERT|UPDATE|DELETE|REPLACE)$/.test(w)));
      const params = sqlParams(sql).names.map((name) => ({ name }));
      return {
        type: 'describe',
        result: { params, cols: colsOf(prepared), is_explain: words[0] === 'EXPLAIN', is_readonly: readonly },
      };
    }
    case 'store_sql':
      if (s.sqls.has(req.sql_id!)) throw new HranaError(`SQL text ${req.sql_id} already exists`, 'SQL_STORE_ID_EXISTS');
      s.sqls.set(req.sql_id!, String(req.sql));
      return { type: 'store_sql' };
    case 'close_sql':
      s.sqls.delete(req.sql_id!);
      return { type: 'close_sql' };
    case 'get_autocommit':
      return { type: 'get_autocommit', is_autocommit: !conn(s).inTransaction };
    default:
      throw new HranaError(`Unknown request type ${JSON.stringify(req.type)}`, 'REQUEST_INVALID');
  }
}

function closeStream(s: Stream): void {
  if (s.closed) return;
  s.closed = true;
  clearTimeout(s.idle);
  try {
    if (s.db.inTransaction) s.db.exec('ROLLBACK');
  } catch {
    /* closing anyway */
  }
  s.db.close();
}

// ---------------------------------------------------------------------------------------------
// HTTP.

export async function startLibsqlDevServer(opts: {
  path: string;
  host?: string;
  port?: number;
  authToken?: string;
  /** Close (and roll back) streams idle for this long; default 10 s. Mainly a knob for tests. */
  idleTimeoutMs?: number;
}): Promise<{ url: string; port: number; close(): Promise<void> }> {
  if (!opts.path || opts.path === ':memory:')
    throw new Error('libsql-dev-server needs a database file path (every stream opens its own connection)');
  mkdirSync(path.dirname(path.resolve(opts.path)), { recursive: true });
  const open = (): Conn => {
    const db = new Database(opts.path);
    db.defaultSafeIntegers(true);
    db.exec('PRAGMA busy_timeout = 0'); // see retryBusy()
    return db;
  };
  const first = open();
  first.exec('PRAGMA journal_mode = WAL'); // persistent: switch the file once, all later connections use WAL
  first.close();

  const batons = new Map<string, Stream>(); // baton -> stream waiting for its next request
  const streams = new Set<Stream>();

  async function pipeline(body: { baton?: string | null; requests?: StreamReq[] }): Promise<[number, object]> {
    if (!body || !Array.isArray(body.requests))
      return [400, { message: 'Expected { baton, requests: [...] }', code: 'PROTO_ERROR' }];
    let s: Stream | undefined;
    if (body.baton == null) {
      const db = open();
      s = {
        db,
        sqls: new Map(),
        meta: db.prepare('SELECT total_changes(), changes(), last_insert_rowid()').raw(true),
        closed: false,
      };
      streams.add(s);
    } else {
      // Batons are single-use: this forces the client to serialize requests on a stream.
      s = batons.get(body.baton);
      if (!s)
        return [
          400,
          { message: 'Unknown or expired baton (stream closed or idle for too long)', code: 'STREAM_EXPIRED' },
        ];
      batons.delete(body.baton);
      clearTimeout(s.idle);
    }
    const results = [];
    for (const req of body.requests) {
      try {
        results.push({ type: 'ok', response: await execRequest(s, req) });
      } catch (e) {
        results.push({ type: 'error', error: toProtoError(e) });
      }
    }
    let baton: string | null = null;
    if (s.closed) streams.delete(s);
    else {
      baton = randomBytes(18).toString('base64url');
      batons.set(baton, s);
      const [b, stream] = [baton, s];
      s.idle = setTimeout(() => {
        batons.delete(b);
        closeStream(stream);
        streams.delete(stream);
      }, opts.idleTimeoutMs ?? IDLE_MS);
      s.idle.unref();
    }
    return [200, { baton, base_url: null, results }];
  }

  const server = http.createServer((req, res) => {
    // errorFromResponse() in hrana-client only parses the body when content-type is exactly application/json.
    const send = (status: number, body: object) => {
      const data = JSON.stringify(body);
      res
        .writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) })
        .end(data);
    };
    if (opts.authToken !== undefined && req.headers.authorization !== `Bearer ${opts.authToken}`) {
      return send(401, { message: 'Unauthorized: missing or invalid bearer token', code: 'UNAUTHORIZED' });
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && (url.pathname === '/v2' || url.pathname === '/health'))
      return send(200, { version: 2 });
    // Everything else, notably /v3 and /v3-protobuf, is a 404, so version-probing clients fall back to v2.
    if (req.method !== 'POST' || url.pathname !== '/v2/pipeline')
      return send(404, { message: `Not found: ${req.method} ${url.pathname}`, code: 'NOT_FOUND' });
    // Oversized bodies are drained (not buffered) before answering 413, so the client reliably sees the status.
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return send(413, { message: 'Request body larger than 10 MiB', code: 'PAYLOAD_TOO_LARGE' });
      let body: Parameters<typeof pipeline>[0];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { message: 'Request body is not valid JSON', code: 'PROTO_ERROR' });
      }
      pipeline(body).then(
        ([status, out]) => send(status, out),
        (e) => send(500, toProtoError(e)),
      );
    });
  });
  // A client reuses an idle kept-alive connection; Node's default closes it after 5 s, and a request sent
  // as the server closes it fails ("fetch failed", "Network connection lost") on a loaded machine.
  // sqld keeps idle connections longer than clients do: so does this server.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  const host = opts.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    async close() {
      for (const s of streams) closeStream(s);
      streams.clear();
      batons.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// CLI entry point: only when this file is executed directly (tsx scripts/libsql-dev-server.ts ...).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const dbPath = arg('path');
  if (!dbPath) {
    console.error(
      'usage: tsx scripts/libsql-dev-server.ts --path <file.db> [--port 8080] [--host 127.0.0.1] [--auth-token ' +
        '<token>]',
    );
    process.exit(2);
  }
  const srv = await startLibsqlDevServer({
    path: dbPath,
    host: arg('host'),
    port: Number(arg('port') ?? 8080),
    authToken: arg('auth-token') ?? process.env.LIBSQL_AUTH_TOKEN,
  });
  console.log(`libsql dev server (Hrana v2 over HTTP) for ${dbPath} listening on ${srv.url}`);
  const stop = () => {
    srv.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

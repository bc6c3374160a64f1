/**
 * Sending the fuzz's requests byte-exact (node:http: repeated headers, raw bodies, paths with `..`),
 * printing one as a replayable curl command, and the database fingerprint that shows a refused
 * request changed nothing.
 */
import { createHash } from 'node:crypto';
import { type Agent, request } from 'node:http';
import type { Client } from '@libsql/client';
import type { FuzzRequest } from './fuzz-cases.js';

export interface FuzzAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** How long a request waits for its answer before it counts as unanswered (status 0). */
const ANSWER_WAIT_MS = 60_000;

export interface SendOptions {
  /**
   * Wait this long for the first attempt's answer (default ANSWER_WAIT_MS); an unanswered first
   * attempt is then sent once more on a new connection, which waits ANSWER_WAIT_MS. For the edge
   * host: `wrangler dev`'s local proxy now and then holds a request back until its client gives up
   * (the worker starts on it only then, and answers within a second; docs/architecture.md,
   * "Testing"). Cloudflare has no such proxy.
   */
  firstWaitMs?: number;
}

/**
 * Sends one request to `origin` on `agent`; a connection the host cuts is an error (status 0).
 * A kept-alive connection that the host closed as it was reused is retried once on a new one (the
 * race Node documents for `request.reusedSocket`): nothing of the request was read. With
 * `firstWaitMs`, so is a first attempt without an answer within that time.
 */
export async function sendFuzzRequest(
  origin: string,
  agent: Agent,
  r: FuzzRequest,
  o: SendOptions = {},
): Promise<FuzzAnswer> {
  const first = await sendOnce(origin, agent, r, true, o.firstWaitMs ?? ANSWER_WAIT_MS);
  if (first.answer.status !== 0) return first.answer;
  if (!first.reused && !(o.firstWaitMs !== undefined && first.timedOut)) return first.answer;
  return (await sendOnce(origin, agent, r, false, ANSWER_WAIT_MS)).answer;
}

function sendOnce(
  origin: string,
  agent: Agent,
  r: FuzzRequest,
  keepAlive: boolean,
  waitMs: number,
): Promise<{ answer: FuzzAnswer; reused: boolean; timedOut: boolean }> {
  const url = new URL(origin);
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of r.headers) {
    const key = k.toLowerCase();
    const had = headers[key];
    headers[key] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
  }
  if (r.body && !headers['transfer-encoding']) headers['content-length'] = String(r.body.length);
  return new Promise((resolve) => {
    let timedOut = false;
    const cut = (e: Error) =>
      resolve({ answer: { status: 0, headers: {}, body: Buffer.from(String(e)) }, reused: req.reusedSocket, timedOut });
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: r.target,
        headers,
        agent: keepAlive ? agent : false,
        timeout: waitMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            answer: { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) },
            reused: false,
            timedOut: false,
          }),
        );
        res.on('error', cut);
      },
    );
    req.on('timeout', () => {
      timedOut = true;
      req.destroy(new Error(`no answer within ${waitMs / 1000} s`));
    });
    req.on('error', cut);
    req.end(r.body ? Buffer.from(r.body) : undefined);
  });
}

/** A shell word: single-quoted, a quote inside closed, escaped and reopened. */
function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Bytes as a printf %b argument: printable ASCII as is, the rest as octal escapes (NUL and invalid UTF-8 survive). */
function printfBytes(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    if (b >= 0x20 && b < 0x7f && b !== 0x5c && b !== 0x27) out += String.fromCharCode(b);
    else out += `\\0${b.toString(8).padStart(3, '0')}`;
  }
  return `'${out}'`;
}

/** The request as a curl command line that sends the same bytes (`--path-as-is`: `..` is not resolved). */
export function curlOf(origin: string, r: FuzzRequest): string {
  const parts = ['curl', '-sS', '-i', '--path-as-is', '-g', '-X', r.method, shellQuote(`${origin}${r.target}`)];
  for (const [k, v] of r.headers) parts.push('-H', shellQuote(`${k}: ${v}`));
  // curl adds its own Content-Type to a body unless told to send none.
  if (r.body && !r.headers.some(([k]) => k.toLowerCase() === 'content-type')) parts.push('-H', "'Content-Type:'");
  if (r.body && r.body.length > 0) {
    const big = r.body.length > 4096;
    const data = big ? `"$(head -c ${r.body.length} /dev/zero | tr '\\0' x)"` : printfBytes(r.body);
    const note = big ? ` # stand-in: the original ${r.body.length}-byte body, as x's` : '';
    return `printf '%b' ${data} | ${parts.join(' ')} --data-binary @-${note}`;
  }
  if (r.body) parts.push('--data-binary', "''");
  return parts.join(' ');
}

/**
 * What a refused request may legitimately write, or the background writes in the meantime, left
 * out of the fingerprint:
 * - audit_outbox: the audit events of refusals (failed logins, refused changes, API-access events
 *   written after the answer) and the columns the shipping job and event handlers update;
 * - notifications: made from audit events by the event handler in the background (an account
 *   locked by failed logins is told by mail) and updated by the delivery job;
 * - login_attempts, login_locks: the throttle of failed logins (lockout counting is the point);
 * - job_leases: the background jobs' leases, taken whatever the request;
 * - password_reset_requests: the rate limit of reset requests counts the refused ones too;
 * - audit_store_size: the embedded audit store's size, which its bounding job measures whatever the request;
 * - api_tokens.last_used_at and last_used_ip, sessions.last_seen_at, users.last_login_at and last_activity_at:
 *   written by a successful authentication, which precedes the refusal of what was asked;
 * - unused `welcome` rows of password_reset_tokens: the event handler makes a new account's link in
 *   the background, after the request that created it (their use stays in the fingerprint).
 */
const EXCLUDED_TABLES = new Set([
  'audit_outbox',
  'notifications',
  'login_attempts',
  'login_locks',
  'job_leases',
  'password_reset_requests',
  'audit_store_size',
  '__drizzle_migrations',
]);
/** Rows left out, as an SQL condition on the rows kept. */
const KEPT_ROWS: Record<string, string> = {
  password_reset_tokens: "purpose <> 'welcome' or used_at is not null",
};
const EXCLUDED_COLUMNS: Record<string, string[]> = {
  api_tokens: ['last_used_at', 'last_used_ip'],
  sessions: ['last_seen_at'],
  users: ['last_login_at', 'last_activity_at'],
};

const statements = new WeakMap<Client, string>();

/** One statement that reads every fingerprinted table: a row per table, its rows quoted and joined. */
async function fingerprintSql(db: Client): Promise<string> {
  const known = statements.get(db);
  if (known) return known;
  const tables = await db.execute(
    "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name",
  );
  const parts: string[] = [];
  for (const row of tables.rows) {
    const table = String(row.name);
    if (EXCLUDED_TABLES.has(table)) continue;
    const info = await db.execute(`pragma table_info("${table}")`);
    const skip = new Set(EXCLUDED_COLUMNS[table] ?? []);
    const cols = info.rows.map((r) => String(r.name)).filter((c) => !skip.has(c));
    const line = cols.map((c) => `quote("${c}")`).join(" || ',' || ");
    const where = KEPT_ROWS[table] ? ` where ${KEPT_ROWS[table]}` : '';
    parts.push(
      `select '${table}' as t, count(*) as n, group_concat(line, char(10)) as rows from (select ${line} as line ` +
        `from "${table}"${where} order by 1)`,
    );
  }
  const sql = parts.join(' union all ');
  statements.set(db, sql);
  return sql;
}

/** A database fingerprint: per table, its row count and a hash of its rows (less the excluded tables and columns). */
export async function fingerprint(db: Client): Promise<Record<string, string>> {
  const result = await db.execute(await fingerprintSql(db));
  const out: Record<string, string> = {};
  for (const r of result.rows)
    out[String(r.t)] = `${String(r.n)}:${createHash('sha256')
      .update(String(r.rows ?? ''))
      .digest('hex')
      .slice(0, 16)}`;
  return out;
}

/** The tables whose fingerprint differs. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((t) => before[t] !== after[t]);
}

/**
 * Recognising a database that cannot serve now (docs/operations.md, "Fault drills"), the caller's 503 with
 * Retry-After, never a 500; the same request may succeed a moment later:
 * - busy: locked by another connection beyond the busy wait (SQLITE_BUSY, SQLITE_LOCKED; the embedded
 *   engine and libSQL over HTTP report the same codes). Nothing was written.
 * - out of reach: a remote database (sqld, Turso) whose HTTP request failed (refused, reset, lost on
 *   the way) or that a gateway in front of it answered 502, 503 or 504. A write whose answer was lost
 *   may have been made.
 */
import { ProblemError } from '../http/problem.js';

/** Seconds a client is asked to wait before retrying after a busy database. */
export const DATABASE_BUSY_RETRY_AFTER_S = 2;

const BUSY_CODE = /^SQLITE_(BUSY|LOCKED)/;
const BUSY_MESSAGE = /\b(database is locked|database table is locked|SQLITE_BUSY|SQLITE_LOCKED)\b/i;

/** Whether `err` (or one of its causes: drizzle wraps the client's error) is a busy or locked database. */
export function isDatabaseBusy(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && BUSY_CODE.test(code)) return true;
    if (BUSY_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/** The 503 of a busy database, with Retry-After. */
export function databaseBusyProblem(cause: unknown): ProblemError {
  return new ProblemError('SERVICE_UNAVAILABLE', {
    detail: 'the database is busy: try again shortly',
    headers: { 'Retry-After': String(DATABASE_BUSY_RETRY_AFTER_S) },
    cause,
  });
}

/** A remote database out of reach (thrown by `databaseFetch`; drizzle may wrap it, as its cause). */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}

/**
 * The libSQL client's fetch for a remote database: a request that does not reach it, or that a gateway
 * in front of it answers 502, 503 or 504, throws DatabaseUnreachableError (the cause kept), which the app
 * answers 503 rather than 500. Anything else (the database's own errors) passes as it is.
 */
export async function databaseFetch(request: Request): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(request);
  } catch (err) {
    throw new DatabaseUnreachableError(`the database cannot be reached: ${errorText(err)}`, { cause: err });
  }
  if (res.status === 502 || res.status === 503 || res.status === 504) {
    await res.body?.cancel();
    throw new DatabaseUnreachableError(`the database cannot be reached: its gateway answered HTTP ${res.status}`);
  }
  return res;
}

/** An error's message with its cause's (Node's fetch says "fetch failed", its cause ECONNREFUSED...). */
function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message;
}

/** The DatabaseUnreachableError in `err`'s chain of causes, if any. */
export function databaseUnreachable(err: unknown): DatabaseUnreachableError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++)
    if (e instanceof DatabaseUnreachableError) return e;
  return undefined;
}

/** The 503 of a database out of reach, with Retry-After; its log line says why (never the URL's secrets). */
export function databaseUnreachableProblem(err: DatabaseUnreachableError): ProblemError {
  return new ProblemError('SERVICE_UNAVAILABLE', {
    detail: 'the database cannot be reached: try again shortly',
    headers: { 'Retry-After': String(DATABASE_BUSY_RETRY_AFTER_S) },
    cause: err,
    log: { msg: 'the database cannot be reached', fields: { cause: 'DATABASE_UNREACHABLE', reason: err.message } },
  });
}

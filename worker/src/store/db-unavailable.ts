/**
 * Recognising a database that is there but cannot serve now: locked by another connection beyond
 * the busy wait (SQLITE_BUSY, SQLITE_LOCKED; the embedded engine and libSQL over HTTP report the
 * same codes). Such a failure is the caller's 503 with Retry-After, never a 500 (docs/operations.md, "Fault drills"):
 * nothing was written, and the same request may succeed a moment later.
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

/**
 * The ISO 8601 form of a time (milliseconds since the epoch) in answers and log lines. Formatting a
 * Date is a measurable part of a small answer (GET /v4/users/me shows four times; every log line one,
 * and lines come many to a millisecond under load), and the same times come back again and again (an
 * account's last login, a session's expiry): the forms of the last few thousand are kept.
 */
const MAX_KEPT = 4096;
const kept = new Map<number, string>();
/** The last time asked (log lines: many to a millisecond), answered without the map's hashing. */
let lastMs = Number.NaN;
let lastIso = '';

/** `new Date(ms).toISOString()`, remembered. Throws a RangeError for an invalid time, as Date does. */
export function isoTime(ms: number): string {
  if (ms === lastMs) return lastIso;
  let iso = kept.get(ms);
  if (iso === undefined) {
    iso = new Date(ms).toISOString();
    if (kept.size >= MAX_KEPT) kept.clear();
    kept.set(ms, iso);
  }
  lastMs = ms;
  lastIso = iso;
  return iso;
}

/** isoTime, or null for no time. */
export function isoOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : isoTime(ms);
}

/** The retry schedule of the jobs that retry a row (log shipping, mail delivery). */

/** Where a backoff starts and where it stops growing. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/**
 * The wait before retry number `attempts`: `baseMs` doubling per attempt up to `maxMs`, with "equal jitter" (half
 * fixed, half random), so that rows that failed together do not all come back at once.
 */
export function backoffMs(b: Backoff, attempts: number, random: () => number = Math.random): number {
  const ceiling = Math.min(b.maxMs, b.baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/**
 * The one poll of the suites: a test waits for what it can observe (a row, a mail, a log line, an
 * answer), never for a fixed time (docs/testing.md, "Waiting for events").
 */

export interface EventuallyOptions {
  /** How long to keep trying (default 10 s): a bound for a loaded machine, not the expected time. */
  timeoutMs?: number;
  /** What is awaited, in words, for the error on timeout ("the mail to alice"). */
  what: string;
  /** The first pause between tries (default 20 ms); it grows by half each try, up to 250 ms. */
  intervalMs?: number;
}

/**
 * Calls `fn` until it returns a value other than undefined, null or false, and returns that value.
 * A try that throws (an `expect` that does not hold yet) is tried again; on timeout the error names
 * `what` and carries the last try's error, if any.
 */
export async function eventually<T>(
  fn: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  o: EventuallyOptions,
): Promise<T> {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const until = performance.now() + timeoutMs;
  let pause = o.intervalMs ?? 20;
  let last: unknown;
  for (let tries = 1; ; tries++) {
    try {
      const value = await fn();
      if (value !== undefined && value !== null && value !== false) return value;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (performance.now() >= until) {
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`${o.what}: not within ${timeoutMs} ms (${tries} tries)${why}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(0, until - performance.now()))));
    pause = Math.min(250, Math.ceil(pause * 1.5));
  }
}

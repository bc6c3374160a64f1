/** Work that runs after the response: `waitUntil` on the edge, a detached promise on Node. */
import type { Context } from 'hono';
import type { AppEnv } from './context.js';
import type { BackgroundWork } from './scope.js';

export type { BackgroundWork } from './scope.js';

/**
 * How long after its handler returns a request's background work starts on the edge. workerd writes the
 * answer out in its own event loop after the handler returns, and work started on a shorter timer (0 or
 * 1 ms) ran before that write: with it, a Bearer request after a 2 s pause (which refreshes the settings
 * and writes the API-access batch) answered in 19 ms at the median under `wrangler dev`, its liveness in
 * 15; with 20 ms, 11 and 11 (architecture.md §6, "A far database"). The Node host starts it right after
 * the turn of the event loop that wrote the answer.
 */
const EDGE_AFTER_RESPONSE_MS = 20;

/**
 * Runs `work` without delaying the response: started once the handler has returned its answer (edge:
 * within `waitUntil`); failures are logged, never thrown.
 */
export function inBackground(c: Context<AppEnv>, work: BackgroundWork): void {
  // The Node host has no ExecutionContext: the promise simply runs on. Asked anyway, Hono throws (an
  // Error and its stack per request: a twelfth of a Bearer request's CPU), so the host says so instead.
  let ctx: { waitUntil(p: Promise<unknown>): void } | undefined;
  if (!c.var.deps.crossRequestWaits) {
    try {
      ctx = c.executionCtx;
    } catch {
      ctx = undefined; // no ExecutionContext (a test's app.fetch)
    }
  }
  // Node: once this turn of the event loop has written the answer (setImmediate), where a 0 ms timer
  // had the process sleep and wake again for it (a wake per login, taking the core from the hash).
  const later = new Promise<void>((resolve) => {
    if (ctx) setTimeout(resolve, EDGE_AFTER_RESPONSE_MS);
    else if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  })
    .then(work)
    .catch((err: unknown) => c.var.logger.error('background work failed', { err }));
  ctx?.waitUntil(later);
}

/** Whether a response may have written an event: a change (not a read), or a refused login (401, 403). */
export function mayHaveWrittenEvents(c: Context<AppEnv>): boolean {
  const method = c.req.method;
  return (
    !(method === 'GET' || method === 'HEAD' || method === 'OPTIONS') || c.res.status === 401 || c.res.status === 403
  );
}

/**
 * The after-response kick of one instance (the notification and webhook senders): with OUTBOX_CONTEXT_DETACH,
 * after a response that may have written events, runs `work` in the background. One run at a time, at most one
 * per `intervalMs`; a request during a run asks for one more after it, so a burst costs a couple of runs, not
 * one per request. `work` answering false ends the runs (nothing to do).
 */
export function coalescedKicker(
  work: (c: Context<AppEnv>) => Promise<unknown>,
  intervalMs = 0,
): (c: Context<AppEnv>) => void {
  const state = { running: false, again: false, last: 0 };
  return (c) => {
    if (!c.var.scope?.config.get('OUTBOX_CONTEXT_DETACH') || !mayHaveWrittenEvents(c)) return;
    if (state.running) {
      state.again = true;
      return;
    }
    state.running = true;
    inBackground(c, async () => {
      try {
        do {
          state.again = false;
          const wait = state.last + intervalMs - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          state.last = Date.now();
          if ((await work(c)) === false) return;
        } while (state.again);
      } finally {
        state.running = false;
      }
    });
  };
}

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
 * 15; with 20 ms, 11 and 11 (architecture.md §6, "A far database"). The Node host starts it on the next
 * timer turn (0 ms).
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
  const later = new Promise<void>((resolve) => setTimeout(resolve, ctx ? EDGE_AFTER_RESPONSE_MS : 0))
    .then(work)
    .catch((err: unknown) => c.var.logger.error('background work failed', { err }));
  ctx?.waitUntil(later);
}

/** Work that runs after the response: `waitUntil` on the edge, a detached promise on Node. */
import type { Context } from 'hono';
import type { AppEnv } from './context.js';

/** Runs `work` without delaying the response; failures are logged, never thrown. */
export function inBackground(c: Context<AppEnv>, work: Promise<unknown> | undefined): void {
  if (!work) return;
  const guarded = work.catch((err: unknown) => c.var.logger.error('background work failed', { err }));
  try {
    c.executionCtx.waitUntil(guarded);
  } catch {
    // No ExecutionContext (Node host): the promise simply runs on.
  }
}

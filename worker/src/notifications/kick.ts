/**
 * With OUTBOX_CONTEXT_DETACH (the default), a response that may have written events is followed,
 * after the response and detached from it (`waitUntil` on the edge), by a run of the event handler
 * and of delivery, so a lockout's mail leaves within moments instead of at the next job run. At
 * most one run per KICK_INTERVAL_MS per instance: requests during a run ask for one more run after
 * it, so a burst costs a couple of runs, not one per request. The jobs remain the safety net (a kick
 * lost with its isolate is done by the next job run; leases and dedupe keys make overlaps harmless).
 */
import type { Context } from 'hono';
import { coalescedKicker } from '../http/background.js';
import type { AppEnv } from '../http/context.js';
import { loadSavedSettings } from '../store/index.js';
import { deliverDue } from './deliver.js';
import { handleEvents } from './handler.js';

/** Least time between two kicked runs of one instance. */
export const KICK_INTERVAL_MS = 250;

export interface NotificationKicker {
  /** Called after every response; starts (or asks for) a detached run when it may matter. */
  afterResponse(c: Context<AppEnv>): void;
}

/** The kicker of one instance (one app): the coalescing is http/background.ts's coalescedKicker. */
export function createNotificationKicker(intervalMs = KICK_INTERVAL_MS): NotificationKicker {
  const runOnce = async (c: Context<AppEnv>) => {
    const { scope, deps } = c.var;
    // The configuration may have changed since the request began: read it as a job would. Delivery
    // reads the live clock for each claim, send and write (unlike the job, which fixes one instant).
    const run = { ...scope, config: await deps.config.current(() => loadSavedSettings(scope.db)) };
    if (run.config.get('EVENT_HANDLING')) await handleEvents(run);
    await deliverDue(run);
  };
  return { afterResponse: coalescedKicker(runOnce, intervalMs) };
}

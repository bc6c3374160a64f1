/**
 * With OUTBOX_CONTEXT_DETACH (the default), a response that may have written events is followed,
 * after the response and detached from it (`waitUntil` on the edge), by a run of the event handler
 * and of delivery, so a lockout's mail leaves within moments instead of at the next job run. At
 * most one run per KICK_INTERVAL_MS per instance: requests during a run ask for one more run after
 * it, so a burst costs a couple of runs, not one per request. The jobs remain the safety net (a kick
 * lost with its isolate is done by the next job run; leases and dedupe keys make overlaps harmless).
 */
import type { Context } from 'hono';
import { inBackground } from '../http/background.js';
import type { AppEnv } from '../http/context.js';
import { loadSavedSettings } from '../store/index.js';
import { deliverDue } from './deliver.js';
import { handleEvents } from './handler.js';

/** Least time between two kicked runs of one instance. */
export const KICK_INTERVAL_MS = 250;

/** Whether a response may have written an event a handler reads: a change, or a refused login. */
function mayHaveWrittenEvents(c: Context<AppEnv>): boolean {
  const method = c.req.method;
  return (
    !(method === 'GET' || method === 'HEAD' || method === 'OPTIONS') || c.res.status === 401 || c.res.status === 403
  );
}

export interface NotificationKicker {
  /** Called after every response; starts (or asks for) a detached run when it may matter. */
  afterResponse(c: Context<AppEnv>): void;
}

/** The kicker of one instance (one app). */
export function createNotificationKicker(intervalMs = KICK_INTERVAL_MS): NotificationKicker {
  const state = { running: false, again: false, last: 0 };
  const runOnce = async (c: Context<AppEnv>) => {
    const { scope, deps } = c.var;
    // The configuration may have changed since the request began: read it as a job would. Delivery
    // reads the live clock for each claim, send and write (unlike the job, which fixes one instant).
    const run = { ...scope, config: await deps.config.current(() => loadSavedSettings(scope.db)) };
    if (run.config.get('EVENT_HANDLING')) await handleEvents(run);
    await deliverDue(run);
  };
  return {
    afterResponse(c) {
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
            await runOnce(c);
          } while (state.again);
        } finally {
          state.running = false;
        }
      });
    },
  };
}

/**
 * After a response that may have written events (a change, a refused login), and detached from it (`waitUntil`
 * on the edge), a run of the webhook sender, so deliveries leave within moments rather than at the next job run
 * (the job remains the safety net: a kick lost with its isolate is sent by the job). An instance without an
 * enabled subscription (its snapshot, store.ts) sends nothing and reads no delivery; one run at a time per
 * instance, a request during a run asks for one more after it.
 */
import type { Context } from 'hono';
import { inBackground } from '../http/background.js';
import type { AppEnv } from '../http/context.js';
import { deliverDue } from './sender.js';
import { anyEnabled } from './store.js';

export function createWebhookKicker(): (c: Context<AppEnv>) => void {
  const state = { running: false, again: false };
  return (c) => {
    const method = c.req.method;
    const read = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
    if ((read && c.res.status !== 401 && c.res.status !== 403) || !c.var.scope?.config.get('OUTBOX_CONTEXT_DETACH'))
      return;
    if (state.running) {
      state.again = true;
      return;
    }
    state.running = true;
    inBackground(c, async () => {
      try {
        do {
          state.again = false;
          if (!(await anyEnabled(c.var.scope.db))) return;
          await deliverDue(c.var.scope);
        } while (state.again);
      } finally {
        state.running = false;
      }
    });
  };
}

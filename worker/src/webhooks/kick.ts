/**
 * After a response that may have written events (a change, a refused login), and detached from it (`waitUntil`
 * on the edge), a run of the webhook sender, so deliveries leave within moments rather than at the next job run
 * (the job remains the safety net: a kick lost with its isolate is sent by the job). An instance without an
 * enabled subscription (its snapshot, store.ts) sends nothing and reads no delivery; one run at a time per
 * instance, a request during a run asks for one more after it (http/background.ts, coalescedKicker).
 */
import type { Context } from 'hono';
import { coalescedKicker } from '../http/background.js';
import type { AppEnv } from '../http/context.js';
import { deliverDue } from './sender.js';
import { anyEnabled } from './store.js';

export function createWebhookKicker(): (c: Context<AppEnv>) => void {
  return coalescedKicker(async (c) => {
    if (!(await anyEnabled(c.var.scope.db))) return false;
    await deliverDue(c.var.scope);
  });
}

/**
 * OUTBOX_CONTEXT_DETACH (architecture.md §5): a request that may have written audit events kicks the
 * shipping of the outbox after its response (edge: `waitUntil`; Node: a detached promise), so events
 * reach the log store within seconds instead of at the next scheduled run. The kick takes the
 * shipping job's lease like any run (one shipper at a time across instances) and happens at most
 * once a second per instance; the schedule still ships everything a kick did not.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import { inBackground } from '../http/background.js';
import { runJob } from '../jobs/index.js';
import { shipAuditOutbox } from './jobs.js';
import { logstoreTarget } from './target.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A kicker for one instance: call it after each response. */
export function outboxKicker(minIntervalMs = 1_000): (c: Context<AppEnv>) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (c) => {
    const { config, bridge } = c.var.scope;
    // Unsafe methods change things (logins, changes); per-request credentials write API-access events.
    const mayHaveEvents =
      !SAFE.has(c.req.method) || c.var.principal?.method === 'basic' || c.var.principal?.method === 'bearer';
    if (!mayHaveEvents || !bridge || !config.get('OUTBOX_CONTEXT_DETACH') || !config.get('EVENT_HANDLING')) return;
    if (!logstoreTarget(config) || Date.now() - last < minIntervalMs) return;
    last = Date.now();
    inBackground(c, () => runJob(c.var.scope, shipAuditOutbox, { ignorePace: true }));
  };
}

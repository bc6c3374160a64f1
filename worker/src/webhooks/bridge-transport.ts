/**
 * The transport of a subscription with `delivery: bridge` (docs/webhooks.md, "Targets"): the bridge's POST
 * /v1/webhooks/deliver sends the signed request, verifying a receiver behind a private CA with its own CA bundle
 * (BRIDGE_WEBHOOK_CA) and only to the hosts of its BRIDGE_WEBHOOK_HOSTS, as the error-tracking relay does
 * (errtrack/deliver.ts). Its answers become the attempt's answer and its problems the attempt's reason, so the
 * retry schedule, Retry-After and 410 apply as to a direct delivery.
 */
import { WebhookDeliverResponseSchema } from '../../../schema/bridge/index.js';
import type { BridgeClient } from '../bridge/client.js';
import { ProblemError } from '../http/problem.js';
import { bridgeTargetRefusal } from './targets.js';
import type { WebhookFetch } from './transport.js';

/** Extra time given to the bridge beyond the attempt's own timeout, so the bridge's 504 comes first. */
const BRIDGE_MARGIN_MS = 1500;

/** The WebhookFetch through `bridge` (undefined: none configured, every attempt fails saying so). */
export function bridgeWebhookFetch(bridge: BridgeClient | undefined): WebhookFetch {
  return async (req) => {
    if (!bridge) throw new Error('refused: delivery through the bridge, but no bridge is configured (AUTH_BRIDGE_URL)');
    const refusal = bridgeTargetRefusal(req.url);
    if (refusal) throw new Error(`refused: ${refusal}`);
    try {
      const a = await bridge.call(
        '/v1/webhooks/deliver',
        { url: req.url, headers: req.headers, body: req.body, timeoutMs: req.timeoutMs },
        WebhookDeliverResponseSchema,
        req.timeoutMs + BRIDGE_MARGIN_MS,
      );
      return { status: a.status, retryAfter: a.retryAfter, body: a.body, durationMs: a.durationMs };
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
      const cause = err.extensions.cause;
      if (cause === 'UPSTREAM_TIMEOUT') throw Object.assign(new Error('timeout'), { name: 'TimeoutError' });
      throw new Error(`bridge: ${err.detail ?? err.title}${typeof cause === 'string' ? ` (${cause})` : ''}`);
    }
  };
}

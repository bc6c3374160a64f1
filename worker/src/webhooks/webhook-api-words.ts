/**
 * The words of /v4/webhooks in the API description (routes.ts): its summaries and descriptions. The document is
 * generated at build time on the Node host (architecture.md §10), so the edge script needs none of them:
 * wrangler.toml's [alias] replaces this module there with worker/edge-aliases/webhook-api-words.js (empty
 * strings), as it replaces the OpenAPI generator (docs/performance.md, "The edge bundle").
 */
import { SEALING_UNAVAILABLE } from '../store/secret-box.js';
import { TEST_EVENT_TYPE } from './payload.js';
import { DISABLE_AFTER_MS, RETRY_SCHEDULE_MS } from './sender.js';

const SCHEDULE_WORDS = `immediately, then after ${RETRY_SCHEDULE_MS.map((ms) =>
  ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`,
).join(', ')}`;

/** Keyed d<n> (a description) and s<n> (a summary), in the order routes.ts uses them. */
export const W: Record<string, string> = {
  d1: 'Omitted fields keep their values. Enabling a disabled subscription clears why.',
  d2: 'deliveries not yet delivered nor given up',
  d3: 'the event time of the oldest of them',
  d4: 'since when its attempts fail (null: the last attempt succeeded)',
  d5: 'during a rotation: until when the previous secret signs too',
  d6: 'the signing secret, `whsec_` and base64 of 32 random bytes: shown this once, never again',
  d7: 'the webhook-id header: the same on every attempt',
  d8: 'pending: when the next attempt is due',
  d9: 'HTTP status; null when no answer came',
  d10: 'the first 1 KiB of the last answer, or why none came (timeout, refused address, ...)',
  d11: 'at most this many (50)',
  d12: 'the subscription',
  s13: 'Webhook subscriptions',
  d14: 'Every subscription with its queue. Signing secrets are never returned.',
  d15: 'the subscriptions',
  s16: 'Add a webhook subscription',
  d17: 'the subscription and its secret',
  s18: 'Read a webhook subscription',
  d19: 'The signing secret is never returned.',
  s20: 'Change a webhook subscription',
  d21: '422 naming `url` when the new target is refused, `delivery` when it is `bridge` and no bridge is configured.',
  s22: 'Remove a webhook subscription',
  d23: 'Its deliveries, sent or not, go with it.',
  d24: 'removed',
  s25: 'Rotate the signing secret of a webhook subscription',
  d26: 'the new secret',
  s27: 'Send a test event to a webhook subscription',
  d28: 'queued',
  s29: 'Recent deliveries of a webhook subscription',
  d30: 'the deliveries',
  s31: 'Send a delivery again',
  d32: 'queued',
  d33:
    'audit event types (docs/architecture.md §5.1), `<stream>.*` for every type of a stream, or `*` for all; ' +
    'the api_access stream is never delivered',
  d34:
    'https:// (http:// only for AUTH_WEBHOOK_ALLOW_HTTP_HOSTS); no user name or password; no private, ' +
    'loopback, link-local or metadata address unless AUTH_WEBHOOK_ALLOW_PRIVATE opens it (docs/webhooks.md)',
  d35:
    'why the service disabled it: gone (the receiver answered 410), failing (its deliveries failed for ' +
    `${DISABLE_AFTER_MS / 86_400_000} days); null otherwise`,
  d36: "the event's time",
  d37:
    'Answers the signing secret once (`secret`); keep it, it is never shown again. Deliveries follow the ' +
    `Standard Webhooks specification (docs/webhooks.md); attempts: ${SCHEDULE_WORDS}. 422 naming \`url\` when ` +
    'the target is refused. ' +
    SEALING_UNAVAILABLE,
  d38:
    'Answers the new secret once. For the next 24 hours the previous secret signs too: `webhook-signature` ' +
    'carries both signatures, space-separated, so the receiver can switch at its own pace. ' +
    SEALING_UNAVAILABLE,
  d39:
    `Queues one \`${TEST_EVENT_TYPE}\` event for this subscription only (enabled or not, it is sent while ` +
    'enabled), delivered like any other; its delivery is in the list of deliveries.',
  d40:
    'Newest first, with their last attempt (time, status, duration, the first bytes of the answer). Delivered ' +
    'and given-up deliveries are kept 7 days.',
  d42:
    'how deliveries leave: `direct` (from the service) or `bridge` (through the on-prem bridge, for a receiver ' +
    'behind a private CA: the bridge verifies it with BRIDGE_WEBHOOK_CA and sends only to its ' +
    'BRIDGE_WEBHOOK_HOSTS; https:// only). `bridge` needs a bridge (AUTH_BRIDGE_URL): 422 naming `delivery` ' +
    'without one (docs/webhooks.md, "Targets")',
  d41:
    'Queues the delivery again at once with a fresh retry schedule and the same `webhook-id` (a receiver that ' +
    'got it already recognises it).',
};

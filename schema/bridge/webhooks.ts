/**
 * The bridge's webhook relay (docs/webhooks.md, "Targets"; docs/operations-bridge.md): the worker hands the
 * bridge one signed webhook of a subscription with `delivery: bridge`, and the bridge POSTs it over HTTPS,
 * verifying the receiver's certificate with its own CA bundle (BRIDGE_WEBHOOK_CA) plus the system roots. The
 * bridge sends only to the hosts of its BRIDGE_WEBHOOK_HOSTS (names, addresses or CIDR ranges), checked on
 * the resolved addresses, and connects to the address it checked: it is no proxy into the on-prem network.
 *
 * Any HTTP answer of the receiver, 2xx or not, is an outcome (200 with its status). Failures are problems:
 * 403 WEBHOOK_TARGET_REFUSED (not allowed), 502 UPSTREAM_UNAVAILABLE / UPSTREAM_TLS, 504 UPSTREAM_TIMEOUT.
 */
import { z } from 'zod';

/** The bytes of an answer the bridge reads and returns (the worker's ANSWER_BYTES). */
export const WEBHOOK_ANSWER_BYTES = 1024;

/** The largest webhook body the relay takes. */
export const WEBHOOK_RELAY_MAX_BYTES = 1_048_576;

/** POST /v1/webhooks/deliver. */
export const WebhookDeliverRequestSchema = /* @__PURE__ */ (() =>
  z.object({
    /** The subscription's URL: https:// only (the relay exists to verify TLS with a private CA). */
    url: z
      .string()
      .max(2048)
      .regex(/^https:\/\/[^\s/?#]+([/?][^\s#]*)?$/i, 'an https:// URL'),
    /** The request's headers (content-type, webhook-id, webhook-timestamp, webhook-signature, user-agent). */
    headers: z.record(z.string().max(64), z.string().max(4096)).refine((h) => Object.keys(h).length <= 20, {
      message: 'at most 20 headers',
    }),
    /** The signed body, as sent. */
    body: z.string().max(WEBHOOK_RELAY_MAX_BYTES),
    /** How long the call may take, connection to the answer's last byte read. */
    timeoutMs: z.number().int().min(100).max(60_000),
  }))();
export type WebhookDeliverRequest = z.infer<typeof WebhookDeliverRequestSchema>;

/** The receiver's answer: status, Retry-After, its first WEBHOOK_ANSWER_BYTES bytes, and how long it took. */
export const WebhookDeliverResponseSchema = z.object({
  status: z.number().int().min(100).max(599),
  retryAfter: z.string().max(256).nullable(),
  body: z.string().max(WEBHOOK_ANSWER_BYTES),
  durationMs: z.number().int().min(0),
});
export type WebhookDeliverResponse = z.infer<typeof WebhookDeliverResponseSchema>;

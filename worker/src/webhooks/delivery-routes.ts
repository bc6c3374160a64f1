/**
 * The deliveries of a webhook subscription (docs/webhooks.md): a test event, the recent deliveries and a
 * redelivery (the subscriptions themselves: routes.ts, which registers these after its own).
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App, AppEnv } from '../http/context.js';
import { isoOrNull, isoTime } from '../http/iso-time.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { W } from './webhook-api-words.js';
import { type DeliveryRow, queueTestEvent, recentDeliveries, redeliver, webhookById } from './store.js';

const Delivery = z
  .object({
    id: z.string().openapi({ description: W.d7 }),
    type: z.string(),
    eventId: z.string(),
    at: z.iso.datetime().openapi({ description: W.d36 }),
    state: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.int(),
    nextAttemptAt: z.iso.datetime().nullable().openapi({ description: W.d8 }),
    lastAttemptAt: z.iso.datetime().nullable(),
    lastStatus: z.int().nullable().openapi({ description: W.d9 }),
    lastDurationMs: z.int().nullable(),
    lastResponse: z.string().nullable().openapi({
      description: W.d10,
    }),
    deliveredAt: z.iso.datetime().nullable(),
    failedAt: z.iso.datetime().nullable(),
  })
  .openapi('WebhookDelivery');

export const IdParam = z.object({ id: z.string().min(1).max(64) });
const DeliveryParam = IdParam.extend({ deliveryId: z.string().min(1).max(64) });
const Recent = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).openapi({ description: W.d11 }),
});

function toDelivery(d: DeliveryRow): z.infer<typeof Delivery> {
  const state = d.deliveredAt !== null ? 'delivered' : d.failedAt !== null ? 'failed' : 'pending';
  return {
    id: d.id,
    type: d.type,
    eventId: d.eventId,
    at: isoTime(d.at),
    state,
    attempts: d.attempts,
    nextAttemptAt: state === 'pending' ? isoTime(d.nextAttemptAt) : null,
    lastAttemptAt: isoOrNull(d.lastAttemptAt),
    lastStatus: d.lastStatus,
    lastDurationMs: d.lastDurationMs,
    lastResponse: d.lastResponse,
    deliveredAt: isoOrNull(d.deliveredAt),
    failedAt: isoOrNull(d.failedAt),
  };
}

export const path = '/v4/webhooks';
export const base = { tags: ['webhooks'] };
// The subscriptions' access too (routes.ts imports it).
export const read = adminOnly(superAccess.allowed, 'settings:read');
export const write = (verb: string) => ({ ...adminOnly(superAccess.refused(verb), 'settings:write'), stepUp: true });

const testRoute = protectedRoute(write('send webhook test events'), {
  ...base,
  method: 'post',
  operationId: 'sendWebhookTestEvent',
  path: `${path}/{id}/test`,
  summary: W.s27,
  description: W.d39,
  request: { params: IdParam },
  responses: {
    202: {
      description: W.d28,
      content: { 'application/json': { schema: z.object({ deliveryId: z.string() }) } },
    },
    ...problemResponses(404),
  },
});
const deliveriesRoute = protectedRoute(read, {
  ...base,
  method: 'get',
  operationId: 'listWebhookDeliveries',
  path: `${path}/{id}/deliveries`,
  summary: W.s29,
  description: W.d40,
  request: { params: IdParam, query: Recent },
  responses: {
    200: {
      description: W.d30,
      content: { 'application/json': { schema: z.object({ items: z.array(Delivery) }) } },
    },
    ...problemResponses(404),
  },
});
const redeliverRoute = protectedRoute(write('redeliver webhooks'), {
  ...base,
  method: 'post',
  operationId: 'redeliverWebhook',
  path: `${path}/{id}/deliveries/{deliveryId}/redeliver`,
  summary: W.s31,
  description: W.d41,
  request: { params: DeliveryParam },
  responses: {
    202: { description: W.d32, content: { 'application/json': { schema: Delivery } } },
    ...problemResponses(404),
  },
});

/** Registers the deliveries' operations of /v4/webhooks/{id}. */
export function registerWebhookDeliveries(app: App): void {
  const byId = (c: Context<AppEnv>) => webhookById(c.var.scope.db, validated(c, 'param', IdParam).id);

  app.openapi(testRoute, async (c) => {
    const row = await byId(c);
    const id = await queueTestEvent(c.var.scope.db, row.id, c.var.scope.now());
    return c.json({ deliveryId: id }, 202);
  });

  app.openapi(deliveriesRoute, async (c) => {
    const row = await byId(c);
    const { limit } = validated(c, 'query', Recent);
    const items = await recentDeliveries(c.var.scope.db, row.id, limit);
    return c.json({ items: items.map(toDelivery) }, 200);
  });

  app.openapi(redeliverRoute, async (c) => {
    const { id, deliveryId } = validated(c, 'param', DeliveryParam);
    const updated = await redeliver(c.var.scope.db, id, deliveryId, c.var.scope.now());
    return c.json(toDelivery(updated), 202);
  });
}

/**
 * /v4/webhooks (docs/webhooks.md): the subscriptions, administered by admins, each change audited
 * (crud_admin); their signing secrets shown once (at creation and rotation), never returned otherwise; a test
 * event, a redelivery, the recent deliveries and the queue.
 */
import { z } from '@hono/zod-openapi';
import { and, eq } from 'drizzle-orm';
import type { Context } from 'hono';
import { webhookDeliveries, webhooks } from '../../../schema/index.js';
import { auditInsert, type AuditEventType } from '../audit/events.js';
import { EVENT_CATALOGUE, type AuditStream } from '../audit/catalogue.js';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App, AppEnv } from '../http/context.js';
import { isoOrNull, isoTime } from '../http/iso-time.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { sealSecret } from '../store/secret-box.js';
import { W } from './webhook-api-words.js';
import { TEST_EVENT_TYPE } from './payload.js';
import { newSigningSecret } from './signature.js';
import {
  type DeliveryRow,
  forgetSnapshot,
  listWebhooks,
  queueFigures,
  type QueueFigures,
  reasonOf,
  recentDeliveries,
  webhookById,
  type WebhookRow,
} from './store.js';
import { bridgeTargetRefusal, checkTarget, targetRules } from './targets.js';

/** How long the previous secret still signs after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

const STREAMS: readonly AuditStream[] = [
  'user_activity',
  'crud_user',
  'crud_admin',
  'ext_service_access',
  'data_lifecycle',
];
/** What a subscription may name: a catalogue type (not api_access's), `<stream>.*`, or `*`. */
const DELIVERABLE = new Set<string>([
  '*',
  ...STREAMS.map((s) => `${s}.*`),
  ...Object.entries(EVENT_CATALOGUE)
    .filter(([, spec]) => !(spec.streams as readonly string[]).includes('api_access'))
    .map(([type]) => type),
]);

const EventTypes = z
  .array(
    z.string().refine((t) => DELIVERABLE.has(t), 'a type of the audit catalogue (not api_access), <stream>.* or *'),
  )
  .min(1)
  .max(100)
  .openapi({
    description: W.d33,
    example: ['user_activity.*', 'user.created'],
  });
const Fields = {
  url: z.string().min(1).max(2048).openapi({
    description: W.d34,
    example: 'https://hooks.example.com/auth',
  }),
  eventTypes: EventTypes,
  enabled: z.boolean(),
  description: z.string().max(500),
  delivery: z.enum(['direct', 'bridge']).openapi({ description: W.d42 }),
};
const Create = z
  .object({
    ...Fields,
    enabled: Fields.enabled.default(true),
    description: Fields.description.default(''),
    delivery: Fields.delivery.default('direct'),
  })
  .strict()
  .openapi('WebhookCreate');
const Patch = z.object(Fields).partial().strict().openapi({ description: W.d1 }).openapi('WebhookPatch');

const Queue = z
  .object({
    depth: z.int().openapi({ description: W.d2 }),
    oldestAt: z.iso.datetime().nullable().openapi({ description: W.d3 }),
    oldestAgeSeconds: z.int().nullable(),
  })
  .openapi('WebhookQueue');
const Public = z
  .object({
    id: z.string(),
    url: z.string(),
    eventTypes: z.array(z.string()),
    enabled: z.boolean(),
    description: z.string(),
    delivery: z.enum(['direct', 'bridge']).openapi({ description: W.d42 }),
    disabledReason: z.enum(['gone', 'failing']).nullable().openapi({
      description: W.d35,
    }),
    disabledAt: z.iso.datetime().nullable(),
    failingSince: z.iso.datetime().nullable().openapi({
      description: W.d4,
    }),
    previousSecretExpiresAt: z.iso.datetime().nullable().openapi({
      description: W.d5,
    }),
    queue: Queue,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('Webhook');
const Secret = z.string().openapi({
  description: W.d6,
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
});
const Created = Public.extend({ secret: Secret }).openapi('WebhookCreated');
const Rotated = z.object({ secret: Secret, previousSecretExpiresAt: z.iso.datetime() }).openapi('WebhookSecretRotated');
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

const IdParam = z.object({ id: z.string().min(1).max(64) });
const DeliveryParam = IdParam.extend({ deliveryId: z.string().min(1).max(64) });
const Recent = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).openapi({ description: W.d11 }),
});

function queueOf(q: QueueFigures | undefined, now: number): z.infer<typeof Queue> {
  const oldestAt = q?.oldestAt ?? null;
  return {
    depth: q?.depth ?? 0,
    oldestAt: isoOrNull(oldestAt),
    oldestAgeSeconds: oldestAt === null ? null : Math.max(0, Math.round((now - oldestAt) / 1000)),
  };
}

function toPublic(r: WebhookRow, q: QueueFigures | undefined, now: number): z.infer<typeof Public> {
  return {
    id: r.id,
    url: r.url,
    eventTypes: r.eventTypes,
    enabled: r.enabled,
    description: r.description,
    delivery: r.delivery,
    disabledReason: reasonOf(r.disabledReason),
    disabledAt: isoOrNull(r.disabledAt),
    failingSince: isoOrNull(r.failingSince),
    previousSecretExpiresAt:
      r.previousSecretEnc && (r.previousSecretUntil ?? 0) > now ? isoOrNull(r.previousSecretUntil) : null,
    queue: queueOf(q, now),
    createdAt: isoTime(r.createdAt),
    updatedAt: isoTime(r.updatedAt),
  };
}

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

const refused = (field: 'url' | 'delivery', why: string) =>
  new ProblemError('VALIDATION', {
    detail: `${field} refused: ${why}`,
    extensions: { errors: [{ location: 'json', path: field, message: why }] },
  });

/**
 * 422 naming `url` when the URL breaks the target rules (webhooks/targets.ts; through the bridge, the bridge's
 * own allow-list judges the address), or `delivery` when it is the bridge and none is configured.
 */
function assertTarget(c: Context<AppEnv>, url: string, delivery: WebhookRow['delivery']): void {
  if (delivery === 'bridge') {
    if (!c.var.scope.bridge)
      throw refused('delivery', 'no bridge is configured (AUTH_BRIDGE_URL), so nothing can be delivered through it');
    const refusal = bridgeTargetRefusal(url);
    if (refusal) throw refused('url', refusal);
    return;
  }
  const checked = checkTarget(url, targetRules(c.var.scope.config));
  if ('refused' in checked) throw refused('url', checked.refused);
}

const audit = (c: Context<AppEnv>, type: AuditEventType, data: Record<string, unknown>) =>
  auditInsert(c.var.scope.db, c.var.scope.now(), {
    stream: 'crud_admin',
    type,
    actor: c.var.principal.user,
    request: c.var.scope.request,
    data,
  });

const one = { description: W.d12, content: { 'application/json': { schema: Public } } };
const path = '/v4/webhooks';
const base = { tags: ['webhooks'] };
// Tokens: the settings scopes, as the other admin records (LDAP servers, identity providers).
const read = adminOnly(superAccess.allowed, 'settings:read');
const write = (verb: string) => ({ ...adminOnly(superAccess.refused(verb), 'settings:write'), stepUp: true });

const listRoute = protectedRoute(read, {
  ...base,
  method: 'get',
  operationId: 'listWebhooks',
  path,
  summary: W.s13,
  description: W.d14,
  responses: {
    200: {
      description: W.d15,
      content: { 'application/json': { schema: z.object({ items: z.array(Public) }) } },
    },
  },
});
const createRoute = protectedRoute(write('add webhook subscriptions'), {
  ...base,
  method: 'post',
  operationId: 'createWebhook',
  path,
  summary: W.s16,
  description: W.d37,
  request: { body: { required: true, content: { 'application/json': { schema: Create } } } },
  responses: {
    201: { description: W.d17, content: { 'application/json': { schema: Created } } },
    ...problemResponses(400, 422, 503),
  },
});
const getRoute = protectedRoute(read, {
  ...base,
  method: 'get',
  operationId: 'getWebhook',
  path: `${path}/{id}`,
  summary: W.s18,
  description: W.d19,
  request: { params: IdParam },
  responses: { 200: one, ...problemResponses(404) },
});
const patchRoute = protectedRoute(write('change webhook subscriptions'), {
  ...base,
  method: 'patch',
  operationId: 'updateWebhook',
  path: `${path}/{id}`,
  summary: W.s20,
  description: W.d21,
  request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: Patch } } } },
  responses: { 200: one, ...problemResponses(400, 404, 422) },
});
const deleteRoute = protectedRoute(write('remove webhook subscriptions'), {
  ...base,
  method: 'delete',
  operationId: 'deleteWebhook',
  path: `${path}/{id}`,
  summary: W.s22,
  description: W.d23,
  request: { params: IdParam },
  responses: { 204: { description: W.d24 }, ...problemResponses(404) },
});
const rotateRoute = protectedRoute(write('rotate webhook secrets'), {
  ...base,
  method: 'post',
  operationId: 'rotateWebhookSecret',
  path: `${path}/{id}/rotate-secret`,
  summary: W.s25,
  description: W.d38,
  request: { params: IdParam },
  responses: {
    200: { description: W.d26, content: { 'application/json': { schema: Rotated } } },
    ...problemResponses(404, 503),
  },
});
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

/** Registers /v4/webhooks. */
export function registerWebhooks(app: App): void {
  const byId = (c: Context<AppEnv>) => webhookById(c.var.scope.db, validated(c, 'param', IdParam).id);
  const answer = async (c: Context<AppEnv>, id: string) => {
    const { db, now } = c.var.scope;
    const [row, queues] = await Promise.all([webhookById(db, id), queueFigures(db)]);
    return toPublic(row, queues.get(id), now());
  };

  app.openapi(listRoute, async (c) => {
    const { db, now } = c.var.scope;
    const [rows, queues] = await Promise.all([listWebhooks(db), queueFigures(db)]);
    return c.json({ items: rows.map((r) => toPublic(r, queues.get(r.id), now())) }, 200);
  });

  app.openapi(createRoute, async (c) => {
    const body = validated(c, 'json', Create);
    assertTarget(c, body.url, body.delivery);
    const { db, config } = c.var.scope;
    const now = c.var.scope.now();
    const secret = newSigningSecret();
    const row: WebhookRow = {
      id: crypto.randomUUID(),
      ...body,
      secretEnc: await sealSecret(config, secret),
      previousSecretEnc: null,
      previousSecretUntil: null,
      failingSince: null,
      disabledReason: null,
      disabledAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await db.batch([
      db.insert(webhooks).values(row),
      audit(c, 'webhook.created', {
        webhookId: row.id,
        url: row.url,
        eventTypes: row.eventTypes,
        delivery: row.delivery,
      }),
    ]);
    forgetSnapshot();
    return c.json({ ...toPublic(row, undefined, now), secret }, 201);
  });

  app.openapi(getRoute, async (c) => c.json(await answer(c, (await byId(c)).id), 200));

  app.openapi(patchRoute, async (c) => {
    const before = await byId(c);
    const change = validated(c, 'json', Patch);
    if (change.url !== undefined || change.delivery !== undefined)
      assertTarget(c, change.url ?? before.url, change.delivery ?? before.delivery);
    const { db } = c.var.scope;
    const now = c.var.scope.now();
    const enabling = change.enabled === true && !before.enabled;
    const changed = Object.keys(change).filter(
      (k) => JSON.stringify(change[k as keyof typeof change]) !== JSON.stringify(before[k as keyof WebhookRow]),
    );
    await db.batch([
      db
        .update(webhooks)
        .set({
          ...change,
          updatedAt: now,
          ...(enabling ? { disabledReason: null, disabledAt: null, failingSince: null } : {}),
        })
        .where(eq(webhooks.id, before.id)),
      audit(c, 'webhook.updated', {
        webhookId: before.id,
        changed,
        ...(change.url !== undefined && change.url !== before.url ? { url: change.url } : {}),
      }),
    ]);
    forgetSnapshot();
    return c.json(await answer(c, before.id), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const row = await byId(c);
    const { db } = c.var.scope;
    await db.batch([
      db.delete(webhookDeliveries).where(eq(webhookDeliveries.webhookId, row.id)),
      db.delete(webhooks).where(eq(webhooks.id, row.id)),
      audit(c, 'webhook.deleted', { webhookId: row.id, url: row.url }),
    ]);
    forgetSnapshot();
    return c.body(null, 204);
  });

  app.openapi(rotateRoute, async (c) => {
    const row = await byId(c);
    const { db, config } = c.var.scope;
    const now = c.var.scope.now();
    const secret = newSigningSecret();
    const until = now + ROTATION_OVERLAP_MS;
    await db.batch([
      db
        .update(webhooks)
        .set({
          secretEnc: await sealSecret(config, secret),
          previousSecretEnc: row.secretEnc,
          previousSecretUntil: until,
          updatedAt: now,
        })
        .where(and(eq(webhooks.id, row.id), eq(webhooks.secretEnc, row.secretEnc))),
      audit(c, 'webhook.updated', { webhookId: row.id, changed: ['secret'] }),
    ]);
    return c.json({ secret, previousSecretExpiresAt: isoTime(until) }, 200);
  });

  app.openapi(testRoute, async (c) => {
    const row = await byId(c);
    const now = c.var.scope.now();
    const id = `msg_${crypto.randomUUID().replaceAll('-', '')}`;
    const data = { webhookId: row.id, message: 'a test event, sent from the webhook administration' };
    await c.var.scope.db.insert(webhookDeliveries).values({
      id,
      webhookId: row.id,
      eventId: id,
      type: TEST_EVENT_TYPE,
      at: now,
      payload: { data },
      nextAttemptAt: now,
      createdAt: now,
    });
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
    const now = c.var.scope.now();
    const [updated] = await c.var.scope.db
      .update(webhookDeliveries)
      .set({
        attempts: 0,
        nextAttemptAt: now,
        deliveredAt: null,
        failedAt: null,
      })
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, id)))
      .returning();
    if (!updated) throw new ProblemError('NOT_FOUND', { detail: `no delivery ${deliveryId} of webhook ${id}` });
    return c.json(toDelivery(updated), 202);
  });
}

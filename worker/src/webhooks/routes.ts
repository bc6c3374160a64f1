/**
 * /v4/webhooks (docs/webhooks.md): the subscriptions, administered by admins, each change audited
 * (crud_admin); their signing secrets shown once (at creation and rotation), never returned otherwise; the
 * writes are subscriptions.ts' (a test event, the recent deliveries and a redelivery: delivery-routes.ts).
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { auditInsert, type AuditEventType } from '../audit/events.js';
import { addWebhook, changeWebhook, isDeliverable, removeWebhook, rotateSecret } from './subscriptions.js';
import { protectedRoute } from '../auth/protected-route.js';
import type { App, AppEnv } from '../http/context.js';
import { isoOrNull, isoTime } from '../http/iso-time.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { sealSecret } from '../store/secret-box.js';
import { W } from './webhook-api-words.js';
import { base, IdParam, path, read, registerWebhookDeliveries, write } from './delivery-routes.js';
import { newSigningSecret } from './signature.js';
import {
  forgetSnapshot,
  listWebhooks,
  queueFigures,
  type QueueFigures,
  reasonOf,
  webhookById,
  type WebhookRow,
} from './store.js';
import { bridgeTargetRefusal, checkTarget, targetRules } from './targets.js';

const EventTypes = z
  .array(z.string().refine(isDeliverable, 'a type of the audit catalogue (not api_access), <stream>.* or *'))
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

const audited = (c: Context<AppEnv>) => (type: AuditEventType, data: Record<string, unknown>) =>
  auditInsert(c.var.scope.db, c.var.scope.now(), {
    stream: 'crud_admin',
    type,
    actor: c.var.principal.user,
    request: c.var.scope.request,
    data,
  });

const one = { description: W.d12, content: { 'application/json': { schema: Public } } };
// Tokens: the settings scopes, as the other admin records (LDAP servers, identity providers).

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
    await addWebhook(db, row, audited(c));
    forgetSnapshot();
    return c.json({ ...toPublic(row, undefined, now), secret }, 201);
  });

  app.openapi(getRoute, async (c) => c.json(await answer(c, (await byId(c)).id), 200));

  app.openapi(patchRoute, async (c) => {
    const before = await byId(c);
    const change = validated(c, 'json', Patch);
    if (change.url !== undefined || change.delivery !== undefined)
      assertTarget(c, change.url ?? before.url, change.delivery ?? before.delivery);
    await changeWebhook(c.var.scope.db, before, change, c.var.scope.now(), audited(c));
    forgetSnapshot();
    return c.json(await answer(c, before.id), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const row = await byId(c);
    await removeWebhook(c.var.scope.db, row, audited(c));
    forgetSnapshot();
    return c.body(null, 204);
  });

  app.openapi(rotateRoute, async (c) => {
    const row = await byId(c);
    const secret = newSigningSecret();
    const sealed = await sealSecret(c.var.scope.config, secret);
    const until = await rotateSecret(c.var.scope.db, row, sealed, c.var.scope.now(), audited(c));
    return c.json({ secret, previousSecretExpiresAt: isoTime(until) }, 200);
  });

  registerWebhookDeliveries(app);
}

/**
 * Webhook subscriptions and their deliveries in libSQL (schema/webhooks.ts): reads, the queue's figures, and
 * the per-instance snapshot that tells the after-response kick whether there is anything to send at all.
 */
import { and, desc, eq, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { webhookDeliveries, webhooks } from '../../../schema/index.js';
import type { Db } from '../store/index.js';
import { ProblemError } from '../http/problem.js';
import { TEST_EVENT_TYPE } from './payload.js';

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** A delivery still owed: neither delivered nor given up. */
export const undelivered = and(isNull(webhookDeliveries.deliveredAt), isNull(webhookDeliveries.failedAt));

export function listWebhooks(db: Db): Promise<WebhookRow[]> {
  return db.select().from(webhooks).orderBy(webhooks.createdAt, webhooks.id);
}

/** The subscription `id`, or 404. */
export async function webhookById(db: Db, id: string): Promise<WebhookRow> {
  const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id)).limit(1);
  if (!row) throw new ProblemError('NOT_FOUND', { detail: `no webhook subscription ${id}` });
  return row;
}

/** The queue of one subscription, or of all: undelivered deliveries and the time of the oldest one's event. */
export interface QueueFigures {
  depth: number;
  oldestAt: number | null;
}

/** The queue per subscription (enabled or not), keyed by subscription id. */
export async function queueFigures(db: Db): Promise<Map<string, QueueFigures>> {
  const rows = await db
    .select({
      webhookId: webhookDeliveries.webhookId,
      depth: sql<number>`count(*)`,
      oldestAt: sql<number | null>`min(${webhookDeliveries.at})`,
    })
    .from(webhookDeliveries)
    .where(undelivered)
    .groupBy(webhookDeliveries.webhookId);
  return new Map(rows.map((r) => [r.webhookId, { depth: Number(r.depth), oldestAt: r.oldestAt }]));
}

/** The latest deliveries of a subscription, newest first. */
export function recentDeliveries(db: Db, webhookId: string, limit: number): Promise<DeliveryRow[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.webhookId, webhookId))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit);
}

/** Why the service disabled a subscription, as the API says it. */
export function reasonOf(reason: string | null): 'gone' | 'failing' | null {
  return reason === 'gone' || reason === 'failing' ? reason : null;
}

/**
 * The subscriptions needing attention (the administrator's overview): failing now, or disabled by the service;
 * with their queue's depth, oldest failure first.
 */
export async function failingWebhooks(db: Db) {
  const [rows, queues] = await Promise.all([
    db
      .select()
      .from(webhooks)
      .where(or(isNotNull(webhooks.failingSince), isNotNull(webhooks.disabledReason))),
    queueFigures(db),
  ]);
  return rows
    .sort((a, b) => (a.failingSince ?? a.disabledAt ?? 0) - (b.failingSince ?? b.disabledAt ?? 0))
    .map((r) => ({
      id: r.id,
      url: r.url,
      enabled: r.enabled,
      failingSince: r.failingSince,
      disabledReason: reasonOf(r.disabledReason),
      queueDepth: queues.get(r.id)?.depth ?? 0,
    }));
}

/** How long the instance trusts its snapshot of "is any subscription enabled?". */
const SNAPSHOT_MS = 5_000;
let snapshot: { readAt: number; enabled: boolean } | null = null;

/**
 * Whether any subscription is enabled, as this instance last read it (at most SNAPSHOT_MS ago): the kick after
 * a response asks this, so an instance without subscriptions never queries for deliveries.
 */
export async function anyEnabled(db: Db): Promise<boolean> {
  const now = Date.now();
  if (snapshot && now - snapshot.readAt < SNAPSHOT_MS) return snapshot.enabled;
  const [row] = await db.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.enabled, true)).limit(1);
  snapshot = { readAt: now, enabled: row !== undefined };
  return snapshot.enabled;
}

/** Forgets the snapshot (a subscription of this instance changed). */
export function forgetSnapshot(): void {
  snapshot = null;
}

/** Queues a test event for the subscription `webhookId`; the delivery's id. */
export async function queueTestEvent(db: Db, webhookId: string, now: number): Promise<string> {
  const id = `msg_${crypto.randomUUID().replaceAll('-', '')}`;
  const data = { webhookId, message: 'a test event, sent from the webhook administration' };
  await db.insert(webhookDeliveries).values({
    id,
    webhookId,
    eventId: id,
    type: TEST_EVENT_TYPE,
    at: now,
    payload: { data },
    nextAttemptAt: now,
    createdAt: now,
  });
  return id;
}

/** Sends the delivery `deliveryId` of `webhookId` again from its first attempt, or 404. */
export async function redeliver(db: Db, webhookId: string, deliveryId: string, now: number): Promise<DeliveryRow> {
  const [updated] = await db
    .update(webhookDeliveries)
    .set({ attempts: 0, nextAttemptAt: now, deliveredAt: null, failedAt: null })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)))
    .returning();
  if (!updated) throw new ProblemError('NOT_FOUND', { detail: `no delivery ${deliveryId} of webhook ${webhookId}` });
  return updated;
}

/**
 * The writes of the webhook subscriptions (docs/webhooks.md), each batched with its audit event, and what a
 * subscription may name; the HTTP side is routes.ts.
 */
import { and, eq } from 'drizzle-orm';
import { webhookDeliveries, webhooks } from '../../../schema/index.js';
import { EVENT_CATALOGUE, type AuditStream } from '../audit/catalogue.js';
import type { AuditEventType, auditInsert } from '../audit/events.js';
import type { Db } from '../store/index.js';
import type { WebhookRow } from './store.js';

/** The audit event of a change, built by the caller (who knows the actor and the request). */
export type Audited = (type: AuditEventType, data: Record<string, unknown>) => ReturnType<typeof auditInsert>;

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

export const isDeliverable = (type: string): boolean => DELIVERABLE.has(type);

export async function addWebhook(db: Db, row: WebhookRow, audited: Audited): Promise<void> {
  await db.batch([
    db.insert(webhooks).values(row),
    audited('webhook.created', { webhookId: row.id, url: row.url, eventTypes: row.eventTypes, delivery: row.delivery }),
  ]);
}

/** Applies `change`; enabling a disabled subscription clears why and since when it was disabled or failing. */
export async function changeWebhook(
  db: Db,
  before: WebhookRow,
  change: Partial<Pick<WebhookRow, 'url' | 'eventTypes' | 'enabled' | 'description' | 'delivery'>>,
  now: number,
  audited: Audited,
): Promise<void> {
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
    audited('webhook.updated', {
      webhookId: before.id,
      changed,
      ...(change.url !== undefined && change.url !== before.url ? { url: change.url } : {}),
    }),
  ]);
}

/** Removes the subscription and its deliveries. */
export async function removeWebhook(db: Db, row: WebhookRow, audited: Audited): Promise<void> {
  await db.batch([
    db.delete(webhookDeliveries).where(eq(webhookDeliveries.webhookId, row.id)),
    db.delete(webhooks).where(eq(webhooks.id, row.id)),
    audited('webhook.deleted', { webhookId: row.id, url: row.url }),
  ]);
}

/** Signs with `secretEnc` from now on, the previous secret still for ROTATION_OVERLAP_MS; when it stops. */
export async function rotateSecret(
  db: Db,
  row: WebhookRow,
  secretEnc: string,
  now: number,
  audited: Audited,
): Promise<number> {
  const until = now + ROTATION_OVERLAP_MS;
  await db.batch([
    db
      .update(webhooks)
      .set({ secretEnc, previousSecretEnc: row.secretEnc, previousSecretUntil: until, updatedAt: now })
      .where(and(eq(webhooks.id, row.id), eq(webhooks.secretEnc, row.secretEnc))),
    audited('webhook.updated', { webhookId: row.id, changed: ['secret'] }),
  ]);
  return until;
}

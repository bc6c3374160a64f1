/**
 * Sending webhooks (docs/webhooks.md, "At least once"): due deliveries are claimed under a lease of their
 * own (a compare-and-set, so two senders never send one row at once), signed, sent with a 15 s timeout, and
 * recorded. 2xx is delivered; anything else is retried on RETRY_SCHEDULE_MS (a 429 or 503 not before its
 * Retry-After); 410 disables the subscription; a subscription failing for DISABLE_AFTER_MS is disabled. A
 * sender that dies mid-delivery leaves its lease to expire: the row is sent again, with the same webhook-id.
 */
import { and, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { webhookDeliveries, webhooks } from '../../../schema/index.js';
import { auditInsertWhen } from '../audit/events.js';
import type { Scope } from '../http/scope.js';
import type { Job } from '../jobs/job.js';
import { openSecret } from '../store/secret-box.js';
import { countDelivery } from './metrics.js';
import { webhookBody } from './payload.js';
import { signatureHeader } from './signature.js';
import { type DeliveryRow, type WebhookRow, undelivered } from './store.js';
import { targetRules } from './targets.js';
import { fetchWebhook, type WebhookAnswer } from './transport.js';
import { bridgeWebhookFetch } from './bridge-transport.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The waits before the 2nd to the 8th attempt (the first is immediate): Svix's schedule, which receivers of
 * Standard Webhooks expect. Short first (a blip, a deploy), then hours (an outage): about 27.6 hours in all.
 */
export const RETRY_SCHEDULE_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
/** The longest a Retry-After is honoured (a longer one waits this long). */
const MAX_RETRY_AFTER_MS = 10 * HOUR;
/** How long an attempt may take, answer included. */
export const TIMEOUT_MS = 15 * SECOND;
/** A subscription whose deliveries have failed this long without a success is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * HOUR;
/** How long a sender holds a claimed delivery; past it another sender may send it again. */
export const DELIVERY_LEASE_MS = 2 * MINUTE;
/** Deliveries claimed per round. */
const BATCH = 50;
/** Recorded attempts written together (at most this many are sent again after a crash). */
const FLUSH_EVERY = 10;
/** Delivered and given-up deliveries are kept this long (the attempts list), then purged. */
export const KEEP_MS = 7 * 24 * HOUR;

type SenderScope = Pick<Scope, 'db' | 'config' | 'now' | 'logger' | 'webhookFetch' | 'bridge'>;

/** The wait before the next attempt after `attempts` failed ones, or null when the schedule ran out. */
export function nextWait(attempts: number, status: number | null, retryAfter: string | null, now: number) {
  const wait = RETRY_SCHEDULE_MS[attempts - 1];
  if (wait === undefined) return null;
  if ((status === 429 || status === 503) && retryAfter !== null) {
    const asked = /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) * SECOND : Date.parse(retryAfter) - now;
    if (Number.isFinite(asked)) return Math.max(wait, Math.min(asked, MAX_RETRY_AFTER_MS));
  }
  return wait;
}

/** Claims up to BATCH due deliveries of enabled subscriptions for `holder`, oldest event first. */
async function claim(db: SenderScope['db'], holder: string, now: number): Promise<DeliveryRow[]> {
  const due = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(
      and(
        undelivered,
        lte(webhookDeliveries.nextAttemptAt, now),
        or(isNull(webhookDeliveries.leaseUntil), lte(webhookDeliveries.leaseUntil, now)),
        eq(webhooks.enabled, true),
      ),
    )
    .orderBy(webhookDeliveries.at, webhookDeliveries.id)
    .limit(BATCH);
  const rows = await db
    .update(webhookDeliveries)
    .set({ leaseUntil: now + DELIVERY_LEASE_MS, leaseHolder: holder })
    .where(
      and(
        inArray(webhookDeliveries.id, due),
        or(isNull(webhookDeliveries.leaseUntil), lte(webhookDeliveries.leaseUntil, now)),
      ),
    )
    .returning();
  return rows.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
}

/** The secrets that sign for `hook` now: its own, and during a rotation's overlap the previous one. */
async function signingSecrets(scope: SenderScope, hook: WebhookRow, now: number): Promise<string[]> {
  const secrets = [await openSecret(scope.config, hook.secretEnc)];
  if (hook.previousSecretEnc && (hook.previousSecretUntil ?? 0) > now)
    secrets.push(await openSecret(scope.config, hook.previousSecretEnc));
  return secrets;
}

type Outcome = 'delivered' | 'retry' | 'failed' | 'gone';

/**
 * Sends one delivery (signed with `secrets`); returns its outcome and the writes that record it. A success's
 * writes may wait for the others of the round (one transaction for many: a crash before it sends them again,
 * with the same webhook-id); a failure's are written at once by the caller.
 */
async function attempt(
  scope: SenderScope,
  row: DeliveryRow,
  hook: WebhookRow,
  secrets: () => Promise<string[]>,
  holder: string,
): Promise<{ outcome: Outcome; writes: BatchItem<'sqlite'>[] }> {
  const { db } = scope;
  const body = webhookBody(row.type, row.at, row.payload);
  const sentAt = scope.now();
  const timestamp = Math.floor(sentAt / SECOND);
  // A receiver behind a private CA goes through the bridge (docs/webhooks.md, "Targets").
  const send = hook.delivery === 'bridge' ? bridgeWebhookFetch(scope.bridge) : (scope.webhookFetch ?? fetchWebhook);
  const started = Date.now();
  let answer: WebhookAnswer | null = null;
  let error = '';
  try {
    const signature = await signatureHeader(await secrets(), row.id, timestamp, body);
    answer = await send({
      url: hook.url,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'auth-service-webhooks/1',
        'webhook-id': row.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      },
      body,
      timeoutMs: TIMEOUT_MS,
      rules: targetRules(scope.config),
    });
  } catch (err) {
    error = (err instanceof Error ? (err.name === 'TimeoutError' ? 'timeout' : err.message) : String(err)).slice(
      0,
      300,
    );
  }
  const now = scope.now();
  const status = answer?.status ?? null;
  const ok = status !== null && status >= 200 && status < 300;
  const attempts = row.attempts + 1;
  const wait = ok ? null : nextWait(attempts, status, answer?.retryAfter ?? null, now);
  const outcome: Outcome = ok ? 'delivered' : status === 410 ? 'gone' : wait === null ? 'failed' : 'retry';
  const mine = and(eq(webhookDeliveries.id, row.id), eq(webhookDeliveries.leaseHolder, holder));
  const writes: BatchItem<'sqlite'>[] = [
    db
      .update(webhookDeliveries)
      .set({
        attempts,
        lastAttemptAt: sentAt,
        lastStatus: status,
        lastDurationMs: answer?.durationMs ?? Date.now() - started,
        lastResponse: answer ? answer.body : error,
        leaseUntil: null,
        leaseHolder: null,
        ...(outcome === 'delivered' ? { deliveredAt: now } : {}),
        ...(outcome === 'failed' || outcome === 'gone' ? { failedAt: now } : {}),
        ...(outcome === 'retry' ? { nextAttemptAt: now + wait! } : {}),
      })
      .where(mine),
  ];
  if (!ok) {
    writes.push(
      db
        .update(webhooks)
        .set({ failingSince: sql`coalesce(${webhooks.failingSince}, ${now})` })
        .where(eq(webhooks.id, hook.id)),
    );
    writes.push(...disableWrites(scope, hook, now, outcome === 'gone' ? 'gone' : 'failing'));
  }
  countDelivery(outcome);
  if (!ok) scope.logger.info('webhook attempt failed', { webhookId: hook.id, delivery: row.id, status, error });
  return { outcome, writes };
}

/**
 * Disables `hook` with `reason` (gone: now; failing: once it has failed for DISABLE_AFTER_MS) and records the
 * webhook.disabled event in the same batch, only when this statement disabled it (the notifications tell the
 * administrators: docs/webhooks.md, "Disabled subscriptions").
 */
function disableWrites(scope: SenderScope, hook: WebhookRow, now: number, reason: 'gone' | 'failing') {
  const { db } = scope;
  const due = reason === 'gone' ? sql`1` : sql`${webhooks.failingSince} <= ${now - DISABLE_AFTER_MS}`;
  const marker = `${reason}:${now}:${hook.id}`;
  return [
    db
      .update(webhooks)
      .set({ enabled: false, disabledReason: reason, disabledAt: now, updatedAt: now })
      .where(and(eq(webhooks.id, hook.id), eq(webhooks.enabled, true), due)),
    auditInsertWhen(
      db,
      now,
      {
        stream: 'crud_admin',
        type: 'webhook.disabled',
        actor: null,
        data: { webhookId: hook.id, url: hook.url, reason },
      },
      sql`(select disabled_reason || ':' || disabled_at || ':' || id from ${webhooks} where id = ${hook.id}) =
          ${marker}`,
    ),
  ];
}

/** Releases the deliveries of `rows` still held by `holder` (not attempted in this round). */
function release(db: SenderScope['db'], holder: string, ids: string[]) {
  if (ids.length === 0) return Promise.resolve();
  return db
    .update(webhookDeliveries)
    .set({ leaseUntil: null, leaseHolder: null })
    .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.leaseHolder, holder)));
}

/**
 * Sends what is due, round after round while rounds are full: per subscription in the order of the events,
 * the subscriptions side by side. A failed attempt leaves the subscription's other deliveries for a later
 * run (they are released), so a dead receiver costs one timeout per run, not one per delivery.
 */
export async function deliverDue(scope: SenderScope, rounds = 10): Promise<Record<Outcome, number>> {
  const counts: Record<Outcome, number> = { delivered: 0, retry: 0, failed: 0, gone: 0 };
  for (let round = 0; round < rounds; round++) {
    const holder = crypto.randomUUID();
    const claimed = await claim(scope.db, holder, scope.now());
    if (claimed.length === 0) break;
    const ids = [...new Set(claimed.map((r) => r.webhookId))];
    const hooks = new Map(
      (await scope.db.select().from(webhooks).where(inArray(webhooks.id, ids))).map((h) => [h.id, h]),
    );
    await Promise.all(
      ids.map(async (id) => {
        const rows = claimed.filter((r) => r.webhookId === id);
        const hook = hooks.get(id);
        let sent = 0;
        // Opened once per round (a key derivation each), not once per delivery.
        let opened: Promise<string[]> | undefined;
        const secrets = () => (opened ??= signingSecrets(scope, hook!, scope.now()));
        const pending: BatchItem<'sqlite'>[] = [];
        let cleared = false;
        const flush = async () => {
          if (pending.length === 0) return;
          await scope.db.batch(pending.splice(0) as [BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]]);
        };
        try {
          for (const row of rows) {
            if (!hook?.enabled) break;
            sent += 1;
            const { outcome, writes } = await attempt(scope, row, hook, secrets, holder);
            pending.push(...writes);
            counts[outcome] += 1;
            if (outcome !== 'delivered') break;
            // A success ends the subscription's failing spell (before any later failure's writes).
            if (!cleared && hook.failingSince !== null) {
              cleared = true;
              pending.push(scope.db.update(webhooks).set({ failingSince: null }).where(eq(webhooks.id, id)));
            }
            if (pending.length >= FLUSH_EVERY) await flush();
          }
          await flush();
        } catch (err) {
          scope.logger.error('webhook delivery not recorded', { webhookId: id, err });
        } finally {
          await release(
            scope.db,
            holder,
            rows.slice(sent).map((r) => r.id),
          );
        }
      }),
    );
    if (claimed.length < BATCH) break;
  }
  return counts;
}

/** Deletes delivered and given-up deliveries older than KEEP_MS. */
export async function purgeDeliveries(scope: Pick<Scope, 'db' | 'now'>): Promise<number> {
  const old = scope.now() - KEEP_MS;
  const gone = await scope.db
    .delete(webhookDeliveries)
    .where(or(lte(webhookDeliveries.deliveredAt, old), lte(webhookDeliveries.failedAt, old)))
    .returning({ id: webhookDeliveries.id });
  return gone.length;
}

/**
 * The periodic job (schedule/index.ts): sends what is due (the kick after a response usually did already),
 * every 30 s whoever fires the schedule, and purges old deliveries.
 */
export const deliverWebhooksJob: Job = {
  name: 'deliver-webhooks',
  everyMs: 30_000,
  leaseMs: 10 * 60_000,
  run: async (scope) => ({ ...(await deliverDue(scope)), purged: await purgeDeliveries(scope) }),
};

/**
 * The event handler of notifications (architecture.md §4): audit events waiting in the outbox
 * (`handled_at` null) become notification rows, in batches of OUTBOX_BATCH_SIZE, oldest first. Its
 * progress is its own column, independent of shipping to the log store.
 *
 * Exactly once in effect: each notification's dedupe key is its event's id (unique), and the
 * batch that inserts the notifications also marks the events handled. A handler that runs twice at
 * once (a job and a kick, two hosts) inserts nothing twice: the second insert of a key is skipped,
 * and so is the second token of a new account's link.
 */
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { activeAccounts } from '../accounts/live.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Scope } from '../http/scope.js';
import type { UserRow } from '../accounts/model.js';
import { auditOutbox, users } from '../../../schema/index.js';
import { mailLinkBase, mintToken, resetLink, tokenInsertUnlessNotified } from '../accounts/reset-tokens.js';
import { describeUserAgent, MAX_SHOWN_USER_AGENT } from './user-agent.js';
import { notificationInsert, notificationRow, type NewNotification } from './store.js';

type OutboxRow = typeof auditOutbox.$inferSelect;

/** What a run needs of the scope (a logger is optional: tests and benchmarks run without one). */
type HandleScope = Pick<Scope, 'db' | 'config' | 'now'> & Partial<Pick<Scope, 'logger'>>;

export interface HandleResult {
  events: number;
  notifications: number;
}

/** Batches per run, so a backlog drains over a few runs instead of holding one for ever. */
const MAX_BATCHES = 50;

/** What an event asks for: a notification, and for a new local account a link to set its password. */
export function plannedNotification(
  row: OutboxRow,
  user: UserRow,
  config: ConfigSnapshot,
  now: number,
): Omit<NewNotification, 'now'> | null {
  const base = { user, dedupeKey: `event:${row.id}`, eventId: row.id };
  const data = (row.data ?? {}) as Record<string, unknown>;
  switch (row.type) {
    case 'account.locked':
      // One device spending its own budget is the owner's own typing: nothing to tell.
      if (data.restriction === 'device') return null;
      return {
        ...base,
        kind: 'account_locked',
        data: { until: typeof data.until === 'string' ? data.until : undefined },
      };
    case 'device.added': {
      // A login from a new device (architecture.md §4): told while AUTH_NEW_DEVICE_MAIL is on, and only
      // to an account with an address (no given-up row for each login of an account without one).
      if (!config.get('NEW_DEVICE_MAIL') || !user.email?.trim()) return null;
      const client = describeUserAgent(row.userAgent);
      const named = client.browser !== undefined || client.system !== undefined;
      return {
        ...base,
        kind: 'new_device',
        data: {
          at: new Date(row.at).toISOString(),
          address: row.sourceIp ?? undefined,
          ...client,
          userAgent: named ? undefined : (row.userAgent?.slice(0, MAX_SHOWN_USER_AGENT) ?? undefined),
          consoleUrl: `${mailLinkBase(config)}/`,
        },
      };
    }
    case 'account.blocked':
      // An administrator's block is the administrator's to tell; inactivity is told by mail.
      if (data.reason !== 'inactivity') return null;
      return { ...base, kind: 'account_blocked_inactivity', data: { days: config.get('USER_INACTIVE_TIMEOUT_DAY') } };
    case 'password.changed':
      return {
        ...base,
        kind: 'password_changed',
        data: { at: new Date(row.at).toISOString(), by: data.via === 'reset_link' ? 'link' : 'self' },
      };
    case 'password.reset':
      return {
        ...base,
        kind: 'password_changed',
        data: { at: new Date(row.at).toISOString(), by: row.actorId === null ? 'operator' : 'admin' },
      };
    case 'passkey.registered':
    case 'passkey.removed':
      return {
        ...base,
        kind: 'passkey_changed',
        data: {
          at: new Date(row.at).toISOString(),
          change: row.type === 'passkey.removed' ? 'removed' : 'added',
          name: typeof data.name === 'string' ? data.name : undefined,
        },
      };
    case 'mfa.factor_added':
    case 'mfa.factor_removed':
      return {
        ...base,
        kind: 'second_factor_changed',
        data: {
          at: new Date(row.at).toISOString(),
          change: row.type === 'mfa.factor_added' ? 'added' : 'removed',
          by: typeof data.by === 'string' && data.by !== 'self' ? data.by : undefined,
        },
      };
    case 'user.created': {
      // External accounts are created by their first login: nothing to tell.
      if (user.source !== 'local') return null;
      const serviceName = config.get('PROJECT_DESCRIPTION');
      // A password the administrator gave: the mail says so and where to sign in, with no link to choose
      // one; an account created without one gets the link (docs/mail.md, "Kinds").
      if (data.password !== 'chosen')
        return { ...base, kind: 'account_created', data: { serviceName, consoleUrl: `${mailLinkBase(config)}/` } };
      const expiresAt = now + config.get('WELCOME_LINK_TTL_HOURS') * 3_600_000;
      return {
        ...base,
        kind: 'account_created',
        data: { expiresAt: new Date(expiresAt).toISOString(), serviceName },
      };
    }
    default:
      return null;
  }
}

/** Handles what waits in the outbox; nothing while EVENT_HANDLING is off. */
export async function handleEvents(s: HandleScope): Promise<HandleResult> {
  const result: HandleResult = { events: 0, notifications: 0 };
  if (!s.config.get('EVENT_HANDLING')) return result;
  const size = s.config.get('OUTBOX_BATCH_SIZE');
  // One instant for the whole run: every batch's notifications, links and handled marks.
  const now = s.now();
  for (let n = 0; n < MAX_BATCHES; n++) {
    const rows = await s.db
      .select()
      .from(auditOutbox)
      .where(isNull(auditOutbox.handledAt))
      .orderBy(asc(auditOutbox.at), sql`rowid`)
      .limit(size);
    if (rows.length === 0) break;
    await handleBatch(s, now, rows, result);
    if (rows.length < size) break;
  }
  return result;
}

async function handleBatch(s: HandleScope, now: number, rows: OutboxRow[], result: HandleResult): Promise<void> {
  const { db, config } = s;
  const ids = [...new Set(rows.map((r) => r.subjectId).filter((id): id is string => id !== null))];
  const accounts = ids.length ? await db.select().from(users).where(inArray(users.id, ids)) : [];
  const byId = new Map(accounts.map((u) => [u.id, u]));
  const writes = [];
  // Events about the service itself go to every active administrator with an address (docs/webhooks.md).
  const forAdmins = rows.filter((r) => r.type === 'webhook.disabled');
  const admins = forAdmins.length
    ? await db
        .select()
        .from(users)
        .where(and(eq(users.role, 'admin'), activeAccounts))
    : [];
  for (const row of forAdmins) {
    const data = (row.data ?? {}) as Record<string, unknown>;
    for (const admin of admins.filter((a) => a.email?.trim())) {
      const plan = {
        kind: 'webhook_disabled' as const,
        user: admin,
        dedupeKey: `event:${row.id}:${admin.id}`,
        eventId: row.id,
        data: { at: new Date(row.at).toISOString(), url: String(data.url ?? ''), reason: String(data.reason ?? '') },
      };
      writes.push(notificationInsert(db, await notificationRow(config, { ...plan, now })));
      result.notifications++;
    }
  }
  for (const row of rows) {
    const user = row.subjectId ? byId.get(row.subjectId) : undefined;
    if (!user || user.deletedAt !== null) continue;
    const plan = plannedNotification(row, user, config, now);
    if (!plan) continue;
    let link: string | undefined;
    // A link only while the account still has the password it was created with (a change since, a
    // block, ended the links and must not be followed by one: docs/security.md, "What ends what").
    const unchanged = user.status === 'active' && (user.passwordChangedAt ?? 0) <= row.at;
    if (plan.kind === 'account_created' && plan.data.expiresAt && user.email && unchanged) {
      const token = mintToken();
      const expiresAt = Date.parse(String(plan.data.expiresAt));
      writes.push(
        tokenInsertUnlessNotified(
          db,
          { id: crypto.randomUUID(), userId: user.id, token, purpose: 'welcome', now, expiresAt },
          user,
          plan.dedupeKey,
        ),
      );
      link = resetLink(config, token);
    }
    writes.push(notificationInsert(db, await notificationRow(config, { ...plan, now, link })));
    result.notifications++;
  }
  writes.push(
    db
      .update(auditOutbox)
      .set({ handledAt: now })
      .where(
        inArray(
          auditOutbox.id,
          rows.map((r) => r.id),
        ),
      ),
  );
  await db.batch(writes as [(typeof writes)[number], ...(typeof writes)[number][]]);
  result.events += rows.length;
  s.logger?.debug('events handled', { events: rows.length });
}

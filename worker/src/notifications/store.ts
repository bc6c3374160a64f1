/** Notification rows: building them (deduplicated), and reading them for the lists. */
import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { ConfigSnapshot } from '../config/index.js';
import type { Db } from '../store/index.js';
import { sealSecret } from '../store/secret-box.js';
import type { UserRow } from '../accounts/model.js';
import { notifications } from '../../../schema/index.js';
import type { Language, NotificationKind, TemplateData } from './templates.js';
import { isoOrNull, isoTime } from '../http/iso-time.js';

export type NotificationRow = typeof notifications.$inferSelect;
export type NotificationStatus = NotificationRow['status'];

/** Why an account gets no mail. */
export const NO_ADDRESS = 'the account has no e-mail address';

export interface NewNotification {
  kind: NotificationKind;
  /** `language`: the account's own choice, when read with it (else AUTH_MAIL_LANGUAGE). */
  user: Pick<UserRow, 'id' | 'login' | 'email' | 'displayName'> & Partial<Pick<UserRow, 'language'>>;
  data: TemplateData;
  /** Unique per cause: the same cause never makes a second mail. */
  dedupeKey: string;
  now: number;
  eventId?: string;
  /** A single-use link, sealed into the row until the mail is sent. */
  link?: string;
}

/** The row of a new notification: pending, or given up at once when the account has no address. */
export async function notificationRow(config: ConfigSnapshot, n: NewNotification): Promise<NotificationRow> {
  const recipient = n.user.email?.trim() || null;
  return {
    id: crypto.randomUUID(),
    kind: n.kind,
    userId: n.user.id,
    userLogin: n.user.login,
    recipient,
    template: n.kind,
    // The account's language (the console's choice), else the mails' default (docs/mail.md).
    language: (n.user.language ?? config.get('MAIL_LANGUAGE')) as Language,
    data: { login: n.user.login, displayName: n.user.displayName, ...n.data },
    sealedLink: recipient && n.link ? await sealSecret(config, n.link) : null,
    status: recipient ? 'pending' : 'given_up',
    attempts: 0,
    lastError: recipient ? null : NO_ADDRESS,
    createdAt: n.now,
    sentAt: null,
    nextAttemptAt: recipient ? n.now : null,
    leaseUntil: null,
    leaseHolder: null,
    dedupeKey: n.dedupeKey,
    eventId: n.eventId ?? null,
  };
}

/** The insert of a notification; a second one with the same dedupe key is skipped. */
export function notificationInsert(db: Db, row: NotificationRow) {
  return db.insert(notifications).values(row).onConflictDoNothing({ target: notifications.dedupeKey });
}

/** A notification as the lists show it (never the link or its token). */
export function toPublicNotification(r: NotificationRow) {
  return {
    id: r.id,
    kind: r.kind,
    userId: r.userId,
    userLogin: r.userLogin,
    recipient: r.recipient,
    template: r.template,
    language: r.language,
    status: r.status,
    attempts: r.attempts,
    lastError: r.lastError,
    createdAt: isoTime(r.createdAt),
    sentAt: isoOrNull(r.sentAt),
    nextAttemptAt: r.status === 'pending' || r.status === 'failed' ? isoOrNull(r.nextAttemptAt) : null,
  };
}

export interface ListFilter {
  status?: NotificationStatus;
  kind?: string;
  recipient?: string;
  userId?: string;
  limit: number;
  offset: number;
}

/** A page of notifications, newest first, and the count of all that match. */
export async function listNotifications(db: Db, f: ListFilter): Promise<{ items: NotificationRow[]; total: number }> {
  const conditions: SQL[] = [];
  if (f.status) conditions.push(eq(notifications.status, f.status));
  if (f.kind) conditions.push(eq(notifications.kind, f.kind));
  if (f.recipient) conditions.push(sql`lower(${notifications.recipient}) = ${f.recipient.toLowerCase()}`);
  if (f.userId) conditions.push(eq(notifications.userId, f.userId));
  const where = conditions.length ? and(...conditions) : undefined;
  const [items, [total]] = await Promise.all([
    db
      .select()
      .from(notifications)
      .where(where)
      .orderBy(desc(notifications.createdAt), desc(notifications.id))
      .limit(f.limit)
      .offset(f.offset),
    db.select({ n: count() }).from(notifications).where(where),
  ]);
  return { items, total: total?.n ?? 0 };
}

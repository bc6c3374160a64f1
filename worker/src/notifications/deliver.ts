/**
 * Delivery of notifications through the bridge's SMTP (architecture.md §4).
 *
 * - Each due row (pending, or failed and past its next attempt) is claimed with a lease in one
 *   UPDATE, so two deliverers (the job on two hosts, a kick after a response) never send one row
 *   twice; a deliverer that crashed leaves a lease that simply expires.
 * - The Mail settings are read for each batch (a change applies to the next mail) and the password
 *   opened for it only. While EMAIL_HOST is the placeholder nothing is attempted: on the Node host
 *   the mails go to the development outbox (status `outbox`, docs/mail.md "Development outbox");
 *   on the edge the rows are given up with "mail is not configured".
 * - A refusal for good (5xx to the recipient or the message) is given up at once; anything else
 *   (4xx, a server or bridge that cannot be reached, a timeout) is retried with exponential backoff
 *   and jitter, MAX_ATTEMPTS times in all. Every failure is reported to SENDER_ERRTRACK_DSN (when
 *   error tracking is on), with the kind and the cause, never the address or the content.
 * - A link's sealed token is erased once the mail is sent or given up.
 * - Each attempt that reached the bridge is recorded (`mail.send`, ext_service_access, §5.1) in the
 *   same batch as the row's new state, with the request meta of the event that caused the mail.
 */
import { and, asc, eq, inArray, lte, or, isNull, isNotNull, sql } from 'drizzle-orm';
import { errorClassOf, extServiceInsert, maskAddress } from '../audit/ext-service.js';
import { reportError, secretValues } from '../errtrack/reporter.js';
import { backoffMs, type Backoff } from '../jobs/backoff.js';
import type { MailOutbox } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { openSecret } from '../store/secret-box.js';
import { auditOutbox, notifications } from '../../../schema/index.js';
import type { RequestMeta, Scope } from '../http/scope.js';
import { MailSendResponseSchema, type MailMessage, type MailServer } from '../../../schema/bridge/index.js';
import { mailNotConfigured, mailServerOf, noMailServer, senderOf } from './mail-settings.js';
import { NO_ADDRESS, type NotificationRow } from './store.js';
import { renderMail, type Language, type NotificationKind, type TemplateData } from './templates.js';

/**
 * What a run needs of the scope. `now()` is read for each claim, send and write: a caller that wants
 * the whole run on one instant hands a scope with a fixed clock (the job does). `mailOutbox` (Node
 * host) is where mail goes while EMAIL_HOST is the placeholder; a logger is optional (tests, benchmarks).
 */
type DeliverScope = Pick<Scope, 'db' | 'config' | 'now' | 'bridge' | 'mailOutbox'> &
  Partial<Pick<Scope, 'logger'>> & {
    /** Random numbers in [0, 1) for the jitter (tests pin it). */
    random?: () => number;
  };

export interface DeliverResult {
  sent: number;
  /** Written to the development outbox. */
  outbox: number;
  retried: number;
  givenUp: number;
}

/** Tries in all before a notification is given up (about two hours of backoff). */
export const MAX_ATTEMPTS = 8;
const BACKOFF: Backoff = { baseMs: 60_000, maxMs: 3_600_000 };
/** How long a claim holds a row: above the bridge call's own timeout. */
const LEASE_MS = 120_000;
/** The bridge call's timeout: connect, greeting and the whole dialogue. */
const SEND_TIMEOUT_MS = 60_000;
/** Mails in flight at once per deliverer (the bridge pools 3 connections per server). */
const CONCURRENCY = 4;
/** Batches per run. */
const MAX_BATCHES = 100;

/** Claims up to `size` due rows for `holder`. */
async function claim(db: Db, holder: string, now: number, size: number): Promise<NotificationRow[]> {
  const due = db
    .select({ id: notifications.id })
    .from(notifications)
    .where(
      and(
        inArray(notifications.status, ['pending', 'failed']),
        lte(sql`coalesce(${notifications.nextAttemptAt}, 0)`, now),
        or(isNull(notifications.leaseUntil), lte(notifications.leaseUntil, now)),
      ),
    )
    .orderBy(asc(notifications.createdAt))
    .limit(size);
  return db
    .update(notifications)
    .set({ leaseHolder: holder, leaseUntil: now + LEASE_MS })
    .where(
      and(inArray(notifications.id, due), or(isNull(notifications.leaseUntil), lte(notifications.leaseUntil, now))),
    )
    .returning();
}

/**
 * `tried`: the mail server was asked (an attempt counts); false when nothing was attempted. `call`:
 * the bridge call as its audit event records it (absent when none was made).
 */
type Outcome = (
  | { status: 'sent' }
  | { status: 'outbox'; file: string }
  | { status: 'given_up' | 'retry'; error: string; tried: boolean }
) & {
  call?: { at: number; durationMs: number; data: Record<string, unknown> };
};

/** The request meta of the events that caused `rows` (by event id), for their mail.send events. */
async function causesOf(db: Db, rows: NotificationRow[]): Promise<Map<string, RequestMeta>> {
  const ids = rows.map((r) => r.eventId).filter((id): id is string => id !== null);
  if (ids.length === 0) return new Map();
  const found = await db
    .select({
      id: auditOutbox.id,
      requestId: auditOutbox.requestId,
      ip: auditOutbox.sourceIp,
      userAgent: auditOutbox.userAgent,
      host: auditOutbox.host,
    })
    .from(auditOutbox)
    .where(and(inArray(auditOutbox.id, ids), isNotNull(auditOutbox.requestId)));
  return new Map(found.map((f) => [f.id, { id: f.requestId!, ip: f.ip, userAgent: f.userAgent, host: f.host ?? '' }]));
}

/** Delivers what is due; returns the counts of the run. */
export async function deliverDue(s: DeliverScope): Promise<DeliverResult> {
  const result: DeliverResult = { sent: 0, outbox: 0, retried: 0, givenUp: 0 };
  const holder = crypto.randomUUID();
  const size = s.config.get('OUTBOX_BATCH_SIZE');
  for (let n = 0; n < MAX_BATCHES; n++) {
    const rows = await claim(s.db, holder, s.now(), size);
    if (rows.length === 0) break;
    // No mail server configured: the Node host's development outbox takes the mails.
    const outbox = s.mailOutbox && noMailServer(s.config) ? s.mailOutbox : undefined;
    const unusable = outbox
      ? null
      : (mailNotConfigured(s.config) ?? (s.bridge ? null : 'mail is not configured (no bridge: AUTH_BRIDGE_URL)'));
    const server = unusable || outbox ? null : await mailServerOf(s.db, s.config);
    const causes = unusable || outbox ? new Map<string, RequestMeta>() : await causesOf(s.db, rows);
    const queue = [...rows];
    const worker = async () => {
      for (let row = queue.shift(); row; row = queue.shift()) {
        const outcome: Outcome = unusable
          ? { status: 'given_up', error: unusable, tried: false }
          : outbox
            ? await writeToOutbox(s, row, outbox)
            : await sendOne(s, row, server!);
        await record(s, holder, row, outcome, s.now(), result, row.eventId ? causes.get(row.eventId) : undefined);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rows.length) }, worker));
    if (rows.length < size) break;
  }
  return result;
}

/** The message of a notification (its link opened), or why it cannot be made. */
async function messageOf(s: DeliverScope, row: NotificationRow): Promise<MailMessage | Outcome> {
  if (!row.recipient) return { status: 'given_up', error: NO_ADDRESS, tried: false };
  let link: string | null = null;
  if (row.sealedLink) {
    try {
      link = await openSecret(s.config, row.sealedLink);
    } catch {
      return {
        status: 'given_up',
        error: 'the link cannot be decrypted (was the encryption key changed?)',
        tried: false,
      };
    }
  }
  const data = (row.data ?? {}) as TemplateData;
  const mail = renderMail(row.kind as NotificationKind, row.language as Language, data, link);
  const from = senderOf(s.config) ?? { address: 'noreply@example.com' };
  // Names come from account data: CR and LF would start a header line, so they become spaces.
  const name = (data.displayName ?? '').replace(/[\r\n\0]+/g, ' ').trim();
  const domain = from.address.split('@')[1]!.replace(/[^A-Za-z0-9.-]/g, '') || 'auth-service';
  return {
    from,
    to: name ? { address: row.recipient, name } : { address: row.recipient },
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: `<${row.id}@${domain}>`,
    language: row.language,
  };
}

/** One mail into the development outbox, as an outcome. */
async function writeToOutbox(s: DeliverScope, row: NotificationRow, outbox: MailOutbox): Promise<Outcome> {
  const message = await messageOf(s, row);
  if ('status' in message) return message;
  try {
    return { status: 'outbox', file: await outbox.write(row.id, message) };
  } catch (err) {
    // A folder that cannot be written (permissions, a full disk): retried like an unreachable server.
    return { status: 'retry', error: `the outbox ${outbox.folder} cannot be written: ${String(err)}`, tried: true };
  }
}

/** One mail through the bridge, as an outcome (never throws for the mail's own failures). */
async function sendOne(s: DeliverScope, row: NotificationRow, server: MailServer): Promise<Outcome> {
  const message = await messageOf(s, row);
  if ('status' in message) return message;
  const at = s.now();
  const call = (data: Record<string, unknown>) => ({ call: { at, durationMs: s.now() - at, data } });
  try {
    const answer = await s.bridge!.call(
      '/v1/mail/send',
      { server, ...message },
      MailSendResponseSchema,
      SEND_TIMEOUT_MS,
    );
    if (answer.outcome === 'sent') return { status: 'sent', ...call({}) };
    const code = answer.responseCode ?? 0;
    const error = `${answer.stage}: ${code} ${answer.response}`.slice(0, 500);
    // Permanent per SMTP: the recipient or the message refused (5xx). A 5xx to AUTH or MAIL FROM is a
    // setting to fix, which the retries give time for.
    const permanent = code >= 500 && (answer.stage === 'envelope' || answer.stage === 'message');
    // The event keeps the stage and the code, not the reply's text (it may quote the address).
    const refusal = call({ stage: answer.stage, responseCode: code, errorClass: `SMTP_${Math.floor(code / 100)}XX` });
    return { status: permanent ? 'given_up' : 'retry', error, tried: true, ...refusal };
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    const cause = typeof err.extensions.cause === 'string' ? `${err.extensions.cause}: ` : '';
    const failed = call({ errorClass: errorClassOf(err) });
    // A recipient address the bridge refuses (its contract) will never be accepted.
    if (err.status === 502 && /invalid request body/.test(err.detail ?? ''))
      return { status: 'given_up', error: `${cause}${err.detail}`.slice(0, 500), tried: true, ...failed };
    return {
      status: 'retry',
      error: `${err.status} ${cause}${err.detail ?? err.title}`.slice(0, 500),
      tried: true,
      ...failed,
    };
  }
}

/** Writes an outcome (only while this deliverer still holds the row) and reports failures. */
async function record(
  s: DeliverScope,
  holder: string,
  row: NotificationRow,
  o: Outcome,
  at: number,
  result: DeliverResult,
  cause?: RequestMeta,
): Promise<void> {
  const attempts = row.attempts + (o.status === 'sent' || o.status === 'outbox' || o.tried ? 1 : 0);
  const mine = and(eq(notifications.id, row.id), eq(notifications.leaseHolder, holder));
  const release = { leaseHolder: null, leaseUntil: null };
  const giveUp = o.status === 'given_up' || attempts >= MAX_ATTEMPTS;
  // The send's event, in the batch of the row's new state (written even if the lease was lost: the
  // call happened). Never the link, the text or the full address.
  const event = o.call
    ? [
        extServiceInsert(s.db, {
          type: 'mail.send',
          ok: o.status === 'sent',
          at: o.call.at,
          durationMs: o.call.durationMs,
          ...(row.userId && row.userLogin ? { subject: { id: row.userId, login: row.userLogin } } : {}),
          ...(cause ? { request: cause } : {}),
          data: {
            kind: row.kind,
            notificationId: row.id,
            ...(row.eventId ? { causeEventId: row.eventId } : {}),
            recipient: maskAddress(row.recipient ?? ''),
            attempt: attempts,
            result: o.status === 'sent' ? 'sent' : giveUp ? 'given_up' : 'retry',
            ...o.call.data,
          },
        })(),
      ]
    : [];
  if (o.status === 'outbox') {
    // Delivered to the outbox, not sent: the link stays in the file only (like a mailbox's copy).
    const written = s.db
      .update(notifications)
      .set({
        ...release,
        status: 'outbox',
        sentAt: at,
        attempts,
        lastError: null,
        sealedLink: null,
        nextAttemptAt: null,
      })
      .where(mine);
    await written;
    result.outbox++;
    s.logger?.info('mail written to the development outbox', { notification: row.id, kind: row.kind, file: o.file });
    return;
  }
  if (o.status === 'sent') {
    const sent = s.db
      .update(notifications)
      .set({ ...release, status: 'sent', sentAt: at, attempts, lastError: null, sealedLink: null, nextAttemptAt: null })
      .where(mine);
    await s.db.batch([sent, ...event]);
    result.sent++;
    return;
  }
  const update = s.db
    .update(notifications)
    .set(
      giveUp
        ? { ...release, status: 'given_up', attempts, lastError: o.error, sealedLink: null, nextAttemptAt: null }
        : {
            ...release,
            status: 'failed',
            attempts,
            lastError: o.error,
            nextAttemptAt: at + backoffMs(BACKOFF, attempts, s.random),
          },
    )
    .where(mine);
  await s.db.batch([update, ...event]);
  if (giveUp) result.givenUp++;
  else result.retried++;
  s.logger?.warning('mail not sent', {
    notification: row.id,
    kind: row.kind,
    attempts,
    givenUp: giveUp,
    error: o.error,
  });
  // Nothing attempted (mail not configured, no address) is not a sending error to report.
  if (o.tried) await reportMailFailure(s, row, o.error, giveUp);
}

/** Reports a mail that was not sent to SENDER_ERRTRACK_DSN; nothing while error tracking is off. */
async function reportMailFailure(
  s: DeliverScope,
  row: NotificationRow,
  error: string,
  givenUp: boolean,
): Promise<void> {
  const env = s.config;
  if (env.get('SENDER_ERRTRACK_DSN') === '' || env.get('ERRTRACK_ENV') === '') return;
  const err = new Error(`mail ${givenUp ? 'given up' : 'not sent, will retry'}: ${row.kind}: ${error}`);
  err.name = 'MailSendError';
  await reportError(
    {
      dsn: env.get('SENDER_ERRTRACK_DSN'),
      environment: env.get('ERRTRACK_ENV'),
      ca: env.get('ERRTRACK_CA'),
      bridge: s.bridge,
      secrets: secretValues(env),
      logger: 'auth-service.mail',
      clock: () => s.now(),
    },
    err,
  ).catch((e: unknown) =>
    s.logger?.warning('mail failure report not delivered', { err: e instanceof Error ? e.message : String(e) }),
  );
}

/**
 * What the administrator's overview reads of the last 24 hours outside the accounts (docs/api.md,
 * "The overview"): failed logins and locks from the audit outbox, on its `audit_outbox_stream_at`
 * index (stream `user_activity`, a time range: never a scan of the whole log), and mail delivery
 * failures from the notification history (its `notifications_due` and `notifications_created`
 * indexes). Reads only.
 */
import { and, desc, eq, gte, inArray, isNotNull, lte, sql } from 'drizzle-orm';
import type { Db } from '../store/index.js';
import { auditOutbox, notifications } from '../../../schema/index.js';

/** The overview's window: the last 24 hours. */
export const WINDOW_MS = 86_400_000;
/** Items each short list holds. */
const SHORT_LIST = 5;

/** A failed login of the window. */
export interface FailedLogin {
  at: number;
  login: string | null;
  userId: string | null;
  ip: string | null;
}

/** A mail that failed in the window. */
export interface FailedMail {
  id: string;
  kind: string;
  userLogin: string | null;
  status: 'failed' | 'given_up';
  lastError: string | null;
  createdAt: number;
}

export interface RecentActivity {
  failedLogins: { count: number; items: FailedLogin[] };
  /** `account.locked` events of the window, and the distinct logins they locked. */
  lockEvents: { count: number; logins: number };
  /** `address.throttled` events of the window. */
  throttledAddresses: number;
  mail: { failing: number; givenUp: number; items: FailedMail[] };
}

const n = (rows: Array<{ n: number | null }>) => Number(rows[0]?.n ?? 0);

/**
 * Failed logins, locks and mail failures from `now - WINDOW_MS` to `now`: a row stamped later (by an
 * instance whose clock runs ahead) is not yet of the last 24 hours, and would push the newest ones out of the
 * short lists.
 */
export async function recentActivity(db: Db, now: number): Promise<RecentActivity> {
  const since = now - WINDOW_MS;
  const events = (type: string) =>
    and(
      eq(auditOutbox.stream, 'user_activity'),
      gte(auditOutbox.at, since),
      lte(auditOutbox.at, now),
      eq(auditOutbox.type, type),
    );
  // A mail to an account without an address was never tried: recorded as given up (notifications page),
  // but no delivery failure (docs/mail.md, "Delivery"), so the overview neither counts nor lists it.
  const addressed = isNotNull(notifications.recipient);
  const failedMail = and(
    inArray(notifications.status, ['failed', 'given_up']),
    gte(notifications.createdAt, since),
    lte(notifications.createdAt, now),
    addressed,
  );
  const [failures, failureRows, locks, throttled, failing, givenUp, mailRows] = await db.batch([
    db
      .select({ n: sql<number>`sum(${auditOutbox.events})` })
      .from(auditOutbox)
      .where(events('login.failure')),
    db
      .select({
        at: auditOutbox.at,
        login: auditOutbox.subjectLogin,
        userId: auditOutbox.subjectId,
        ip: auditOutbox.sourceIp,
      })
      .from(auditOutbox)
      .where(events('login.failure'))
      .orderBy(desc(auditOutbox.at))
      .limit(SHORT_LIST),
    db
      .select({ n: sql<number>`count(*)`, logins: sql<number>`count(distinct ${auditOutbox.subjectLogin})` })
      .from(auditOutbox)
      .where(events('account.locked')),
    db.select({ n: sql<number>`count(*)` }).from(auditOutbox).where(events('address.throttled')),
    // Waiting for another try now, whenever created: both due statuses named, so the partial index of due
    // deliveries (`status in ('pending', 'failed')`) applies.
    db
      .select({ n: sql<number>`count(*)` })
      .from(notifications)
      .where(and(inArray(notifications.status, ['pending', 'failed']), eq(notifications.status, 'failed'))),
    db
      .select({ n: sql<number>`count(*)` })
      .from(notifications)
      .where(
        and(
          eq(notifications.status, 'given_up'),
          gte(notifications.createdAt, since),
          lte(notifications.createdAt, now),
          addressed,
        ),
      ),
    db
      .select({
        id: notifications.id,
        kind: notifications.kind,
        userLogin: notifications.userLogin,
        status: notifications.status,
        lastError: notifications.lastError,
        createdAt: notifications.createdAt,
      })
      .from(notifications)
      .where(failedMail)
      .orderBy(desc(notifications.createdAt))
      .limit(SHORT_LIST),
  ]);
  return {
    failedLogins: { count: n(failures), items: failureRows },
    lockEvents: { count: n(locks), logins: Number(locks[0]?.logins ?? 0) },
    throttledAddresses: n(throttled),
    mail: {
      failing: n(failing),
      givenUp: n(givenUp),
      items: mailRows.map((r) => ({ ...r, status: r.status as FailedMail['status'] })),
    },
  };
}

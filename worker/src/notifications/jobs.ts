/**
 * The notifications' periodic jobs: handling the outbox's events, delivering due mails (with their
 * retries), the password- and token-expiry notices and the retention of the history (NOTIFICATION_EXPIRATION).
 */
import { and, eq, gt, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { Job } from '../jobs/job.js';
import { DAY_MS } from '../accounts/model.js';
import { apiTokens, notifications, passwordResetRequests, passwordResetTokens, users } from '../../../schema/index.js';
import { deliverDue } from './deliver.js';
import { handleEvents } from './handler.js';
import { notificationInsert, notificationRow } from './store.js';
import { activeAccounts } from '../accounts/live.js';

/** Turns the outbox's events into notifications (EVENT_HANDLING); every 30 s, whoever fires the schedule. */
export const handleNotificationEvents: Job = {
  name: 'handle-events',
  everyMs: 30_000,
  leaseMs: 10 * 60_000,
  run: async (scope) => ({ ...(await handleEvents(scope)) }),
};

/** Sends due notifications and retries failed ones after their backoff; every 30 s. */
export const deliverNotifications: Job = {
  name: 'deliver-notifications',
  everyMs: 30_000,
  leaseMs: 10 * 60_000,
  run: async (scope) => {
    // The whole run on the instant it started (claims, records, backoff), as the job has always
    // decided; the kick after a response reads the live clock instead.
    const instant = scope.now();
    return { ...(await deliverDue({ ...scope, now: () => instant })) };
  },
};

/** Accounts told per run at most (the rest at the next run). */
const EXPIRY_BATCH = 500;

/**
 * Tells the owners of local passwords that expire within PASSWORD_EXPIRY_NOTICE_DAY days, once per
 * password: the dedupe key holds the time of the password's change, so a new password gets its own
 * notice and a job that runs twice tells nobody twice. Every 15 minutes.
 */
export const passwordExpiryNotices: Job = {
  name: 'password-expiry-notices',
  everyMs: 15 * 60_000,
  async run({ db, config, now: clock }) {
    const now = clock();
    const notice = config.get('PASSWORD_EXPIRY_NOTICE_DAY');
    const lifetime = config.get('USER_PASSWORD_EXPIRATION_DAY');
    if (notice === 0 || lifetime === 0) return { notified: 0 };
    const key = sql`'password_expiring:' || ${users.id} || ':' || ${users.passwordChangedAt}`;
    const due = await db
      .select()
      .from(users)
      .where(
        and(
          eq(users.source, 'local'),
          activeAccounts,
          eq(users.mustChangePassword, false),
          isNotNull(users.passwordChangedAt),
          // Expires within the notice period, and has not expired yet.
          lte(users.passwordChangedAt, now - (lifetime - notice) * DAY_MS),
          gt(users.passwordChangedAt, now - lifetime * DAY_MS),
          sql`not exists (select 1 from ${notifications} where ${notifications.dedupeKey} = ${key})`,
        ),
      )
      .limit(EXPIRY_BATCH);
    const writes = [];
    for (const user of due) {
      const expiresAt = user.passwordChangedAt! + lifetime * DAY_MS;
      const days = Math.max(1, Math.ceil((expiresAt - now) / DAY_MS));
      const row = await notificationRow(config, {
        kind: 'password_expiring',
        user,
        data: { expiresAt: new Date(expiresAt).toISOString(), days },
        dedupeKey: `password_expiring:${user.id}:${user.passwordChangedAt}`,
        now,
      });
      writes.push(notificationInsert(db, row));
    }
    if (writes.length) await db.batch(writes as [(typeof writes)[number], ...(typeof writes)[number][]]);
    return { notified: writes.length };
  },
};

/**
 * Tells the owners of API tokens that expire within TOKEN_EXPIRY_NOTICE_DAY days, once per token (the
 * dedupe key is the token's id, so a job that runs twice tells nobody twice); live tokens of active
 * accounts only. Every 15 minutes.
 */
export const tokenExpiryNotices: Job = {
  name: 'token-expiry-notices',
  everyMs: 15 * 60_000,
  async run({ db, config, now: clock }) {
    const now = clock();
    const notice = config.get('TOKEN_EXPIRY_NOTICE_DAY');
    if (notice === 0) return { notified: 0 };
    const key = sql`'token_expiring:' || ${apiTokens.id}`;
    const due = await db
      .select({ user: users, token: apiTokens })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId))
      .where(
        and(
          activeAccounts,
          isNull(apiTokens.revokedAt),
          isNotNull(apiTokens.expiresAt),
          gt(apiTokens.expiresAt, now),
          lte(apiTokens.expiresAt, now + notice * DAY_MS),
          sql`not exists (select 1 from ${notifications} where ${notifications.dedupeKey} = ${key})`,
        ),
      )
      .limit(EXPIRY_BATCH);
    const writes = [];
    for (const { user, token } of due) {
      const expiresAt = token.expiresAt!;
      const row = await notificationRow(config, {
        kind: 'token_expiring',
        user,
        data: {
          expiresAt: new Date(expiresAt).toISOString(),
          days: Math.max(1, Math.ceil((expiresAt - now) / DAY_MS)),
          name: token.name,
          prefix: token.prefix,
        },
        dedupeKey: `token_expiring:${token.id}`,
        now,
      });
      writes.push(notificationInsert(db, row));
    }
    if (writes.length) await db.batch(writes as [(typeof writes)[number], ...(typeof writes)[number][]]);
    return { notified: writes.length };
  },
};

/**
 * Deletes notifications older than NOTIFICATION_EXPIRATION days (a mail still waiting for a retry is
 * kept until it is sent or given up), used or expired password-reset links older than a day, and
 * old reset requests; says so in the data-lifecycle stream.
 */
export const purgeNotifications: Job = {
  name: 'purge-notifications',
  async run({ db, config, now: clock, mailOutbox }) {
    const now = clock();
    const days = config.get('NOTIFICATION_EXPIRATION');
    const old = and(
      lt(notifications.createdAt, now - days * DAY_MS),
      or(eq(notifications.status, 'sent'), eq(notifications.status, 'given_up'), eq(notifications.status, 'outbox')),
    );
    const [purged, tokens] = await db.batch([
      db.delete(notifications).where(old).returning({ id: notifications.id }),
      db
        .delete(passwordResetTokens)
        .where(or(lt(passwordResetTokens.expiresAt, now - DAY_MS), lt(passwordResetTokens.usedAt, now - DAY_MS)))
        .returning({ id: passwordResetTokens.id }),
      db.delete(passwordResetRequests).where(lt(passwordResetRequests.at, now - DAY_MS)),
    ]);
    // The development outbox's files go with their rows.
    if (mailOutbox && purged.length > 0) await mailOutbox.remove(purged.map((p) => p.id));
    if (purged.length > 0 || tokens.length > 0) {
      await auditInsert(db, now, {
        stream: 'data_lifecycle',
        type: 'notifications.purged',
        data: { notifications: purged.length, resetLinks: tokens.length, retentionDays: days },
      });
    }
    return { purged: purged.length, resetLinks: tokens.length };
  },
};

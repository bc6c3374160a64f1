/**
 * GET /v4/admin/overview: the administrator's first screen in one answer (docs/api.md, "The
 * overview"; the console's overview page): counts and short lists of the last 24 hours and of now,
 * and the state of the log store and of mail. Each number is one indexed query (overview/attention.ts,
 * overview/activity.ts).
 */
import { z } from '@hono/zod-openapi';
import { accountAttention } from './attention.js';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { isoOrNull, isoTime } from '../http/iso-time.js';
import { auditStoreState } from '../logs/size-bound.js';
import { logstoreTarget } from '../logs/target.js';
import { mailNotConfigured, noMailServer } from '../notifications/mail-settings.js';
import { failingWebhooks } from '../webhooks/store.js';
import { recentActivity, WINDOW_MS } from './activity.js';

const AccountItem = z
  .object({
    id: z.string(),
    login: z.string(),
    at: z.iso.datetime().nullable().openapi({ description: 'what put it on the list (see the list)' }),
  })
  .openapi('OverviewAccount');
const accounts = (description: string) =>
  z.object({ count: z.int(), items: z.array(AccountItem).openapi({ description: 'the first 5' }) }).openapi({
    description,
  });

const Overview = z
  .object({
    generatedAt: z.iso.datetime(),
    since: z.iso.datetime().openapi({ description: 'the start of the 24 hours the `last24h` numbers count' }),
    last24h: z.object({
      failedLogins: z.object({
        count: z
          .int()
          .openapi({ description: '`login.failure` events (wrong password, unknown login, passkey refused)' }),
        items: z
          .array(
            z.object({
              at: z.iso.datetime(),
              login: z.string().nullable().openapi({ description: 'the login as given' }),
              userId: z.string().nullable().openapi({ description: 'null: no such account' }),
              ip: z.string().nullable(),
            }),
          )
          .openapi({ description: 'the newest 5' }),
      }),
      lockEvents: z.object({
        count: z.int().openapi({ description: '`account.locked` events (a failed-login restriction applied)' }),
        logins: z.int().openapi({ description: 'distinct logins they restricted' }),
      }),
      throttledAddresses: z.int().openapi({ description: '`address.throttled` events' }),
      mailGivenUp: z.int().openapi({
        description:
          'mails created in the window and given up; not a mail to an account without an e-mail address, which ' +
          'was never tried (the notifications list shows it, given up, "the account has no e-mail address")',
      }),
    }),
    now: z.object({
      activeSessions: z.int().openapi({ description: 'live sessions of all accounts (cookie and OAuth)' }),
      lockedLogins: z
        .object({
          count: z.int(),
          items: z.array(
            z.object({
              login: z.string().openapi({ description: 'the login key (case-folded)' }),
              source: z.enum(['local', 'ldap']),
              until: z.iso.datetime(),
              userId: z.string().nullable().openapi({ description: 'the local account, if one has the login' }),
            }),
          ),
        })
        .openapi({ description: 'logins locked for untrusted clients now (local and LDAP), latest end first' }),
      blocked: accounts(
        'blocked accounts (by an administrator or for inactivity), last changed first; `at`: last change',
      ),
      passwordExpired: accounts(
        'active local accounts whose password is older than USER_PASSWORD_EXPIRATION_DAY; `at`: when it was set',
      ),
      inactiveSoon: accounts(
        'active accounts the inactivity block (USER_INACTIVE_TIMEOUT_DAY) reaches within 7 days; `at`: last activity',
      ),
      mailFailing: z.int().openapi({ description: 'mails whose last try failed, waiting for another' }),
      mailFailures: z
        .array(
          z.object({
            id: z.string(),
            kind: z.string(),
            userLogin: z.string().nullable(),
            status: z.enum(['failed', 'given_up']),
            lastError: z.string().nullable(),
            createdAt: z.iso.datetime(),
          }),
        )
        .openapi({
          description:
            'the newest 5 mails of the last 24 hours that failed or were given up (to an address: not a mail to ' +
            'an account without one)',
        }),
    }),
    logStore: z.object({
      state: z.enum(['configured', 'embedded']).openapi({
        description: 'configured: LOGSTORE_URLS; embedded: the audit log in libSQL (docs/audit-logs-embedded.md)',
      }),
      size: z
        .object({
          store: z.enum(['local', 'delivered']).openapi({
            description:
              'local: every event kept in libSQL (AUDIT_LOCAL_MAX_MB); delivered: events already in the ' +
              'log store, kept in the outbox (OUTBOX_DELIVERED_MAX_MB)',
          }),
          bytes: z.int().openapi({ description: 'estimated bytes of those events' }),
          maxBytes: z.int().openapi({ description: 'the bound; beyond, the oldest are deleted' }),
          percent: z.number().openapi({ description: 'bytes in percent of maxBytes' }),
          warning: z.boolean().openapi({ description: 'true from 80 % of the bound' }),
          measuredAt: z.iso.datetime().openapi({ description: 'when the job bound-audit-store measured it' }),
        })
        .nullable()
        .openapi({
          description:
            'the audit events against their size bound (docs/audit-logs-embedded.md, "Size bound"); ' +
            'null before its first measure',
        }),
    }),
    webhooks: z
      .object({
        failing: z
          .int()
          .openapi({ description: 'subscriptions whose last attempt failed, or that the service disabled' }),
        items: z.array(
          z.object({
            id: z.string(),
            url: z.string(),
            enabled: z.boolean(),
            failingSince: z.iso.datetime().nullable(),
            disabledReason: z.enum(['gone', 'failing']).nullable(),
            queueDepth: z.int(),
          }),
        ),
      })
      .openapi({ description: 'webhook subscriptions needing attention (docs/webhooks.md), the first 5' }),
    mail: z.object({
      state: z.enum(['configured', 'outbox', 'not_configured']).openapi({
        description:
          'configured: a mail server; outbox: none, mails are written as .eml files (Node host; docs/mail.md, ' +
          '"Development outbox"); not_configured: mail cannot be sent',
      }),
      detail: z.string().nullable().openapi({ description: 'why mail cannot be sent (not_configured)' }),
    }),
  })
  .openapi('AdminOverview');

const overviewRoute = protectedRoute(
  adminOnly(superAccess.refused('read the overview (it summarises the audit log)'), 'users:read'),
  {
    method: 'get',
    operationId: 'getAdminOverview',
    path: '/v4/admin/overview',
    tags: ['user_v4'],
    summary: "The administrator's overview",
    description:
      'Failed logins and locks of the last 24 hours, live sessions, accounts needing attention (blocked, expired ' +
      'password, inactive soon), mail delivery failures, and the state of the log store and of mail: counts with ' +
      'the first few items of each. The 24-hour numbers read the audit outbox, which holds shipped events ' +
      'OUTBOX_RETENTION_DAY days with a log store and AUDIT_LOCAL_RETENTION_DAYS days without.',
    responses: {
      200: { description: 'the overview', content: { 'application/json': { schema: Overview } } },
    },
  },
);

/** Registers GET /v4/admin/overview. */
export function registerOverview(app: App): void {
  app.openapi(overviewRoute, async (c) => {
    const now = c.var.scope.now();
    const [attention, recent, size, hooks] = await Promise.all([
      accountAttention(c.var.scope.db, c.var.scope.config, now),
      recentActivity(c.var.scope.db, now),
      auditStoreState(c.var.scope.db, c.var.scope.config),
      failingWebhooks(c.var.scope.db),
    ]);
    const account = (i: { id: string; login: string; at: number | null }) => ({ ...i, at: isoOrNull(i.at) });
    const listed = (l: { count: number; items: Array<{ id: string; login: string; at: number | null }> }) => ({
      count: l.count,
      items: l.items.map(account),
    });
    const mailProblem = mailNotConfigured(c.var.scope.config);
    return c.json(
      {
        generatedAt: isoTime(now),
        since: isoTime(now - WINDOW_MS),
        last24h: {
          failedLogins: {
            count: recent.failedLogins.count,
            items: recent.failedLogins.items.map((f) => ({ ...f, at: isoTime(f.at) })),
          },
          lockEvents: recent.lockEvents,
          throttledAddresses: recent.throttledAddresses,
          mailGivenUp: recent.mail.givenUp,
        },
        now: {
          activeSessions: attention.activeSessions,
          lockedLogins: {
            count: attention.locked.count,
            items: attention.locked.items.map((l) => ({ ...l, until: isoTime(l.until) })),
          },
          blocked: listed(attention.blocked),
          passwordExpired: listed(attention.passwordExpired),
          inactiveSoon: listed(attention.inactiveSoon),
          mailFailing: recent.mail.failing,
          mailFailures: recent.mail.items.map((m) => ({ ...m, createdAt: isoTime(m.createdAt) })),
        },
        logStore: {
          state: logstoreTarget(c.var.scope.config) ? ('configured' as const) : ('embedded' as const),
          size: size && {
            store: size.store,
            bytes: size.bytes,
            maxBytes: size.maxBytes,
            percent: Math.round((size.bytes / size.maxBytes) * 1000) / 10,
            warning: size.warning,
            measuredAt: isoTime(size.measuredAt),
          },
        },
        webhooks: {
          failing: hooks.length,
          items: hooks.slice(0, 5).map((h) => ({ ...h, failingSince: isoOrNull(h.failingSince) })),
        },
        mail: {
          state:
            mailProblem === null
              ? ('configured' as const)
              : c.var.scope.mailOutbox && noMailServer(c.var.scope.config)
                ? ('outbox' as const)
                : ('not_configured' as const),
          detail:
            mailProblem !== null && !(c.var.scope.mailOutbox && noMailServer(c.var.scope.config)) ? mailProblem : null,
        },
      },
      200,
    );
  });
}

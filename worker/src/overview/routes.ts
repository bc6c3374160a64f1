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
import { W } from './overview-api-words.js';

const AccountItem = z
  .object({
    id: z.string(),
    login: z.string(),
    at: z.iso.datetime().nullable().openapi({ description: W.d1 }),
  })
  .openapi('OverviewAccount');
const accounts = (description: string | undefined) =>
  z.object({ count: z.int(), items: z.array(AccountItem).openapi({ description: 'the first 5' }) }).openapi({
    description,
  });

const Overview = z
  .object({
    generatedAt: z.iso.datetime(),
    since: z.iso.datetime().openapi({ description: W.d2 }),
    last24h: z.object({
      failedLogins: z.object({
        count: z.int().openapi({ description: W.d3 }),
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
        count: z.int().openapi({ description: W.d4 }),
        logins: z.int().openapi({ description: W.d5 }),
      }),
      throttledAddresses: z.int().openapi({ description: W.d6 }),
      mailGivenUp: z.int().openapi({
        description: W.d7,
      }),
    }),
    now: z.object({
      activeSessions: z.int().openapi({ description: W.d8 }),
      lockedLogins: z
        .object({
          count: z.int(),
          items: z.array(
            z.object({
              login: z.string().openapi({ description: W.d9 }),
              source: z.enum(['local', 'ldap']),
              until: z.iso.datetime(),
              userId: z.string().nullable().openapi({ description: W.d10 }),
            }),
          ),
        })
        .openapi({ description: W.d11 }),
      blocked: accounts(W.blocked),
      passwordExpired: accounts(W.passwordExpired),
      inactiveSoon: accounts(W.inactiveSoon),
      mailFailing: z.int().openapi({ description: W.d12 }),
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
          description: W.d13,
        }),
    }),
    logStore: z.object({
      state: z.enum(['configured', 'embedded']).openapi({
        description: W.d14,
      }),
      size: z
        .object({
          store: z.enum(['local', 'delivered']).openapi({
            description: W.d15,
          }),
          bytes: z.int().openapi({ description: W.d16 }),
          maxBytes: z.int().openapi({ description: W.d17 }),
          percent: z.number().openapi({ description: W.d18 }),
          warning: z.boolean().openapi({ description: W.d19 }),
          measuredAt: z.iso.datetime().openapi({ description: W.d20 }),
        })
        .nullable()
        .openapi({
          description: W.d21,
        }),
    }),
    webhooks: z
      .object({
        failing: z.int().openapi({ description: W.d22 }),
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
      .openapi({ description: W.d23 }),
    mail: z.object({
      state: z.enum(['configured', 'outbox', 'not_configured']).openapi({
        description: W.d24,
      }),
      detail: z.string().nullable().openapi({ description: W.d25 }),
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
    summary: W.s26,
    description: W.d27,
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

/**
 * The notification history: GET /v4/notifications (administrators: everyone's, filtered) and
 * GET /v4/users/me/notifications (the caller's own). Neither ever shows a link or its token.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { authenticate } from '../auth/middleware.js';
import { adminOperation, describeSuperAccess, superAccess } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { listNotifications, toPublicNotification } from './store.js';
import { NOTIFICATION_KINDS } from './templates.js';

const MAX_PAGE = 100;
const STATUSES = ['pending', 'sent', 'failed', 'given_up'] as const;

const NotificationSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(NOTIFICATION_KINDS),
    userId: z.string().nullable().openapi({ description: 'the account the mail is about' }),
    userLogin: z.string().nullable(),
    recipient: z
      .string()
      .nullable()
      .openapi({ description: 'the address it goes to; null: the account has none (given up)' }),
    template: z.string(),
    language: z.enum(['ru', 'en']),
    status: z.enum(STATUSES).openapi({
      description:
        'pending: waiting to be sent; sent: accepted by the mail server; failed: the last try failed, another ' +
        'follows (nextAttemptAt); given_up: never sent (lastError says why)',
    }),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    createdAt: z.iso.datetime(),
    sentAt: z.iso.datetime().nullable(),
    nextAttemptAt: z.iso.datetime().nullable(),
  })
  .openapi('Notification');

const NotificationList = z
  .object({
    items: z.array(NotificationSchema),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .openapi('NotificationList');

const page = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE)
    .default(20)
    .openapi({ description: `page size, at most ${MAX_PAGE}` }),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(STATUSES).optional(),
  kind: z.enum(NOTIFICATION_KINDS).optional(),
};
const AdminQuery = z.object({
  ...page,
  recipient: z.string().trim().min(1).max(320).optional().openapi({ description: 'the address, ignoring case' }),
});
const OwnQuery = z.object(page);

const authn = authenticate({ schemes: ['Cookie', 'Basic', 'Bearer'] });
const security: Record<string, string[]>[] = [{ cookie: [] }, { basic: [] }, { bearer: [] }];
const history = 'Newest first. Kept NOTIFICATION_EXPIRATION days. Never shows a link or its token.';

const adminList = createRoute({
  method: 'get',
  path: '/v4/notifications',
  tags: ['notifications'],
  summary: 'The notification history (mails)',
  description:
    `Admin only. Every notification, filtered by status, kind and recipient; paginated (limit at most ${MAX_PAGE}, ` +
    `offset). ${history} ${describeSuperAccess(superAccess.allowed)}`,
  security,
  ...adminOperation(authn, superAccess.allowed),
  request: { query: AdminQuery },
  responses: {
    200: { description: 'a page of notifications', content: { 'application/json': { schema: NotificationList } } },
    ...problemResponses(401, 403, 422),
  },
});

const ownList = createRoute({
  method: 'get',
  path: '/v4/users/me/notifications',
  tags: ['notifications'],
  summary: "The caller's own notifications",
  description:
    "Session cookie, Basic or Bearer. Any role. The mails about the caller's account only, filtered by status and " +
    `kind. ${history}`,
  security,
  middleware: [authn] as const,
  'x-required-roles': ['admin', 'auditor', 'user'],
  request: { query: OwnQuery },
  responses: {
    200: { description: 'a page of notifications', content: { 'application/json': { schema: NotificationList } } },
    ...problemResponses(401, 403, 422),
  },
});

/** Registers the notification lists. */
export function registerNotifications(app: App): void {
  app.openapi(adminList, async (c) => {
    const q = validated(c, 'query', AdminQuery);
    const { items, total } = await listNotifications(c.var.db, q);
    return c.json(
      {
        items: items.map(toPublicNotification) as z.infer<typeof NotificationSchema>[],
        total,
        limit: q.limit,
        offset: q.offset,
      },
      200,
    );
  });
  app.openapi(ownList, async (c) => {
    const q = validated(c, 'query', OwnQuery);
    const { items, total } = await listNotifications(c.var.db, { ...q, userId: c.var.principal.user.id });
    return c.json(
      {
        items: items.map(toPublicNotification) as z.infer<typeof NotificationSchema>[],
        total,
        limit: q.limit,
        offset: q.offset,
      },
      200,
    );
  });
}

/**
 * The notification history: GET /v4/notifications (administrators: everyone's, filtered) and
 * GET /v4/users/me/notifications (the caller's own). Neither ever shows a link or its token.
 */
import { z } from '@hono/zod-openapi';
import { ANYONE, adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess, type TargetOf } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { MAX_PAGE, pageOf, pageQuery } from '../http/paging.js';
import { validated } from '../http/validated.js';
import { ProblemError } from '../http/problem.js';
import { notifications } from '../../../schema/index.js';
import { eq } from 'drizzle-orm';
import { listNotifications, toPublicNotification } from './store.js';
import { NOTIFICATION_KINDS } from './templates.js';

const STATUSES = ['pending', 'sent', 'failed', 'given_up', 'outbox'] as const;

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
        'follows (nextAttemptAt); given_up: never sent (lastError says why); outbox: no mail server is ' +
        'configured, and the Node host wrote it to its development outbox (a file; GET ' +
        '/v4/notifications/{id}/message serves it), not sent',
    }),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    createdAt: z.iso.datetime(),
    sentAt: z.iso.datetime().nullable(),
    nextAttemptAt: z.iso.datetime().nullable(),
  })
  .openapi('Notification');

const NotificationList = pageOf(NotificationSchema, 'NotificationList');

const page = {
  ...pageQuery,
  status: z.enum(STATUSES).optional(),
  kind: z.enum(NOTIFICATION_KINDS).optional(),
};
const AdminQuery = z.object({
  ...page,
  recipient: z.string().trim().min(1).max(320).optional().openapi({ description: 'the address, ignoring case' }),
});
const OwnQuery = z.object(page);

const history = 'Newest first. Kept NOTIFICATION_EXPIRATION days. Never shows a link or its token.';

const adminList = protectedRoute(adminOnly(superAccess.allowed, 'users:read'), {
  method: 'get',
  operationId: 'listNotifications',
  path: '/v4/notifications',
  tags: ['notifications'],
  summary: 'The notification history (mails)',
  description:
    `Every notification, filtered by status, kind and recipient; paginated (limit at most ${MAX_PAGE}, ` +
    `offset). ${history}`,
  request: { query: AdminQuery },
  responses: {
    200: { description: 'a page of notifications', content: { 'application/json': { schema: NotificationList } } },
    ...problemResponses(422),
  },
});

const ownList = protectedRoute(
  { ...ANYONE, tokenScope: 'account:read' },
  {
    method: 'get',
    operationId: 'listOwnNotifications',
    path: '/v4/users/me/notifications',
    tags: ['notifications'],
    summary: "The caller's own notifications",
    description: `The mails about the caller's account only, filtered by status and kind. ${history}`,
    request: { query: OwnQuery },
    responses: {
      200: { description: 'a page of notifications', content: { 'application/json': { schema: NotificationList } } },
      ...problemResponses(422),
    },
  },
);

const IdParam = z.object({ id: z.uuid().openapi({ description: 'the notification' }) });

/**
 * The account a notification is about (null: none any more); undefined for no such notification. Its
 * mail may hold a link that sets the password: lent rights may open only an unprivileged account's.
 */
const accountOfNotification: TargetOf = async (c) => {
  const id = c.req.param('id') ?? '';
  const [row] = await c.var.scope.db
    .select({ userId: notifications.userId })
    .from(notifications)
    .where(eq(notifications.id, id.toLowerCase()))
    .limit(1);
  return row ? row.userId : undefined;
};

const READER = adminOnly(superAccess.unprivilegedTargets('read the mail of', accountOfNotification), 'users:read');
const message = protectedRoute(READER, {
  method: 'get',
  operationId: 'getNotificationMessage',
  path: '/v4/notifications/{id}/message',
  tags: ['notifications'],
  summary: 'The mail of a notification in the development outbox (.eml)',
  description:
    'The message the Node host wrote to its development outbox (status outbox: no mail server configured), as ' +
    'an RFC 5322 file to open in a mail client (Content-Disposition: attachment). It holds the link of the mail, ' +
    'if any, as a mailbox would: an administrator may open any (an administrator may set any password ' +
    'anyway; docs/mail.md, "Development outbox"), lent rights only the mail of an unprivileged account. 404 for a ' +
    'notification that is not in the outbox (sent, pending, given up, purged, or the edge host, which has none).',
  request: { params: IdParam },
  responses: {
    200: {
      description: 'the message (Content-Disposition: attachment; filename="<id>.eml")',
      content: { 'message/rfc822': { schema: z.string().openapi({ format: 'binary' }) } },
    },
    ...problemResponses(404, 422),
  },
});

/** The JSON body of a page of notifications. */
function listPage(page: Awaited<ReturnType<typeof listNotifications>>, q: { limit: number; offset: number }) {
  const items = page.items.map(toPublicNotification) as z.infer<typeof NotificationSchema>[];
  return { items, total: page.total, limit: q.limit, offset: q.offset };
}

/** Registers the notification lists. */
export function registerNotifications(app: App): void {
  app.openapi(adminList, async (c) => {
    const q = validated(c, 'query', AdminQuery);
    return c.json(listPage(await listNotifications(c.var.scope.db, q), q), 200);
  });
  app.openapi(message, async (c) => {
    const { id } = validated(c, 'param', IdParam);
    // The file is named by a notification of the store, in the outbox state: never by the request alone.
    const [row] = await c.var.scope.db
      .select({ id: notifications.id, status: notifications.status })
      .from(notifications)
      .where(eq(notifications.id, id.toLowerCase()));
    const outbox = c.var.scope.mailOutbox;
    const bytes = row?.status === 'outbox' && outbox ? await outbox.read(row.id) : null;
    if (!bytes) throw new ProblemError('NOT_FOUND', { detail: 'no mail of this notification in the outbox' });
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': 'message/rfc822',
      'Content-Disposition': `attachment; filename="${row!.id}.eml"`,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    });
  });
  app.openapi(ownList, async (c) => {
    const q = validated(c, 'query', OwnQuery);
    return c.json(listPage(await listNotifications(c.var.scope.db, { ...q, userId: c.var.principal.user.id }), q), 200);
  });
}

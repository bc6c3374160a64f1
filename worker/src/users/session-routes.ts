/** Listing and ending sessions: the caller's own, and any user's for admins. */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ANYONE, adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { listSessions, revokeSessions, sessionPolicy, type SessionRow } from '../accounts/sessions.js';
import { liveAccount } from '../accounts/lookup.js';
import type { UserRow } from '../accounts/model.js';
import { isoTime } from '../http/iso-time.js';
import { listAllSessions } from '../accounts/session-list.js';
import { pageOf, pageQuery } from '../http/paging.js';

const SessionSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['cookie', 'oauth']),
    createdAt: z.string(),
    lastSeenAt: z.string().openapi({ description: 'updated at most once a minute' }),
    expiresAt: z
      .string()
      .openapi({ description: 'absolute end; the session also ends after SESSION_IDLE_TIMEOUT_MIN idle' }),
    userAgent: z.string().nullable(),
    authMethod: z
      .enum(['local_password', 'ldap_password', 'oidc', 'passkey'])
      .nullable()
      .openapi({ description: 'how the login was proven (null: a session from before this was recorded)' }),
    authenticatedAt: z
      .string()
      .nullable()
      .openapi({ description: 'when; issuing API tokens needs a recent password login' }),
    current: z.boolean().openapi({ description: 'the session of this request' }),
  })
  .openapi('Session');
const SessionList = z.object({ items: z.array(SessionSchema) }).openapi('SessionList');

const toPublic = (s: SessionRow, currentId: string | undefined) => ({
  id: s.id,
  kind: s.kind,
  createdAt: isoTime(s.createdAt),
  lastSeenAt: isoTime(s.lastSeenAt),
  expiresAt: isoTime(s.expiresAt),
  userAgent: s.userAgent,
  authMethod: s.authMethod,
  authenticatedAt: s.authenticatedAt === null ? null : isoTime(s.authenticatedAt),
  current: s.id === currentId,
});

const AccountSessionSchema = SessionSchema.extend({
  user: z
    .object({ id: z.string(), login: z.string(), displayName: z.string() })
    .openapi({ description: 'the account; end the session with DELETE /v4/users/{userId}/sessions/{sessionId}' }),
}).openapi('AccountSession');
const AccountSessionPage = pageOf(AccountSessionSchema, 'AccountSessionPage');
const AllQuery = z.object({
  ...pageQuery,
  login: z
    .string()
    .trim()
    .max(150)
    .optional()
    .openapi({ description: 'a substring of the login (case-insensitive; `%` and `_` match themselves)' }),
});

const SessionId = z.string().min(1).max(64);
const MeParams = z.object({ sessionId: SessionId });
const UserParams = z.object({ userId: z.string().min(1).max(64) });
const UserSessionParams = z.object({ userId: z.string().min(1).max(64), sessionId: SessionId });

const listMine = protectedRoute(
  { ...ANYONE, tokenScope: 'account:read' },
  {
    method: 'get',
    operationId: 'listOwnSessions',
    path: '/v4/users/me/sessions',
    tags: ['user_v4'],
    summary: "The caller's live sessions",
    responses: { 200: { description: 'the sessions', content: { 'application/json': { schema: SessionList } } } },
  },
);
const revokeMine = protectedRoute(
  { ...ANYONE, tokenScope: 'account:write' },
  {
    method: 'delete',
    operationId: 'endOwnSession',
    path: '/v4/users/me/sessions/{sessionId}',
    tags: ['user_v4'],
    summary: 'End one of the caller’s sessions',
    description: 'The session is refused at once.',
    request: { params: MeParams },
    responses: { 204: { description: 'ended' }, ...problemResponses(404) },
  },
);
const listUser = protectedRoute(adminOnly(superAccess.allowed, 'users:read'), {
  method: 'get',
  operationId: 'listUserSessions',
  path: '/v4/users/{userId}/sessions',
  tags: ['user_v4'],
  summary: "A user's live sessions",
  request: { params: UserParams },
  responses: {
    200: { description: 'the sessions', content: { 'application/json': { schema: SessionList } } },
    ...problemResponses(404),
  },
});
const revokeUser = protectedRoute(adminOnly(superAccess.unprivilegedTargets('end the sessions of'), 'users:write'), {
  method: 'delete',
  operationId: 'endUserSession',
  path: '/v4/users/{userId}/sessions/{sessionId}',
  tags: ['user_v4'],
  summary: "End one of a user's sessions",
  description: 'The session is refused at once.',
  request: { params: UserSessionParams },
  responses: { 204: { description: 'ended' }, ...problemResponses(404) },
});

const listAll = protectedRoute(adminOnly(superAccess.allowed, 'users:read'), {
  method: 'get',
  operationId: 'listAllSessions',
  path: '/v4/sessions',
  tags: ['user_v4'],
  summary: 'Live sessions of all accounts',
  description:
    'Paginated (limit at most 100, offset), most recently used first, filtered by a substring of the login. ' +
    'Each names its account; ending one is DELETE /v4/users/{userId}/sessions/{sessionId} (endUserSession).',
  request: { query: AllQuery },
  responses: {
    200: { description: 'a page of sessions', content: { 'application/json': { schema: AccountSessionPage } } },
    ...problemResponses(422),
  },
});

async function list(c: Context<AppEnv>, user: UserRow) {
  const rows = await listSessions(c.var.scope.db, user.id, c.var.scope.now(), sessionPolicy(c.var.scope.config));
  return c.json({ items: rows.map((s) => toPublic(s, c.var.principal.sessionId)) }, 200);
}

async function revoke(c: Context<AppEnv>, user: UserRow, sessionId: string) {
  const actor = c.var.principal.user;
  const reason = actor.id === user.id ? 'user' : 'admin';
  const now = c.var.scope.now();
  const ended = await revokeSessions(c.var.scope.db, user, {
    id: sessionId,
    now,
    actor,
    reason,
    request: c.var.scope.request,
  });
  if (ended === 0) throw new ProblemError('NOT_FOUND', { detail: 'no such live session' });
  return c.body(null, 204);
}

/** Registers the session listing and revocation endpoints. */
export function registerUserSessions(app: App): void {
  app.openapi(listMine, (c) => list(c, c.var.principal.user));
  app.openapi(listAll, async (c) => {
    const q = validated(c, 'query', AllQuery);
    const { rows, total } = await listAllSessions(
      c.var.scope.db,
      q,
      c.var.scope.now(),
      sessionPolicy(c.var.scope.config),
    );
    const items = rows.map((r) => ({ ...toPublic(r.session, c.var.principal.sessionId), user: r.user }));
    return c.json({ items, total, limit: q.limit, offset: q.offset }, 200);
  });
  app.openapi(revokeMine, (c) => revoke(c, c.var.principal.user, validated(c, 'param', MeParams).sessionId));
  app.openapi(listUser, async (c) =>
    list(c, await liveAccount(c.var.scope.db, validated(c, 'param', UserParams).userId)),
  );
  app.openapi(revokeUser, async (c) => {
    const p = validated(c, 'param', UserSessionParams);
    return revoke(c, await liveAccount(c.var.scope.db, p.userId), p.sessionId);
  });
}

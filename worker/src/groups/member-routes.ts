/**
 * A group's members under /v4/groups/{id}/members (docs/groups.md): read by admins and auditors; local
 * memberships added and removed by admins, never with lent rights. The groups themselves: routes.ts, which
 * registers these after its own.
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { liveAccount } from '../accounts/lookup.js';
import { ANY_CREDENTIAL, adminOnly, protectedRoute, type Access } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App, AppEnv } from '../http/context.js';
import { isoTime } from '../http/iso-time.js';
import { pageOf, pageQuery } from '../http/paging.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';

import { changeLocalMembership, groupById, memberPage } from './store.js';

export const Source = z.enum(['local', 'ldap', 'oidc']);
const Member = z
  .object({
    id: z.string(),
    login: z.string(),
    displayName: z.string(),
    source: Source.openapi({
      description: "local: an administrator's membership; ldap, oidc: read at the account's last login of that source",
    }),
    readAt: z.string().openapi({ description: 'when it was added (local) or last read (ldap, oidc)' }),
  })
  .openapi('GroupMember');
export const IdParam = z.object({ id: z.string().max(64) });
const MemberParams = z.object({ id: z.string().max(64), userId: z.string().max(64) });

// The groups' access too (routes.ts imports it).
export const READERS: Access = {
  schemes: ANY_CREDENTIAL,
  roles: ['admin', 'auditor'],
  superAccess: superAccess.allowed,
  tokenScope: 'users:read',
};
export const WRITERS = (what: string): Access => adminOnly(superAccess.refused(what), 'users:write');

export const path = '/v4/groups';
export const base = { tags: ['groups'] };

const membersRoute = protectedRoute(READERS, {
  ...base,
  method: 'get',
  operationId: 'listGroupMembers',
  path: `${path}/{id}/members`,
  summary: "A group's members",
  description: 'Live accounts, one entry per membership (an account may be a member locally and from its source).',
  request: { params: IdParam, query: z.object(pageQuery) },
  responses: {
    200: {
      description: 'a page of memberships',
      content: { 'application/json': { schema: pageOf(Member, 'GroupMemberPage') } },
    },
    ...problemResponses(404),
  },
});
const addMemberRoute = protectedRoute(WRITERS('change group memberships'), {
  ...base,
  method: 'put',
  operationId: 'addGroupMember',
  path: `${path}/{id}/members/{userId}`,
  summary: 'Add an account to a group (a local membership)',
  description: 'Idempotent: 204 whether or not the account was a member. 404 for an unknown group or account.',
  request: { params: MemberParams },
  responses: { 204: { description: 'the account is a local member' }, ...problemResponses(404) },
});
const removeMemberRoute = protectedRoute(WRITERS('change group memberships'), {
  ...base,
  method: 'delete',
  operationId: 'removeGroupMember',
  path: `${path}/{id}/members/{userId}`,
  summary: "Remove an account's local membership",
  description:
    "Memberships read at LDAP and OIDC logins are the source's: they stay until the next login no longer reads " +
    'them. 404 when the account has no local membership of the group.',
  request: { params: MemberParams },
  responses: { 204: { description: 'removed' }, ...problemResponses(404) },
});

/** Registers /v4/groups/{id}/members. */
export function registerGroupMembers(app: App): void {
  app.openapi(membersRoute, async (c) => {
    const { db } = c.var.scope;
    const g = await groupById(db, validated(c, 'param', IdParam).id);
    const { limit, offset } = validated(c, 'query', z.object(pageQuery));
    const { rows, total } = await memberPage(db, g.id, limit, offset);
    const items = rows.map((r) => ({ ...r, readAt: isoTime(r.readAt) }));
    return c.json({ items, total, limit, offset }, 200);
  });

  /** Adds or removes a local membership (store.ts). */
  const membership = async (c: Context<AppEnv>, adding: boolean) => {
    const { db } = c.var.scope;
    const params = validated(c, 'param', MemberParams);
    const g = await groupById(db, params.id);
    const user = await liveAccount(db, params.userId);
    const who = { actor: c.var.principal.user, request: c.var.scope.request };
    await changeLocalMembership(db, g, user, adding, c.var.scope.now(), who);
    return c.body(null, 204);
  };
  app.openapi(addMemberRoute, (c) => membership(c, true));
  app.openapi(removeMemberRoute, (c) => membership(c, false));
}

/**
 * Groups under /v4/groups (docs/groups.md): administrators make local groups and add or remove
 * accounts; groups read at LDAP and OIDC logins appear here too, with their memberships. Admins and
 * auditors read them; only admins change them, and never with lent rights (super-access): a
 * membership may open a protected service, which would outlive the loan. Its members: member-routes.ts;
 * the reads and the memberships' writes: store.ts.
 */
import { z } from '@hono/zod-openapi';
import { eq } from 'drizzle-orm';
import type { Context } from 'hono';
import { groups } from '../../../schema/index.js';
import { groupChangeStatements, groupNameKey } from '../accounts/group-members.js';
import { runAccountBatch } from '../accounts/writes.js';
import { auditInsert } from '../audit/events.js';
import { protectedRoute } from '../auth/protected-route.js';
import type { App, AppEnv } from '../http/context.js';
import { isoTime } from '../http/iso-time.js';
import { pageOf, pageQuery } from '../http/paging.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import { GROUP_NAME_RULE, rolesOfGroup } from './names.js';
import { base, IdParam, path, READERS, registerGroupMembers, Source, WRITERS } from './member-routes.js';
import { type GroupRow, groupById, groupPage, withMembers } from './store.js';

const Name = z
  .string()
  .regex(GROUP_NAME_RULE, 'up to 128 characters without commas, "=", control characters or blanks at either end')
  .openapi({ example: 'developers' });
const Description = z.string().max(500);

const Create = z
  .object({ name: Name, description: Description.default('') })
  .strict()
  .openapi('GroupCreate');
const Patch = z
  .object({
    name: Name.openapi({ description: "local groups only: the name of a directory's or a provider's group is theirs" }),
    description: Description,
  })
  .partial()
  .strict()
  .openapi('GroupPatch');
const Public = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    source: Source.openapi({
      description: 'local: made by an administrator; ldap, oidc: first read at a login of that source',
    }),
    sourceName: z.string().nullable().openapi({ description: 'the LDAP server record or OIDC provider (ldap, oidc)' }),
    members: z.number().int().openapi({ description: 'live accounts with a membership of any source' }),
    roles: z.array(z.enum(['admin', 'auditor'])).openapi({
      description:
        'the roles GROUP_ROLES gives its members at their LDAP and OIDC logins (docs/groups.md, "Roles from groups")',
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Group');

const one = { description: 'the group', content: { 'application/json': { schema: Public } } };

const listRoute = protectedRoute(READERS, {
  ...base,
  method: 'get',
  operationId: 'listGroups',
  path,
  summary: 'Groups',
  description: 'Every group, local or read at LDAP and OIDC logins, by name.',
  request: { query: z.object(pageQuery) },
  responses: {
    200: { description: 'a page of groups', content: { 'application/json': { schema: pageOf(Public, 'GroupPage') } } },
  },
});
const createRoute = protectedRoute(WRITERS('make groups'), {
  ...base,
  method: 'post',
  operationId: 'createGroup',
  path,
  summary: 'Make a local group',
  description: 'Names are unique whatever their case: 409 when a group of that name exists (of any source).',
  request: { body: { required: true, content: { 'application/json': { schema: Create } } } },
  responses: { 201: one, ...problemResponses(400, 409, 422) },
});
const getRoute = protectedRoute(READERS, {
  ...base,
  method: 'get',
  operationId: 'getGroup',
  path: `${path}/{id}`,
  summary: 'Read a group',
  request: { params: IdParam },
  responses: { 200: one, ...problemResponses(404) },
});
const patchRoute = protectedRoute(WRITERS('change groups'), {
  ...base,
  method: 'patch',
  operationId: 'updateGroup',
  path: `${path}/{id}`,
  summary: 'Rename a group or change its description',
  description:
    "Omitted fields keep their values. Only a local group is renamed (422 naming `name` for a directory's or a " +
    "provider's group); 409 when the new name is another group's. The members' groups follow at once.",
  request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: Patch } } } },
  responses: { 200: one, ...problemResponses(400, 404, 409, 422) },
});
const deleteRoute = protectedRoute(WRITERS('remove groups'), {
  ...base,
  method: 'delete',
  operationId: 'deleteGroup',
  path: `${path}/{id}`,
  summary: 'Remove a group and its memberships',
  description: "A directory's or a provider's group comes back at the next login of a member that reads it from there.",
  request: { params: IdParam },
  responses: { 204: { description: 'removed' }, ...problemResponses(404) },
});

function toPublic(g: GroupRow, members: number, mapping: readonly string[]): z.infer<typeof Public> {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    source: g.source,
    sourceName: g.sourceName,
    members,
    roles: rolesOfGroup(mapping, g.name),
    createdAt: isoTime(g.createdAt),
    updatedAt: isoTime(g.updatedAt),
  };
}

async function publicGroup(c: Context<AppEnv>, id: string): Promise<z.infer<typeof Public>> {
  const [row] = await withMembers(c.var.scope.db).where(eq(groups.id, id)).limit(1);
  if (!row) throw new ProblemError('NOT_FOUND', { detail: 'no such group' });
  return toPublic(row.group, row.members, c.var.scope.config.get('GROUP_ROLES'));
}

function nameTaken(name: string): ProblemError {
  return new ProblemError('CONFLICT', {
    detail: `a group named ${JSON.stringify(name)} exists (names are unique whatever their case)`,
    extensions: { errors: [{ location: 'json', path: 'name', message: 'taken' }] },
  });
}

/** Registers /v4/groups. */
export function registerGroups(app: App): void {
  const event = (c: Context<AppEnv>, type: Parameters<typeof auditInsert>[2]['type'], data: Record<string, unknown>) =>
    auditInsert(c.var.scope.db, c.var.scope.now(), {
      stream: 'crud_admin',
      type,
      actor: c.var.principal.user,
      request: c.var.scope.request,
      data,
    });

  app.openapi(listRoute, async (c) => {
    const { limit, offset } = validated(c, 'query', z.object(pageQuery));
    const { rows, total } = await groupPage(c.var.scope.db, limit, offset);
    const mapping = c.var.scope.config.get('GROUP_ROLES');
    const items = rows.map((r) => toPublic(r.group, r.members, mapping));
    return c.json({ items, total, limit, offset }, 200);
  });

  app.openapi(createRoute, async (c) => {
    const { db } = c.var.scope;
    const { name, description } = validated(c, 'json', Create);
    const now = c.var.scope.now();
    const row: GroupRow = {
      id: crypto.randomUUID(),
      name: name.normalize('NFC'),
      nameKey: groupNameKey(name),
      description,
      source: 'local',
      sourceName: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await db.batch([db.insert(groups).values(row), event(c, 'group.created', { id: row.id, name: row.name })]);
    } catch (err) {
      throw isUniqueViolation(err) ? nameTaken(name) : err;
    }
    return c.json(toPublic(row, 0, c.var.scope.config.get('GROUP_ROLES')), 201);
  });

  app.openapi(getRoute, async (c) => c.json(await publicGroup(c, validated(c, 'param', IdParam).id), 200));

  app.openapi(patchRoute, async (c) => {
    const { db } = c.var.scope;
    const before = await groupById(db, validated(c, 'param', IdParam).id);
    const change = validated(c, 'json', Patch);
    const name = change.name?.normalize('NFC');
    if (name !== undefined && name !== before.name && before.source !== 'local')
      throw new ProblemError('VALIDATION', {
        detail:
          `the group is read from ${before.source === 'ldap' ? 'an LDAP server' : 'an OIDC provider'}: its name ` +
          `is the source's`,
        extensions: { errors: [{ location: 'json', path: 'name', message: 'only a local group is renamed' }] },
      });
    const now = c.var.scope.now();
    const after = {
      ...(name !== undefined ? { name, nameKey: groupNameKey(name) } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      updatedAt: now,
    };
    const changed = Object.keys(change);
    const update = db.update(groups).set(after).where(eq(groups.id, before.id));
    const audit = event(c, 'group.updated', {
      id: before.id,
      name: name ?? before.name,
      changed,
      ...(name !== undefined && name !== before.name ? { before: before.name } : {}),
    });
    try {
      // A rename rewrites the members' groups (their rows: accounts/group-members.ts).
      const renamed = name !== undefined && name !== before.name;
      await runAccountBatch(
        db,
        renamed ? await groupChangeStatements(db, before.id, [update, audit]) : [update, audit],
      );
    } catch (err) {
      throw isUniqueViolation(err) ? nameTaken(name ?? before.name) : err;
    }
    return c.json(await publicGroup(c, before.id), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { db } = c.var.scope;
    const g = await groupById(db, validated(c, 'param', IdParam).id);
    const remove = db.delete(groups).where(eq(groups.id, g.id));
    const audit = event(c, 'group.deleted', { id: g.id, name: g.name, source: g.source });
    await runAccountBatch(db, await groupChangeStatements(db, g.id, [remove, audit], { removing: true }));
    return c.body(null, 204);
  });
  registerGroupMembers(app);
}

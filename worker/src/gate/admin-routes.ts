/**
 * The protected services' records, managed by admins under /v4/services (docs/integration.md); their reads,
 * rules and writes: service-records.ts.
 */
import { z } from '@hono/zod-openapi';
import { GATE_DOCS as DOCS } from './gate-route-docs.js';
import type { Context } from 'hono';
import { ROLES } from '../accounts/model.js';
import { auditInsert, type AuditEventType } from '../audit/events.js';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App, AppEnv } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { DEFAULT_HEADERS } from './decision.js';
import { normaliseHost, normalisePrefix } from './target.js';
import { dropServicesSnapshot, listServices, newSecret, secretHash, type ServiceRow } from './services.js';
import {
  addService,
  changeService,
  removeService,
  rotateServiceSecret,
  serviceByName,
  serviceTargets,
} from './service-records.js';

const Name = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, "-" and "_"');
const HeaderName = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name: letters, digits and "-"');
const Host = z
  .string()
  .max(300)
  .refine((h) => normaliseHost(h) !== undefined, 'a host name, with an optional port (no scheme, path or userinfo)')
  .openapi({ description: DOCS.admin1, example: 'app.example.com' });
const Prefix = z
  .string()
  .max(2000)
  .refine((p) => normalisePrefix(p) !== undefined, 'an http(s) URL without userinfo, query or fragment')
  .openapi({ example: 'https://example.com/grafana/' });
const Access = z
  .object({
    anyAccount: z.boolean().openapi({ description: DOCS.admin2 }),
    roles: z.array(z.enum(ROLES)).max(3).default([]),
    accounts: z
      .array(z.string().min(1).max(256))
      .max(1000)
      .default([])
      .openapi({ description: 'account ids or logins' }),
    groups: z.array(z.string().min(1).max(256)).max(1000).default([]).openapi({ description: 'group names' }),
  })
  .strict()
  .openapi('ServiceAccess');
const Headers = z
  .object({ user: HeaderName, name: HeaderName, email: HeaderName, groups: HeaderName, role: HeaderName })
  .partial()
  .strict()
  .openapi('ServiceHeaders', { description: DOCS.admin3 });
const Fields = {
  hosts: z.array(Host).max(50).openapi({ description: DOCS.admin4 }),
  prefixes: z.array(Prefix).max(50).openapi({ description: DOCS.admin5 }),
  access: Access,
  requireSecondFactor: z.boolean().openapi({
    description: DOCS.admin6,
  }),
  allowBasic: z.boolean().openapi({ description: DOCS.admin7 }),
  headers: Headers,
};
const Create = z
  .object({
    name: Name,
    ...Fields,
    hosts: Fields.hosts.default([]),
    prefixes: Fields.prefixes.default([]),
    access: Access.default({ anyAccount: true, roles: [], accounts: [], groups: [] }),
    requireSecondFactor: Fields.requireSecondFactor.default(false),
    allowBasic: Fields.allowBasic.default(false),
    headers: Headers.default({}),
  })
  .strict()
  .openapi('ServiceCreate');
const Patch = z.object(Fields).partial().strict().openapi('ServicePatch');
const Public = z
  .object({
    name: z.string(),
    hosts: z.array(z.string()),
    prefixes: z.array(z.string()),
    access: z.object({
      anyAccount: z.boolean(),
      roles: z.array(z.string()),
      accounts: z.array(z.string()),
      groups: z.array(z.string()),
    }),
    requireSecondFactor: z.boolean(),
    allowBasic: z.boolean(),
    headers: z.object({ user: z.string(), name: z.string(), email: z.string(), groups: z.string(), role: z.string() }),
    clientId: z.string().openapi({ description: DOCS.admin8 }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Service');
const WithSecret = Public.extend({
  clientSecret: z.string().openapi({ description: DOCS.admin9 }),
}).openapi('ServiceWithSecret');
const NameParam = z.object({ name: Name });

function toPublic(r: ServiceRow): z.infer<typeof Public> {
  return {
    name: r.name,
    hosts: r.hosts,
    prefixes: r.prefixes,
    access: r.access,
    requireSecondFactor: r.requireSecondFactor,
    allowBasic: r.allowBasic,
    headers: r.headers,
    clientId: r.clientId,
    createdAt: new Date(r.createdAt).toISOString(),
    updatedAt: new Date(r.updatedAt).toISOString(),
  };
}

const base = { tags: ['services'] };
const one = { description: 'the service', content: { 'application/json': { schema: Public } } };
const withSecret = {
  description: DOCS.admin10,
  content: { 'application/json': { schema: WithSecret } },
};
const listRoute = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  ...base,
  method: 'get',
  operationId: 'listServices',
  path: '/v4/services',
  summary: 'Protected services',
  description: DOCS.admin11,
  responses: {
    200: {
      description: 'the services',
      content: { 'application/json': { schema: z.object({ items: z.array(Public) }) } },
    },
  },
});
const createRouteDef = protectedRoute(
  { ...adminOnly(superAccess.refused('add protected services'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'post',
    operationId: 'createService',
    path: '/v4/services',
    summary: 'Add a protected service',
    description: DOCS.admin12,
    request: { body: { required: true, content: { 'application/json': { schema: Create } } } },
    responses: { 201: withSecret, ...problemResponses(400, 409, 422) },
  },
);
const getRoute = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  ...base,
  method: 'get',
  operationId: 'getService',
  path: '/v4/services/{name}',
  summary: 'Read a protected service',
  request: { params: NameParam },
  responses: { 200: one, ...problemResponses(404) },
});
const patchRoute = protectedRoute(
  { ...adminOnly(superAccess.refused('change protected services'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'patch',
    operationId: 'updateService',
    path: '/v4/services/{name}',
    summary: DOCS.admin13,
    description: DOCS.admin14,
    request: { params: NameParam, body: { required: true, content: { 'application/json': { schema: Patch } } } },
    responses: { 200: one, ...problemResponses(400, 404, 422) },
  },
);
const deleteRoute = protectedRoute(
  { ...adminOnly(superAccess.refused('remove protected services'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'delete',
    operationId: 'deleteService',
    path: '/v4/services/{name}',
    summary: DOCS.admin15,
    description: DOCS.admin16,
    request: { params: NameParam },
    responses: { 204: { description: 'removed' }, ...problemResponses(404) },
  },
);
const rotateRoute = protectedRoute(
  { ...adminOnly(superAccess.refused('rotate service secrets'), 'none'), stepUp: true },
  {
    ...base,
    method: 'post',
    operationId: 'rotateServiceSecret',
    path: '/v4/services/{name}/secret',
    summary: DOCS.admin17,
    description: DOCS.admin18,
    request: { params: NameParam },
    responses: { 200: withSecret, ...problemResponses(404) },
  },
);

const audited = (c: Context<AppEnv>) => (type: AuditEventType, data: Record<string, unknown>) =>
  auditInsert(c.var.scope.db, c.var.scope.now(), {
    stream: 'crud_admin',
    type,
    actor: c.var.principal.user,
    request: c.var.scope.request,
    data,
  });

const byName = (c: Context<AppEnv>) => serviceByName(c.var.scope.db, validated(c, 'param', NameParam).name);

/** Registers the services' administration. */
export function registerServiceAdmin(app: App): void {
  const changed = (c: Context<AppEnv>) => dropServicesSnapshot(c.var.deps);

  app.openapi(listRoute, async (c) => {
    const { db, config } = c.var.scope;
    return c.json({ items: (await listServices(db, config, c.var.scope.now())).map(toPublic) }, 200);
  });

  app.openapi(createRouteDef, async (c) => {
    const body = validated(c, 'json', Create);
    const now = c.var.scope.now();
    const secret = newSecret();
    // The seeded records first, so that a new service named srm is a conflict rather than a seed lost.
    await listServices(c.var.scope.db, c.var.scope.config, now);
    const row: ServiceRow = {
      id: crypto.randomUUID(),
      name: body.name,
      ...serviceTargets(body.hosts, body.prefixes),
      access: body.access,
      requireSecondFactor: body.requireSecondFactor,
      allowBasic: body.allowBasic,
      headers: { ...DEFAULT_HEADERS, ...body.headers },
      clientId: `svc-${body.name}`,
      secretHash: secretHash(secret),
      createdAt: now,
      updatedAt: now,
    };
    await addService(c.var.scope.db, row, audited(c));
    changed(c);
    return c.json({ ...toPublic(row), clientSecret: secret }, 201);
  });

  app.openapi(getRoute, async (c) => c.json(toPublic(await byName(c)), 200));

  app.openapi(patchRoute, async (c) => {
    const before = await byName(c);
    const body = validated(c, 'json', Patch);
    const set: Partial<ServiceRow> = {
      ...(body.access ? { access: body.access } : {}),
      ...(body.requireSecondFactor !== undefined ? { requireSecondFactor: body.requireSecondFactor } : {}),
      ...(body.allowBasic !== undefined ? { allowBasic: body.allowBasic } : {}),
      ...(body.headers ? { headers: { ...before.headers, ...body.headers } } : {}),
      ...(body.hosts || body.prefixes
        ? serviceTargets(body.hosts ?? before.hosts, body.prefixes ?? before.prefixes)
        : {}),
      updatedAt: c.var.scope.now(),
    };
    await changeService(c.var.scope.db, before, set, Object.keys(body), audited(c));
    changed(c);
    return c.json(toPublic({ ...before, ...set }), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const row = await byName(c);
    await removeService(c.var.scope.db, row, audited(c));
    changed(c);
    return c.body(null, 204);
  });

  app.openapi(rotateRoute, async (c) => {
    const row = await byName(c);
    const now = c.var.scope.now();
    const secret = await rotateServiceSecret(c.var.scope.db, row, now, audited(c));
    changed(c);
    return c.json({ ...toPublic({ ...row, updatedAt: now }), clientSecret: secret }, 200);
  });
}

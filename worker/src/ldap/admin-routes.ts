/**
 * LDAP server records, managed by admins under /v3/settings/ldap-servers, and their "test
 * connection" operation (test-routes.ts). The service account's password is stored encrypted and never returned;
 * the record's rules: record-rules.ts.
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App, AppEnv } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { ldapServerRecords, type LdapServerRow } from './records.js';
import { assertBindPair, warningsOf } from './record-rules.js';
import { base, Name, NameParam, path, registerLdapServerTest } from './test-routes.js';
import { W } from './ldap-api-words.js';

// No i or s flags: the OpenAPI description publishes these as patterns, which carry no flags.
const Url = z
  .string()
  .regex(/^[Ll][Dd][Aa][Pp][Ss]?:\/\/[^\s/?#]+\/?$/, 'an ldap:// or ldaps:// URL (host and optional port, no path)');
const Attr = z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, 'an attribute name');
const Dn = z.string().min(1).max(1024);
const Pem = z
  .string()
  .max(65_536)
  .regex(/-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/, 'PEM certificate(s)');
const Filter = z
  .string()
  .max(1024)
  .regex(/^\([\s\S]*\)$/, 'an LDAP filter in parentheses')
  .refine((f) => f.includes('{login}'), 'must contain {login}, where the escaped login goes');

const GroupFilter = z
  .string()
  .max(1024)
  .regex(/^\([\s\S]*\)$/, 'an LDAP filter in parentheses')
  .refine((f) => f.includes('{dn}'), "must contain {dn}, where the user's escaped DN goes");

const Fields = {
  urls: z
    .array(Url)
    .min(1)
    .max(8)
    .openapi({ description: W.d1, example: ['ldaps://ldap.example.com'] }),
  startTls: z.boolean().openapi({ description: W.d2 }),
  caCert: Pem.nullable().openapi({
    description: W.d3,
  }),
  bindDn: Dn.nullable().openapi({
    description: W.d4,
  }),
  bindPassword: z.string().min(1).max(1024).nullable().openapi({ description: W.d5 }),
  baseDn: Dn.openapi({ example: 'ou=people,dc=example,dc=com' }),
  userFilter: Filter.nullable().openapi({
    description: W.userFilter,
  }),
  attrDisplayName: Attr.nullable(),
  attrEmail: Attr.nullable(),
  attrRole: Attr.nullable().openapi({
    description: W.d6,
  }),
  roleAdminGroup: Dn.nullable(),
  roleAuditorGroup: Dn.nullable(),
  groupMode: z.enum(['none', 'memberOf', 'search']).openapi({
    description: W.d7,
  }),
  groupAttr: Attr.openapi({ description: W.d8 }),
  groupBaseDn: Dn.nullable().openapi({ description: W.d9 }),
  groupFilter: GroupFilter.nullable().openapi({
    description: W.groupFilter,
  }),
  groupNameAttr: Attr.openapi({
    description: W.d10,
  }),
  enabled: z.boolean(),
};
const Create = z
  .object({
    name: Name,
    ...Fields,
    startTls: Fields.startTls.default(false),
    caCert: Fields.caCert.default(null),
    bindDn: Fields.bindDn.default(null),
    bindPassword: Fields.bindPassword.default(null),
    userFilter: Fields.userFilter.default(null),
    attrDisplayName: Fields.attrDisplayName.default('displayName'),
    attrEmail: Fields.attrEmail.default('mail'),
    attrRole: Fields.attrRole.default(null),
    roleAdminGroup: Fields.roleAdminGroup.default(null),
    roleAuditorGroup: Fields.roleAuditorGroup.default(null),
    groupMode: Fields.groupMode.default('none'),
    groupAttr: Fields.groupAttr.default('memberOf'),
    groupBaseDn: Fields.groupBaseDn.default(null),
    groupFilter: Fields.groupFilter.default(null),
    groupNameAttr: Fields.groupNameAttr.default('cn'),
    enabled: Fields.enabled.default(true),
  })
  .strict()
  .openapi('LdapServerCreate');
const Patch = z.object(Fields).partial().strict().openapi('LdapServerPatch');
const LdapWarning = z
  .object({
    code: z.enum(['UNENCRYPTED_BIND']).openapi({
      description: W.d11,
    }),
    urls: z.array(z.string()),
    message: z.string(),
  })
  .openapi('LdapServerWarning');

const Public = z
  .object({
    name: z.string(),
    urls: z.array(z.string()),
    startTls: z.boolean(),
    caCert: z.string().nullable(),
    bindDn: z.string().nullable(),
    bindPasswordSet: z.boolean(),
    baseDn: z.string(),
    userFilter: z.string().nullable(),
    attrDisplayName: z.string().nullable(),
    attrEmail: z.string().nullable(),
    attrRole: z.string().nullable(),
    roleAdminGroup: z.string().nullable(),
    roleAuditorGroup: z.string().nullable(),
    groupMode: z.enum(['none', 'memberOf', 'search']),
    groupAttr: z.string(),
    groupBaseDn: z.string().nullable(),
    groupFilter: z.string().nullable(),
    groupNameAttr: z.string(),
    enabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    warnings: z.array(LdapWarning).openapi({
      description: W.d12,
    }),
  })
  .openapi('LdapServer');

function toPublic(r: LdapServerRow): z.infer<typeof Public> {
  const { bindPasswordEnc, createdAt, updatedAt, ...rest } = r;
  return {
    ...rest,
    bindPasswordSet: bindPasswordEnc !== null,
    createdAt: new Date(createdAt).toISOString(),
    updatedAt: new Date(updatedAt).toISOString(),
    warnings: warningsOf(r),
  };
}

const one = { description: 'the LDAP server record', content: { 'application/json': { schema: Public } } };

// Admin only: the record decides where the service password goes and which roles logins get.
const listRoute = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  ...base,
  method: 'get',
  operationId: 'listLdapServers',
  path,
  summary: 'LDAP server records',
  description: W.d13,
  responses: {
    200: {
      description: 'the records',
      content: { 'application/json': { schema: z.object({ items: z.array(Public) }) } },
    },
  },
});
const createRouteDef = protectedRoute(
  { ...adminOnly(superAccess.refused('add LDAP server records'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'post',
    operationId: 'createLdapServer',
    path,
    summary: W.s14,
    description: W.create,
    request: { body: { required: true, content: { 'application/json': { schema: Create } } } },
    responses: { 201: one, ...problemResponses(400, 409, 422, 503) },
  },
);
const getRoute = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  ...base,
  method: 'get',
  operationId: 'getLdapServer',
  path: `${path}/{name}`,
  summary: W.s15,
  description: W.d16,
  request: { params: NameParam },
  responses: { 200: one, ...problemResponses(404) },
});
const patchRoute = protectedRoute(
  { ...adminOnly(superAccess.refused('change LDAP server records'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'patch',
    operationId: 'updateLdapServer',
    path: `${path}/{name}`,
    summary: W.s17,
    description: W.patch,
    request: { params: NameParam, body: { required: true, content: { 'application/json': { schema: Patch } } } },
    responses: { 200: one, ...problemResponses(400, 404, 422, 503) },
  },
);
const deleteRoute = protectedRoute(
  { ...adminOnly(superAccess.refused('remove LDAP server records'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'delete',
    operationId: 'deleteLdapServer',
    path: `${path}/{name}`,
    summary: W.s18,
    description: W.d19,
    request: { params: NameParam },
    responses: { 204: { description: 'removed' }, ...problemResponses(404) },
  },
);

/** Registers the LDAP server administration. */
export function registerLdapServerAdmin(app: App): void {
  const records = ldapServerRecords;
  const byName = (c: Context<AppEnv>) => records.byName(c.var.scope.db, validated(c, 'param', NameParam).name);

  app.openapi(listRoute, async (c) => c.json({ items: (await records.list(c.var.scope.db)).map(toPublic) }, 200));

  app.openapi(createRouteDef, async (c) => {
    const { bindPassword, ...rest } = validated(c, 'json', Create);
    assertBindPair(rest.bindDn, bindPassword !== null);
    const now = c.var.scope.now();
    const row: LdapServerRow = {
      ...rest,
      bindPasswordEnc: bindPassword === null ? null : await records.seal(c, bindPassword),
      createdAt: now,
      updatedAt: now,
    };
    await records.create(c, row);
    return c.json(toPublic(row), 201);
  });

  app.openapi(getRoute, async (c) => c.json(toPublic(await byName(c)), 200));

  app.openapi(patchRoute, async (c) => {
    const before = await byName(c);
    const { bindPassword, ...rest } = validated(c, 'json', Patch);
    records.assertSecretGivenAgain(before, rest, bindPassword !== undefined);
    const bindDn = rest.bindDn !== undefined ? rest.bindDn : before.bindDn;
    // Clearing the DN clears the password with it; a new password replaces the stored one.
    const bindPasswordEnc =
      bindPassword === null || bindDn === null
        ? null
        : bindPassword !== undefined
          ? await records.seal(c, bindPassword)
          : before.bindPasswordEnc;
    assertBindPair(bindDn, bindPasswordEnc !== null);
    const changed = Object.keys(rest).concat(bindPassword !== undefined ? ['bindPassword'] : []);
    await records.update(c, before, { ...rest, bindPasswordEnc, updatedAt: c.var.scope.now() }, { changed });
    return c.json(toPublic(await records.byName(c.var.scope.db, before.name)), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    await records.remove(c, await byName(c));
    return c.body(null, 204);
  });
  registerLdapServerTest(app);
}

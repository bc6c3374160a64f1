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
import { SEALING_UNAVAILABLE } from '../store/secret-box.js';
import { DEFAULT_GROUP_FILTER, DEFAULT_USER_FILTER, ldapServerRecords, type LdapServerRow } from './records.js';
import { assertBindPair, warningsOf } from './record-rules.js';
import { base, Name, NameParam, path, registerLdapServerTest } from './test-routes.js';

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
    .openapi({ description: 'tried in order until one connects', example: ['ldaps://ldap.example.com'] }),
  startTls: z.boolean().openapi({ description: 'upgrade ldap:// connections with StartTLS before any bind' }),
  caCert: Pem.nullable().openapi({
    description: "PEM CA certificate(s) verifying the directory's TLS; null: the bridge's system roots",
  }),
  bindDn: Dn.nullable().openapi({
    description: "the service account that finds users' entries; null: anonymous search",
  }),
  bindPassword: z.string().min(1).max(1024).nullable().openapi({ description: 'stored encrypted; never returned' }),
  baseDn: Dn.openapi({ example: 'ou=people,dc=example,dc=com' }),
  userFilter: Filter.nullable().openapi({
    description:
      `search filter with {login}; null: ${DEFAULT_USER_FILTER}, or ` +
      `(|(sAMAccountName={login})(userPrincipalName={login})) on Active Directory`,
  }),
  attrDisplayName: Attr.nullable(),
  attrEmail: Attr.nullable(),
  attrRole: Attr.nullable().openapi({
    description:
      'an attribute holding admin, auditor or user, or group DNs (e.g. memberOf) matched with roleAdminGroup ' +
      'and roleAuditorGroup; null: new accounts are users',
  }),
  roleAdminGroup: Dn.nullable(),
  roleAuditorGroup: Dn.nullable(),
  groupMode: z.enum(['none', 'memberOf', 'search']).openapi({
    description:
      'how each login reads the user\'s groups (docs/ldap.md, "Groups"): none; memberOf, the group DNs of the ' +
      "user's `groupAttr` (Active Directory, OpenLDAP's memberof overlay); search, the entries under " +
      '`groupBaseDn` matching `groupFilter`, {dn} standing for the escaped user DN',
  }),
  groupAttr: Attr.openapi({ description: 'the attribute listing the group DNs (memberOf mode)' }),
  groupBaseDn: Dn.nullable().openapi({ description: 'where groups are searched (search mode); null: baseDn' }),
  groupFilter: GroupFilter.nullable().openapi({
    description: `the group search filter (search mode); null: ${DEFAULT_GROUP_FILTER}`,
  }),
  groupNameAttr: Attr.openapi({
    description: "the group entry's attribute naming it (search mode; memberOf: the DN's first RDN value)",
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
      description:
        "UNENCRYPTED_BIND: ldap:// URLs without StartTLS, so the bind passwords (the service account's and " +
        'those of users signing in) travel unencrypted to them',
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
      description: 'what an administrator should know about the record (docs/ldap.md, "Record"); empty when nothing',
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

const PATCH_DESCRIPTION =
  'Omitted fields keep their values. A change that would send the stored service password somewhere new (a URL ' +
  'not in ' +
  'the stored list, StartTLS turned off for ldap:// URLs, another caCert) needs `bindPassword` in the same request: ' +
  'otherwise 422 naming bindPassword, and nothing changes.';

const one = { description: 'the LDAP server record', content: { 'application/json': { schema: Public } } };

// Admin only: the record decides where the service password goes and which roles logins get.
const listRoute = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  ...base,
  method: 'get',
  operationId: 'listLdapServers',
  path,
  summary: 'LDAP server records',
  description: 'Service passwords are never returned.',
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
    summary: 'Add an LDAP server record',
    description:
      'The name is the value of X-LDAP-Name; it is public (a sign-in page offers it, and logins name an unknown ' +
      'one), so it must reveal nothing secret. 409 when the name is taken. ' +
      SEALING_UNAVAILABLE,
    request: { body: { required: true, content: { 'application/json': { schema: Create } } } },
    responses: { 201: one, ...problemResponses(400, 409, 422, 503) },
  },
);
const getRoute = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  ...base,
  method: 'get',
  operationId: 'getLdapServer',
  path: `${path}/{name}`,
  summary: 'Read an LDAP server record',
  description: 'Service passwords are never returned.',
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
    summary: 'Change an LDAP server record',
    description: `${PATCH_DESCRIPTION} ${SEALING_UNAVAILABLE}`,
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
    summary: 'Remove an LDAP server record',
    description: 'Accounts of this server stay, but cannot log in until a record of the same name exists again.',
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

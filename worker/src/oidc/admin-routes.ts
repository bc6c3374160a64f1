/** OIDC identity provider records, managed by admins under /v3/settings/identity-providers. */
import { z } from '@hono/zod-openapi';
import { and, eq } from 'drizzle-orm';
import type { Context } from 'hono';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App, AppEnv } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { identityProviders, userIdentities } from '../../../schema/index.js';
import { sealedRecords } from '../settings/sealed-records.js';
import { W } from './oidc-api-words.js';

type ProviderRow = typeof identityProviders.$inferSelect;

const Name = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, "-" and "_"');
const Claim = z.string().min(1).max(100);
const Fields = {
  issuer: z.url().max(500).openapi({ description: W.d1 }),
  clientId: z.string().min(1).max(300),
  clientSecret: z.string().min(1).max(1000).openapi({ description: W.d2 }),
  scopes: z
    .string()
    .min(1)
    .max(500)
    .regex(/(^|\s)openid(\s|$)/, 'must include openid'),
  claimLogin: Claim,
  claimDisplayName: Claim,
  claimEmail: Claim,
  claimRole: Claim.nullable(),
  claimGroups: Claim.nullable().openapi({
    description: W.d3,
    example: 'groups',
  }),
  trustMfaClaims: z.boolean().openapi({
    description: W.d4,
  }),
  acceptedAcr: z.array(z.string().min(1).max(200)).max(20).openapi({ description: W.d5 }),
  enabled: z.boolean(),
};
const Create = z
  .object({
    name: Name,
    ...Fields,
    scopes: Fields.scopes.default('openid profile email'),
    claimLogin: Claim.default('preferred_username'),
    claimDisplayName: Claim.default('name'),
    claimEmail: Claim.default('email'),
    claimRole: Claim.nullable().default(null),
    claimGroups: Fields.claimGroups.default(null),
    trustMfaClaims: Fields.trustMfaClaims.default(false),
    acceptedAcr: Fields.acceptedAcr.default([]),
    enabled: z.boolean().default(true),
  })
  .strict()
  .openapi('IdentityProviderCreate');
const Patch = z
  .object({
    ...Fields,
    relinkIdentities: z.boolean().openapi({
      description: W.d6,
    }),
  })
  .partial()
  .strict()
  .openapi('IdentityProviderPatch');
const Public = z
  .object({
    name: z.string(),
    issuer: z.string(),
    clientId: z.string(),
    clientSecretSet: z.boolean(),
    scopes: z.string(),
    claimLogin: z.string(),
    claimDisplayName: z.string(),
    claimEmail: z.string(),
    claimRole: z.string().nullable(),
    claimGroups: z.string().nullable(),
    trustMfaClaims: z.boolean(),
    acceptedAcr: z.array(z.string()),
    enabled: z.boolean(),
    loginPath: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('IdentityProvider');
const NameParam = z.object({ name: Name });

function toPublic(p: ProviderRow, root: string): z.infer<typeof Public> {
  return {
    name: p.name,
    issuer: p.issuer,
    clientId: p.clientId,
    clientSecretSet: p.clientSecretEnc !== '',
    scopes: p.scopes,
    claimLogin: p.claimLogin,
    claimDisplayName: p.claimDisplayName,
    claimEmail: p.claimEmail,
    claimRole: p.claimRole,
    claimGroups: p.claimGroups,
    trustMfaClaims: p.trustMfaClaims,
    acceptedAcr: p.acceptedAcr,
    enabled: p.enabled,
    loginPath: `${root}/v3/oidc/login/${p.name}`,
    createdAt: new Date(p.createdAt).toISOString(),
    updatedAt: new Date(p.updatedAt).toISOString(),
  };
}
const one = { description: 'the provider', content: { 'application/json': { schema: Public } } };
const Patched = Public.extend({
  relinkedIdentities: z.number().int().optional().openapi({ description: W.d7 }),
}).openapi('IdentityProviderPatched');
// Admin only: a provider record decides which accounts log in, with which roles (claimRole).
const base = { tags: ['settings'] };
const listRoute = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  ...base,
  method: 'get',
  operationId: 'listIdentityProviders',
  path: '/v3/settings/identity-providers',
  summary: W.s8,
  description: W.d9,
  responses: {
    200: {
      description: 'the providers',
      content: { 'application/json': { schema: z.object({ items: z.array(Public) }) } },
    },
  },
});
const createRouteDef = protectedRoute(
  { ...adminOnly(superAccess.refused('add identity providers'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'post',
    operationId: 'createIdentityProvider',
    path: '/v3/settings/identity-providers',
    summary: W.s10,
    description: W.create,
    request: { body: { required: true, content: { 'application/json': { schema: Create } } } },
    responses: { 201: one, ...problemResponses(400, 409, 422, 503) },
  },
);
const getRoute = protectedRoute(adminOnly(superAccess.allowed, 'settings:read'), {
  ...base,
  method: 'get',
  operationId: 'getIdentityProvider',
  path: '/v3/settings/identity-providers/{name}',
  summary: W.s11,
  description: W.d12,
  request: { params: NameParam },
  responses: { 200: one, ...problemResponses(404) },
});
const patchRoute = protectedRoute(
  { ...adminOnly(superAccess.refused('change identity providers'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'patch',
    operationId: 'updateIdentityProvider',
    path: '/v3/settings/identity-providers/{name}',
    summary: W.s13,
    description: W.patch,
    request: { params: NameParam, body: { required: true, content: { 'application/json': { schema: Patch } } } },
    responses: {
      200: { description: 'the provider', content: { 'application/json': { schema: Patched } } },
      ...problemResponses(400, 404, 409, 422, 503),
    },
  },
);
const deleteRoute = protectedRoute(
  { ...adminOnly(superAccess.refused('remove identity providers'), 'settings:write'), stepUp: true },
  {
    ...base,
    method: 'delete',
    operationId: 'deleteIdentityProvider',
    path: '/v3/settings/identity-providers/{name}',
    summary: W.s14,
    request: { params: NameParam },
    responses: { 204: { description: 'removed' }, ...problemResponses(404) },
  },
);

/** The provider records (settings/sealed-records.ts): the client secret is the sealed secret ('' when none). */
const records = sealedRecords<ProviderRow>({
  table: identityProviders,
  noun: 'identity provider',
  article: 'an',
  events: {
    created: 'identity_provider.created',
    updated: 'identity_provider.updated',
    deleted: 'identity_provider.deleted',
  },
  createdData: (row) => ({ name: row.name, issuer: row.issuer, clientId: row.clientId }),
  // The stored secret goes to the token endpoint of whatever issuer is set: whoever may edit the
  // record must not be able to point it at their own server and receive a secret never returned.
  secret: {
    path: 'clientSecret',
    what: 'client secret (it is sent to the issuer)',
    moves: (before, change) =>
      change.issuer !== undefined && change.issuer !== before.issuer ? ['issuer changed'] : [],
    stored: (before) => before.clientSecretEnc !== '',
  },
});
const byName = (c: Context<AppEnv>) => records.byName(c.var.scope.db, validated(c, 'param', NameParam).name);

const root = (c: Context<AppEnv>) => c.var.deps.config.env.get('ROOT_PATH');

/** Registers the provider administration. */
export function registerIdentityProviderAdmin(app: App): void {
  app.openapi(listRoute, async (c) =>
    c.json({ items: (await records.list(c.var.scope.db)).map((p) => toPublic(p, root(c))) }, 200),
  );

  app.openapi(createRouteDef, async (c) => {
    const body = validated(c, 'json', Create);
    const now = c.var.scope.now();
    const { clientSecret, ...rest } = body;
    const row: ProviderRow = {
      ...rest,
      clientSecretEnc: await records.seal(c, clientSecret),
      createdAt: now,
      updatedAt: now,
    };
    await records.create(c, row);
    return c.json(toPublic(row, root(c)), 201);
  });

  app.openapi(getRoute, async (c) => c.json(toPublic(await byName(c), root(c)), 200));

  app.openapi(patchRoute, async (c) => {
    const before = await byName(c);
    const { clientSecret, relinkIdentities, ...rest } = validated(c, 'json', Patch);
    records.assertSecretGivenAgain(before, rest, clientSecret !== undefined);
    const set = {
      ...rest,
      ...(clientSecret ? { clientSecretEnc: await records.seal(c, clientSecret) } : {}),
      updatedAt: c.var.scope.now(),
    };
    const newIssuer = rest.issuer !== undefined && rest.issuer !== before.issuer ? rest.issuer : undefined;
    const db = c.var.scope.db;
    // Moving the links is the admin's explicit confirmation that the new issuer's subjects are the
    // same people; without it they stay under the old issuer (which no longer logs in here).
    const ofThisIssuer = and(
      eq(userIdentities.source, 'oidc'),
      eq(userIdentities.sourceName, before.name),
      eq(userIdentities.issuer, before.issuer),
    );
    const relink =
      newIssuer !== undefined && relinkIdentities === true
        ? db.update(userIdentities).set({ issuer: newIssuer }).where(ofThisIssuer).returning({ id: userIdentities.id })
        : undefined;
    const changed = Object.keys(rest).concat(clientSecret ? ['clientSecret'] : []);
    const issuerData =
      newIssuer !== undefined
        ? { issuer: { from: before.issuer, to: newIssuer }, relinkIdentities: relink !== undefined }
        : {};
    const [relinked] = await records.update(
      c,
      before,
      set,
      { changed, ...issuerData },
      {
        also: relink ? [relink] : [],
        conflict: `some identities of ${before.name} are linked under ${newIssuer} already: nothing was changed`,
      },
    );
    const moved = newIssuer !== undefined ? { relinkedIdentities: relinked ? (relinked as unknown[]).length : 0 } : {};
    return c.json({ ...toPublic(await records.byName(db, before.name), root(c)), ...moved }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    await records.remove(c, await byName(c));
    return c.body(null, 204);
  });
}

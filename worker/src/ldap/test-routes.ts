/**
 * The "test connection" operation of an LDAP server record, POST /v3/settings/ldap-servers/{name}/test; the
 * records themselves: admin-routes.ts, which registers this after its own operations.
 */
import { z } from '@hono/zod-openapi';
import { LdapTestResponseSchema } from '../../../schema/bridge/index.js';
import { adminOnly, protectedRoute } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { validated } from '../http/validated.js';
import { testLdapServer } from './connection-test.js';
import { ldapServerRecords } from './records.js';
import { SERVER_NAME_MESSAGE, SERVER_NAME_RULE } from './record-rules.js';

// The records' name, path and tag too (admin-routes.ts imports them).
export const Name = z.string().regex(SERVER_NAME_RULE, SERVER_NAME_MESSAGE);
export const NameParam = z.object({ name: Name });
export const path = '/v3/settings/ldap-servers';
export const base = { tags: ['settings'] };
const testRoute = protectedRoute(adminOnly(superAccess.refused('test LDAP server connections'), 'settings:write'), {
  ...base,
  method: 'post',
  operationId: 'testLdapServer',
  path: `${path}/{name}/test`,
  summary: 'Test the connection to an LDAP server',
  description:
    'Through the bridge: connect (each URL in order), StartTLS when set, bind as the service account, read the ' +
    'root DSE (Active Directory is detected by DIRECTORY_SIGNATURE), search the base DN. 200 with each step, ' +
    '`ok: false` naming the failing step; 503/504 when the bridge cannot be reached. Each test is an ' +
    '`ldap.test` audit event (ext_service_access).',
  request: { params: NameParam },
  responses: {
    200: { description: 'the steps', content: { 'application/json': { schema: LdapTestResponseSchema } } },
    ...problemResponses(404, 502, 503, 504),
  },
});

/** Registers the test of an LDAP server's connection. */
export function registerLdapServerTest(app: App): void {
  app.openapi(testRoute, async (c) => {
    const row = await ldapServerRecords.byName(c.var.scope.db, validated(c, 'param', NameParam).name);
    const answer = await testLdapServer(c.var.scope, row, c.var.principal.user);
    return c.json(answer, 200);
  });
}

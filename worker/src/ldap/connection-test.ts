/**
 * The "test connection" of an LDAP server record (docs/ldap.md): through the bridge, each step answered; the
 * call recorded on its own (ext_service_access: ldap.test), as it changes nothing here.
 */
import { LdapTestResponseSchema, type LdapTestResponse } from '../../../schema/bridge/index.js';
import type { UserRow } from '../accounts/model.js';
import { errorClassOf, extServiceInsert } from '../audit/ext-service.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { bridgeTimeoutMs, connectionOf, type LdapServerRow } from './records.js';

/** Tests the connection to the server of `row` for `actor`; 503 when no bridge is configured. */
export async function testLdapServer(
  scope: RequestScope,
  row: LdapServerRow,
  actor: UserRow,
): Promise<LdapTestResponse> {
  const bridge = scope.bridge;
  if (!bridge)
    throw new ProblemError('SERVICE_UNAVAILABLE', {
      detail: 'no bridge is configured (AUTH_BRIDGE_URL): the directory cannot be reached',
    });
  const connection = await connectionOf(scope, row);
  // The directory call is recorded (ext_service_access) on its own: it changes nothing here.
  const call = {
    type: 'ldap.test',
    at: scope.now(),
    actor: actor,
    request: scope.request,
  } as const;
  const done = (ok: boolean, data: Record<string, unknown>) =>
    extServiceInsert(scope.db, {
      ...call,
      ok,
      durationMs: scope.now() - call.at,
      data: { server: row.name, ...data },
    })();
  let answer: LdapTestResponse;
  try {
    answer = await bridge.call('/v1/ldap/test', { connection }, LdapTestResponseSchema, bridgeTimeoutMs(connection));
  } catch (err) {
    await done(false, { errorClass: errorClassOf(err) });
    throw err;
  }
  const failed = answer.steps.find((s) => !s.ok)?.step;
  await done(answer.ok, failed ? { failedStep: failed } : {});
  return answer;
}

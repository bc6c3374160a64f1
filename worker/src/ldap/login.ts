/**
 * LDAP login (architecture.md §4), for every endpoint that takes a login and a password with an LDAP
 * server name (Basic with X-LDAP-Name, /v3/login with `ldapServer`). The bridge finds the user's
 * entry with the service account and binds as the user; here the same rules as for local accounts
 * apply: atomic lockout per (server, login), blocked and inactive accounts, the audit trail.
 * A failure of the directory or the bridge releases the reserved attempt: it is never counted as a
 * wrong password. Nor is an account the directory refuses (disabled, expired, locked out there):
 * see ./refusals.ts.
 */
import { and, eq } from 'drizzle-orm';
import { runAccountBatch, type AccountBatchItem } from '../accounts/writes.js';
import { LdapAuthenticateResponseSchema, type LdapAuthenticateResponse } from '../../../schema/bridge/index.js';
import { users } from '../../../schema/index.js';
import { auditInsert, type AuditEventType } from '../audit/events.js';
import { errorClassOf, extServiceInsert } from '../audit/ext-service.js';
import { loginKey } from '../auth/credentials.js';
import { failedLogin, lockedProblem } from '../auth/password-login.js';
import {
  attemptPlan,
  releaseAttempt,
  reserveAttempt,
  successStatements,
  throttleKey,
  type AttemptPlan,
} from '../accounts/throttle.js';
import { factorsOf, type FactorKind } from '../accounts/factors.js';
import type { ConfigSnapshot } from '../config/index.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { accountOfIdentity, assertMayLogIn, recordLogin, type ExternalIdentity } from '../users/external.js';
import { pendingMergeOf, type PendingMerge } from '../users/identity-merge.js';
import type { Db } from '../store/index.js';
import type { UserRow } from '../accounts/model.js';
import { bridgeTimeoutMs, connectionOf, findLdapServer, type LdapServerRow } from './records.js';
import { directoryBlockedProblem, directoryLockedProblem, directoryPasswordExpiredProblem } from './refusals.js';

/**
 * The account (with `secondFactor` when it has one: no session may open before its second step,
 * docs/security-mfa.md), or a pending merge.
 */
export type LdapLoginOutcome =
  | { user: UserRow; secondFactor?: { factors: FactorKind[]; plan: AttemptPlan } }
  | { merge: PendingMerge };

async function enabledServer(db: Db, name: string): Promise<LdapServerRow> {
  const row = await findLdapServer(db, name);
  if (row?.enabled) return row;
  throw new ProblemError('UNKNOWN_LDAP_SERVER', {
    detail: `no enabled LDAP server record named ${JSON.stringify(name)} (the value of X-LDAP-Name or ldapServer)`,
  });
}

/**
 * Checks `login` and `password` at the LDAP server record `serverName`. Returns the local account
 * (created at the first login, refreshed afterwards), or the pending merge when the login is a
 * local account's. Throws the same problems as a local login, plus 400 for an unknown server and
 * 502/503/504 for the directory or the bridge.
 */
export async function authenticateLdapPassword(
  scope: RequestScope,
  serverName: string,
  login: string,
  password: string,
  challenge: string,
): Promise<LdapLoginOutcome> {
  // An empty or blank password would make the user's bind an unauthenticated (anonymous) bind.
  if (password.trim() === '')
    throw new ProblemError('INVALID_CREDENTIALS', {
      detail: 'an empty password is never accepted',
      headers: { 'WWW-Authenticate': challenge },
    });
  // Admitted per client address like a local password check (passwords/admission.ts), before the
  // attempt is reserved: a refusal (429) reads, writes and binds nothing.
  return scope.verifier.admit(scope.request.ip, () => bindAtServer(scope, serverName, login, password, challenge));
}

/** authenticateLdapPassword once admitted: the attempt reserved, the bind at the bridge, its outcome. */
async function bindAtServer(
  scope: RequestScope,
  serverName: string,
  login: string,
  password: string,
  challenge: string,
): Promise<LdapLoginOutcome> {
  const server = await enabledServer(scope.db, serverName);
  const bridge = scope.bridge;
  if (!bridge)
    throw new ProblemError('SERVICE_UNAVAILABLE', {
      detail: 'no bridge is configured (AUTH_BRIDGE_URL): LDAP accounts cannot log in',
    });

  const { db, config, request } = scope;
  const now = scope.now();
  const key = throttleKey(loginKey(login), server.name);
  // LDAP logins get no device cookie: the login's budget, its total and the address's (accounts/throttle.ts).
  const plan = attemptPlan(config, key, request.ip);
  const reserved = await reserveAttempt(db, plan, now);
  if (reserved.rowsAffected === 0) throw await lockedProblem(scope, challenge, plan);

  let result: LdapAuthenticateResponse;
  // The directory call's event (ext_service_access) joins the batch its outcome leads to (§5.1).
  const call = { type: 'ldap.authenticate', at: scope.now(), subjectLogin: login, request } as const;
  let directory: ReturnType<typeof extServiceInsert>;
  try {
    const connection = await connectionOf(scope, server);
    result = await bridge.call(
      '/v1/ldap/authenticate',
      { connection, login, password },
      LdapAuthenticateResponseSchema,
      bridgeTimeoutMs(connection),
    );
  } catch (err) {
    const data = { server: server.name, result: 'error', errorClass: errorClassOf(err) };
    directory = extServiceInsert(db, { ...call, ok: false, durationMs: scope.now() - call.at, data });
    await db.batch([releaseAttempt(db, plan), directory()]);
    throw publicDirectoryProblem(server.name, err);
  }
  const ad = result.outcome === 'ok' ? { activeDirectory: result.activeDirectory } : {};
  const callData = { server: server.name, result: result.outcome, ...ad };
  directory = extServiceInsert(db, {
    ...call,
    ok: result.outcome === 'ok',
    durationMs: scope.now() - call.at,
    data: callData,
  });
  const source = { source: 'ldap', server: server.name };
  if (result.outcome === 'invalid-credentials') {
    const known = await db
      .select()
      .from(users)
      .where(and(eq(users.loginKey, loginKey(login)), eq(users.source, 'ldap'), eq(users.sourceName, server.name)))
      .limit(1);
    throw await failedLogin(scope, challenge, plan, login, known[0] ?? null, source, [directory()]);
  }
  const refused = (type: AuditEventType, data: Record<string, unknown>) =>
    auditInsert(db, now, {
      stream: 'user_activity',
      type,
      subject: null,
      subjectLogin: login,
      request,
      data: { ...source, ...data },
    });
  // The directory locked the account out (AD 775) before checking the password: not a wrong
  // password, so not counted; not a right one, so earlier failures stay.
  if (result.outcome === 'locked-out') {
    await db.batch([
      releaseAttempt(db, plan),
      refused('login.refused', { reason: 'locked-in-directory' }),
      directory(),
    ]);
    throw directoryLockedProblem(challenge);
  }
  // The password is right from here on: the caller may learn the account's state.
  if (result.outcome === 'disabled') {
    const data = { reason: 'disabled-in-directory', ...(result.reason ? { directoryReason: result.reason } : {}) };
    await db.batch([...successStatements(db, plan), refused('login.refused', data), directory()]);
    throw directoryBlockedProblem(result.reason);
  }
  if (result.outcome === 'password-expired') {
    await db.batch([
      ...successStatements(db, plan),
      refused('login.password_expired', { directoryReason: result.reason }),
      directory(),
    ]);
    throw directoryPasswordExpiredProblem(result.reason);
  }

  const { profile } = result;
  const identity: ExternalIdentity = {
    source: 'ldap',
    sourceName: server.name,
    // The record and the entry's entryUUID / objectGUID (DN without either) are the key.
    issuer: '',
    externalId: profile.externalId,
    login: profile.login,
    displayName: profile.displayName ?? profile.login,
    email: profile.email,
    role: profile.role,
    refreshRole: server.attrRole !== null,
    ...(profile.groups ? { groups: profile.groups } : {}),
  };
  // An account of this identity with a second factor: the right password forgets no failures (only
  // the second step does, docs/security-mfa.md), so a known password gives no fresh code guesses.
  const [existing] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.loginKey, loginKey(login)), eq(users.source, 'ldap'), eq(users.sourceName, server.name)))
    .limit(1);
  const factors = existing ? await factorsOf(db, existing.id) : [];
  // Each batch this login can end with carries the directory call's event (written once: fixed id).
  const also = (): [AccountBatchItem, ...AccountBatchItem[]] =>
    factors.length > 0 ? [releaseAttempt(db, plan), directory()] : [...successStatements(db, plan), directory()];
  const outcome = await accountOfIdentity(scope, identity, { also: also() });
  if ('collision' in outcome) {
    await runAccountBatch(db, also());
    return { merge: await pendingMergeOf(scope, { ...identity, login: outcome.collision.login }) };
  }
  const user = outcome.user;
  await assertMayLogIn(scope, user, { source: 'ldap', sourceName: server.name }, also());
  const recorded = await recordLogin(
    scope,
    user,
    { source: 'ldap', sourceName: server.name },
    { also: also(), data: { activeDirectory: result.activeDirectory } },
  );
  // The account found by the identity may differ from the one looked up by login (a merged identity).
  const accountFactors = existing?.id === user.id ? factors : await factorsOf(db, user.id);
  return accountFactors.length > 0
    ? { user: recorded, secondFactor: { factors: accountFactors, plan } }
    : { user: recorded };
}

const DIRECTORY_DETAILS: Record<string, string> = {
  DIRECTORY_UNAVAILABLE: 'is unreachable',
  DIRECTORY_TIMEOUT: 'did not answer in time',
  DIRECTORY_TLS: 'refused the TLS connection (its certificate was not verified)',
  DIRECTORY_ERROR: 'failed (see the service log)',
};

/**
 * A directory failure as anonymous callers see it: the status and the cause code, but not the
 * bridge's detail, which names internal hosts and TLS errors; that goes to the log (and to admins
 * through "test connection").
 */
function publicDirectoryProblem(serverName: string, err: unknown): unknown {
  const cause = err instanceof ProblemError ? err.extensions.cause : undefined;
  if (!(err instanceof ProblemError) || typeof cause !== 'string' || !(cause in DIRECTORY_DETAILS)) return err;
  // The one WARNING line of this failure, written by the app's error handler (no stack).
  return new ProblemError(err.code, {
    detail: `the directory of LDAP server ${serverName} ${DIRECTORY_DETAILS[cause]}`,
    extensions: { cause },
    log: { msg: 'LDAP directory failure', fields: { server: serverName, cause, detail: err.detail } },
  });
}

/** The 409 of a login without a session that collides with a local account. */
export function mergeRequiredProblem(config: ConfigSnapshot, merge: PendingMerge): ProblemError {
  return new ProblemError('MERGE_REQUIRED', {
    detail:
      `the login ${merge.login} of LDAP server ${merge.sourceName} belongs to a local account: log in with a ` +
      `session (/v3/login) to merge the two, proving the local password`,
    extensions: {
      login: merge.login,
      ldapServer: merge.sourceName,
      mergeUrl: new URL(config.get('DEFAULT_FRONTEND_MERGE_URL')).href,
    },
  });
}

/**
 * The shared steps of every login with a session: check the credentials on the one password path
 * (a local account, or an LDAP account of a server record), then open the session within the
 * user's limit. Reading the body and setting cookies are the routes' (sessions/routes.ts).
 */
import { z } from '@hono/zod-openapi';
import { CHALLENGES, MAX_LOGIN_LENGTH, MAX_PASSWORD_LENGTH } from '../auth/credentials.js';
import { authenticateLocalPassword, passwordExpiredProblem, type LoginOptions } from '../auth/password-login.js';
import type { DeviceClaim } from '../accounts/devices.js';
import type { RequestScope } from '../http/scope.js';
import { authenticateLdapPassword } from '../ldap/login.js';
import type { UserRow } from '../accounts/model.js';
import { deviceWrites } from '../accounts/devices.js';
import { sessionToken } from '../accounts/session-token.js';
import type { PendingMerge } from '../users/identity-merge.js';
import { loginKey } from '../auth/credentials.js';
import { throttleKey } from '../accounts/throttle.js';
import type { FactorKind } from '../accounts/factors.js';
import type { PendingLogin } from '../accounts/pending-login.js';
import {
  createSession,
  sessionWrites,
  type NewSession,
  type SessionAuthMethod,
  type SessionRow,
} from '../accounts/sessions.js';

export const LoginBody = z
  .object({
    login: z.string().min(1).max(MAX_LOGIN_LENGTH),
    password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
    ldapServer: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: 'the LDAP server record, as X-LDAP-Name; omitted: a local account' }),
    next: z
      .string()
      .max(2048)
      .optional()
      .openapi({ description: 'form posts: where to go after the login (same-origin path or front-end URL only)' }),
  })
  .openapi('LoginRequest');

export type LoginInput = z.infer<typeof LoginBody>;

/** A session that a login opened, with its signed token (the cookie, or the OAuth access token). */
export interface OpenedSession {
  session: SessionRow;
  token: string;
}

/**
 * What a session login gave: the account and its new session (a local login: with the device for
 * the device cookie), or a pending merge (no session).
 */
export type SessionLoginOutcome =
  | ({ user: UserRow; device?: string } & OpenedSession)
  | { merge: PendingMerge }
  | { secondStep: SecondStepNeeded };

/** A right password of an account with a second factor: what its pending login carries (accounts/pending-login.ts). */
export interface SecondStepNeeded {
  user: UserRow;
  factors: FactorKind[];
  pending: Omit<PendingLogin, 'jti' | 'expiresAt'>;
}

/** How a new session is recorded: its kind, how the login was proven, when, and from where. */
function newSession(scope: RequestScope, kind: SessionRow['kind'], authMethod: SessionAuthMethod): NewSession {
  const { config, request } = scope;
  return { kind, authMethod, now: scope.now(), config, userAgent: request.userAgent ?? undefined, request };
}

/**
 * A session login on the shared password path: checks the login and password, then opens a session
 * of `kind`. A local account's session is written in the transaction of the login's own record (one
 * commit for both); an LDAP account's after it. An LDAP login whose login is a local account's
 * becomes a pending merge (`merge`, no session): never a silent login. An expired local password is
 * 403 with the way to change it.
 */
export async function logInWithSession(
  scope: RequestScope,
  kind: SessionRow['kind'],
  login: string,
  password: string,
  ldapServer?: string,
  device?: DeviceClaim,
): Promise<SessionLoginOutcome> {
  if (ldapServer !== undefined) {
    const outcome = await authenticateLdapPassword(scope, ldapServer, login, password, CHALLENGES.Basic);
    if ('merge' in outcome) return outcome;
    if (outcome.secondFactor) {
      const { user } = outcome;
      const pending = {
        userId: user.id,
        login: user.login,
        kind,
        authMethod: 'ldap_password' as const,
        throttleKey: outcome.secondFactor.plan.main.key,
        known: false,
      };
      return { secondStep: { user, factors: outcome.secondFactor.factors, pending } };
    }
    return { user: outcome.user, ...(await openSession(scope, outcome.user, kind, 'ldap_password')) };
  }
  let session: SessionRow | undefined;
  let deviceId: string | undefined;
  const alsoOnSuccess: LoginOptions['alsoOnSuccess'] = (db, account, trusted, known) => {
    const { row, writes } = sessionWrites(db, account, newSession(scope, kind, 'local_password'));
    session = row;
    const d = deviceWrites(
      db,
      account,
      trusted,
      scope.now(),
      known ? undefined : { request: scope.request, via: kind },
    );
    deviceId = d.id;
    return [...writes, ...d.writes];
  };
  const checked = await checkLocalPassword(scope, login, password, alsoOnSuccess, device);
  if ('secondStep' in checked)
    return { secondStep: { ...checked.secondStep, pending: { ...checked.secondStep.pending, kind } } };
  const user = checked.user;
  if (!session) throw new Error('the login succeeded without writing its session');
  return { user, session, token: await sessionToken(scope, session), device: deviceId };
}

/**
 * Checks a local login and password (a session login's, or the local password of a pending merge);
 * `alsoOnSuccess` commits with the success's record. An expired password is 403 with the way to
 * change it. An account with a second factor gets `secondStep` instead (nothing opened, `alsoOnSuccess`
 * not run).
 */
export async function checkLocalPassword(
  scope: RequestScope,
  login: string,
  password: string,
  alsoOnSuccess?: LoginOptions['alsoOnSuccess'],
  device?: DeviceClaim,
): Promise<{ user: UserRow } | { secondStep: SecondStepNeeded }> {
  const { config } = scope;
  const result = await authenticateLocalPassword(scope, login, password, {
    challenge: CHALLENGES.Basic,
    alsoOnSuccess,
    device,
  });
  // With a second factor, an expired password goes on to the second step: its session may only change it.
  if (result.passwordExpired && !result.secondFactor) {
    const problem = passwordExpiredProblem(result.passwordReason);
    problem.extensions.changePassword = `${config.get('ROOT_PATH')}/v4/users/me/password`;
    throw problem;
  }
  if (result.secondFactor) {
    const { user } = result;
    const pending = {
      userId: user.id,
      login: user.login,
      kind: 'cookie' as const,
      authMethod: 'local_password' as const,
      throttleKey: throttleKey(loginKey(user.login)),
      known: result.secondFactor.known,
      ...(result.device ? { device: result.device } : {}),
    };
    return { secondStep: { user, factors: result.secondFactor.factors, pending } };
  }
  return { user: result.user };
}

/**
 * Opens a session for `user` (the oldest ends beyond the user's limit); returns it with its token.
 * `authMethod` records how the login was proven (issuing API tokens needs a recent password).
 * Written, like a login's own record, on the lazy connection (Node: reaches the disk within a
 * second, architecture.md §6): a power failure before that loses the session, its event and the
 * ends it caused together, and the client logs in again.
 */
export async function openSession(
  scope: RequestScope,
  user: UserRow,
  kind: SessionRow['kind'],
  authMethod: SessionAuthMethod,
  secondFactorAt?: number,
): Promise<OpenedSession> {
  const session = await createSession(scope.lazyDb ?? scope.db, user, {
    ...newSession(scope, kind, authMethod),
    ...(secondFactorAt !== undefined ? { secondFactorAt } : {}),
  });
  return { session, token: await sessionToken(scope, session) };
}

/**
 * The passwordless sign-in with a passkey (docs/security-passkeys.md, "Sign-in"): a discoverable
 * credential with user verification, which opens a session exactly as a password login does (the
 * session and its cookie, the device cookie, login.success and session.created, a new device's
 * device.added). A refused assertion counts as a failed login on the same budgets as a wrong
 * password (accounts/throttle.ts): the account's, or the device's own when the browser presents the
 * account's device cookie, the account's daily total and the client address's; an unknown credential
 * counts on a budget of its own and the address's. A restricted login is refused before the
 * assertion is checked, as a password is.
 */
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { generateAuthenticationOptions } from '@simplewebauthn/server';
import { auditInsert } from '../audit/events.js';
import { CHALLENGES } from '../auth/credentials.js';
import { failedLogin, lockedProblem } from '../auth/password-login.js';
import { trustedDeviceQuery, type DeviceClaim } from '../accounts/devices.js';
import { attemptPlan, notReserved, reserveAttempt, successStatements, throttleKey } from '../accounts/throttle.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { deviceWrites } from '../accounts/devices.js';
import { sessionToken } from '../accounts/session-token.js';
import { sessionWrites, type SessionRow } from '../accounts/sessions.js';
import { assertMayLogIn, loginRecordStatement } from '../accounts/login-rule.js';
import { runAccountBatch } from '../accounts/writes.js';
import type { UserRow } from '../accounts/model.js';
import {
  answeredChallenge,
  CEREMONY_TIMEOUT_MS,
  consumeChallengeStatement,
  issueChallenge,
} from '../accounts/passkey-challenges.js';
import type { RelyingParty } from './relying-party.js';
import { listPasskeys, passkeyByCredentialQuery } from './store.js';
import { verifyPasskeyAssertion } from './verify.js';

/**
 * The options of a passwordless sign-in: no credentials listed (the authenticator offers the
 * discoverable ones it holds for the relying party), user verification required.
 */
export async function signInOptions(
  scope: RequestScope,
  rp: RelyingParty,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    challenge: await issueChallenge(scope, 'login'),
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: 'required',
  });
}

/** A passkey sign-in that opened a session. */
export interface PasskeySignIn {
  user: UserRow;
  session: SessionRow;
  token: string;
  /** The device for the device cookie. */
  device: string;
}

/**
 * Checks a passwordless assertion and opens a session of `kind` for the passkey's account (a local
 * account; an external account's passkey is a second factor only: 403 LOGIN_NOT_ALLOWED).
 */
export async function signInWithPasskey(
  scope: RequestScope,
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  kind: SessionRow['kind'],
  deviceClaim?: DeviceClaim,
): Promise<PasskeySignIn> {
  const { db, config, request } = scope;
  const now = scope.now();
  // One round trip: the credential's passkey and account, and the presented device cookie's row (live, of
  // a live local account). The budgets: those of the account the credential names (a password login's),
  // else the credential's own; the device's first when the cookie is that account's.
  const [byCredential, deviceRows] = await db.batch([
    passkeyByCredentialQuery(db, response.id),
    trustedDeviceQuery(db, deviceClaim ?? { id: '', userId: '' }),
  ]);
  const found = byCredential[0];
  const owner = found?.user;
  const key =
    owner?.source === 'local' ? throttleKey(owner.loginKey) : `passkey:${owner?.id ?? response.id.slice(0, 200)}`;
  const device =
    owner?.source === 'local' && deviceClaim?.userId === owner.id && deviceRows.length > 0 ? deviceClaim.id : undefined;
  const untrusted = attemptPlan(config, key, request.ip);
  // One round trip: the device's budget first; the untrusted one only when that reserved nothing (the same
  // statement batch as a password login's, auth/password-login.ts); and, in the same batch, the
  // response's challenge used up (when it is ours: checked without the database), whether the attempt is
  // then refused or not: a response is checked once. On the durable connection, not the lazy one a
  // password's reservation takes: a mark of a used challenge lost in a crash would let that response be
  // replayed, and an authenticator whose counter stays 0 has no other guard against it.
  const challenge = await answeredChallenge(scope, response.response.clientDataJSON, 'login');
  const useUp = challenge ? [consumeChallengeStatement(db, challenge)] : [];
  let plan = untrusted;
  let reserved: boolean;
  let used: { rowsAffected: number }[];
  if (device) {
    const byDevice = attemptPlan(config, key, request.ip, device);
    let mine: { rowsAffected: number };
    let fallback: { rowsAffected: number };
    [mine, fallback, ...used] = await db.batch([
      reserveAttempt(db, byDevice, now),
      reserveAttempt(db, untrusted, now, notReserved(byDevice)),
      ...useUp,
    ]);
    if (mine.rowsAffected > 0) plan = byDevice;
    reserved = mine.rowsAffected > 0 || fallback.rowsAffected > 0;
  } else {
    let one: { rowsAffected: number };
    [one, ...used] = await db.batch([reserveAttempt(db, untrusted, now), ...useUp]);
    reserved = one.rowsAffected > 0;
  }
  const usedUp = (used[0]?.rowsAffected ?? 0) > 0;
  if (!reserved) throw await lockedProblem(scope, CHALLENGES.Basic, plan);

  const result = await verifyPasskeyAssertion(scope, rp, response, {
    purpose: 'login',
    requireUserVerification: true,
    found,
    usedUp,
  });
  if (!result.ok) {
    const user = result.user ?? null;
    const data = { source: 'local', method: 'passkey', reason: result.reason, passkeyId: result.passkey?.id };
    await failedLogin(scope, CHALLENGES.Basic, plan, user?.login ?? '', user, data);
    throw new ProblemError('INVALID_CREDENTIALS', {
      detail:
        result.reason === 'challenge'
          ? 'the passkey response does not answer an unused, unexpired sign-in challenge: start again'
          : 'the passkey was not accepted',
    });
  }

  const { user, passkey } = result;
  const subject = { id: user.id, login: user.login };
  if (user.source !== 'local') {
    await db.batch([
      ...successStatements(db, plan),
      auditInsert(db, now, {
        stream: 'user_activity',
        type: 'login.refused',
        subject,
        request,
        data: { source: user.source, method: 'passkey', reason: 'passkey-external-account' },
      }),
    ]);
    throw new ProblemError('LOGIN_NOT_ALLOWED', {
      detail:
        'a passkey signs in without a password only to a local account; an LDAP or OIDC account signs in ' +
        'through its directory or provider',
    });
  }
  await assertMayLogIn(scope, user, { source: 'local' }, [...successStatements(db, plan)]);
  // A password that must be changed (an administrator's reset that kept the passkeys, or its lifetime's
  // end): the session opens, and may do nothing but change it (authentication/middleware.ts).
  const ldb = scope.lazyDb ?? db;
  const { row: session, writes } = sessionWrites(ldb, user, {
    kind,
    authMethod: 'passkey',
    now,
    config,
    userAgent: request.userAgent ?? undefined,
    request,
    // A discoverable passkey with user verification is two factors in one (the device and its PIN or
    // biometrics): the session starts verified for step-up and enforcement (docs/security-mfa.md).
    secondFactorAt: now,
  });
  const d = deviceWrites(ldb, user, plan.device, now, device === undefined ? { request, via: kind } : undefined);
  await runAccountBatch(ldb, [
    ...successStatements(ldb, plan),
    loginRecordStatement(ldb, user.id, now),
    auditInsert(ldb, now, {
      request,
      stream: 'user_activity',
      type: 'login.success',
      subject,
      data: { source: 'local', method: 'passkey', passkeyId: passkey.id },
    }),
    ...writes,
    ...d.writes,
  ]);
  return {
    user: { ...user, lastLoginAt: now, lastActivityAt: now },
    session,
    token: await sessionToken(scope, session),
    device: d.id,
  };
}

/**
 * The options of a passkey assertion as a second factor of `userId` (after its password): the
 * account's passkeys listed, user verification preferred (the password was the first factor). The
 * answer goes to verifyPasskeyAssertion with purpose `second-factor` and the same `userId` and
 * `bound` (the pending login's id: the challenge completes that login only).
 */
export async function secondFactorOptions(
  scope: RequestScope,
  rp: RelyingParty,
  userId: string,
  bound?: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const own = await listPasskeys(scope.db, userId);
  return generateAuthenticationOptions({
    rpID: rp.id,
    challenge: await issueChallenge(scope, 'second-factor', userId, bound),
    timeout: CEREMONY_TIMEOUT_MS,
    allowCredentials: own.map((p) => ({ id: p.credentialId, transports: p.transports })),
    userVerification: 'preferred',
  });
}

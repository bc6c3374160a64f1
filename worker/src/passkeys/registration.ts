/**
 * Registering, renaming and removing a user's own passkeys (docs/security-passkeys.md): the WebAuthn
 * ceremony and its refusals here, the writes (and the sessions that end with them) in accounts/passkeys.ts.
 */
import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { count, eq } from 'drizzle-orm';
import { passkeys } from '../../../schema/index.js';
import { auditInsert } from '../audit/events.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import { addPasskey, removePasskeyOf, renamePasskeyOf } from '../accounts/passkeys.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import type { UserRow } from '../accounts/model.js';
import {
  CEREMONY_TIMEOUT_MS,
  challengeOf,
  checkChallenge,
  consumeChallenge,
  issueChallenge,
} from '../accounts/passkey-challenges.js';
import { withoutAttestationStatement } from './attestation.js';
import type { RelyingParty } from './relying-party.js';
import { MAX_PASSKEYS, listPasskeys, passkeyOf, userHandleOf, type PasskeyRow } from './store.js';

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

/**
 * The options of a registration for `user`: a discoverable credential (so it can sign in without a
 * login) with user verification required, none of the account's passkeys again, no attestation.
 */
export async function registrationOptions(
  scope: RequestScope,
  rp: RelyingParty,
  user: UserRow,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await listPasskeys(scope.db, user.id);
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.login,
    userDisplayName: user.displayName || user.login,
    userID: userHandleOf(user.id),
    challenge: await issueChallenge(scope, 'register', user.id),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    // The same algorithms on every host: the library would offer ML-DSA-44 first where the runtime has it
    // (Node 24), and a passkey made so could not be checked by a host without it (Node 20, workerd).
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  });
}

/** EdDSA, ES256 and RS256 (COSE -8, -7, -257): what every host of the service verifies. */
export const PASSKEY_ALGORITHMS = [-8, -7, -257];

/** A refused registration: audited (passkey.refused), then the problem. */
async function refuse(scope: RequestScope, user: UserRow, reason: string, problem: ProblemError): Promise<never> {
  const now = scope.now();
  await scope.db.batch([
    auditInsert(scope.db, now, {
      stream: 'crud_user',
      type: 'passkey.refused',
      actor: user,
      subject: user,
      request: scope.request,
      data: { reason },
    }),
  ]);
  throw problem;
}

/**
 * Verifies a registration response of `user` (to a registration challenge made for that account,
 * used up here) and stores the passkey as `name`; the account's sessions but `keepSession` end.
 */
export async function registerPasskey(
  scope: RequestScope,
  rp: RelyingParty,
  user: UserRow,
  name: string,
  response: RegistrationResponseJSON,
  keepSession: string | undefined,
): Promise<PasskeyRow> {
  const challenge = challengeOf(response.response.clientDataJSON);
  const checked = challenge ? await checkChallenge(scope, challenge, 'register', user.id) : undefined;
  if (!checked || !(await consumeChallenge(scope.db, checked))) {
    const detail = 'the response does not answer an unused registration challenge of this account: start again';
    return refuse(scope, user, 'challenge', new ProblemError('MALFORMED_REQUEST', { detail }));
  }
  let info: NonNullable<Awaited<ReturnType<typeof verifyRegistrationResponse>>['registrationInfo']>;
  try {
    const verified = await verifyRegistrationResponse({
      response: withoutAttestationStatement(response),
      expectedChallenge: (c) => c === challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!verified.verified) throw new Error('not verified');
    info = verified.registrationInfo;
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    const uv = /user could not be verified|user verification/i.test(message);
    scope.logger.info('passkey registration refused', { reason: message.slice(0, 200) });
    const detail = uv
      ? 'the authenticator did not verify the user (PIN or biometrics): user verification is required'
      : 'the registration response did not verify (origin, relying party or signature)';
    return refuse(
      scope,
      user,
      uv ? 'user-verification' : 'verification',
      new ProblemError('MALFORMED_REQUEST', { detail }),
    );
  }

  const [{ n }] = (await scope.db.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, user.id))) as [
    { n: number },
  ];
  if (n >= MAX_PASSKEYS) {
    const detail = `an account holds at most ${MAX_PASSKEYS} passkeys: remove one first`;
    throw new ProblemError('CONFLICT', { detail });
  }
  const now = scope.now();
  const row: PasskeyRow = {
    id: crypto.randomUUID(),
    userId: user.id,
    credentialId: info.credential.id,
    publicKey: b64url(info.credential.publicKey),
    counter: info.credential.counter,
    transports: info.credential.transports ?? response.response.transports ?? [],
    aaguid: info.aaguid,
    backupEligible: info.credentialDeviceType === 'multiDevice',
    backupState: info.credentialBackedUp,
    name,
    createdAt: now,
    lastUsedAt: null,
  };
  try {
    await addPasskey(scope.db, user, row, { now, request: scope.request, keep: keepSession });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const detail = 'this passkey is registered already';
    return refuse(scope, user, 'registered', new ProblemError('CONFLICT', { detail }));
  }
  return row;
}

/** Renames one of `user`'s passkeys; undefined when it is not theirs. */
export async function renamePasskey(
  scope: RequestScope,
  user: UserRow,
  id: string,
  name: string,
): Promise<PasskeyRow | undefined> {
  if (!(await renamePasskeyOf(scope.db, user, id, name, { now: scope.now(), request: scope.request })))
    return undefined;
  return passkeyOf(scope.db, user.id, id);
}

/**
 * Removes one of `user`'s passkeys, ending the account's sessions but `keepSession`; false when it
 * is not theirs (nothing ended).
 */
export async function removePasskey(
  scope: RequestScope,
  user: UserRow,
  id: string,
  keepSession: string | undefined,
): Promise<boolean> {
  const passkey = await passkeyOf(scope.db, user.id, id);
  if (!passkey) return false;
  return removePasskeyOf(scope.db, user, passkey, { now: scope.now(), request: scope.request, keep: keepSession });
}

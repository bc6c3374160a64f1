/**
 * Checking a passkey assertion (docs/security-passkeys.md, "Assertions"): the one function both
 * uses call, the passwordless sign-in (passkeys/login.ts) and the second step of a two-step login.
 * It judges the assertion and records the use (the counter); what a refusal costs (the failed-login
 * budgets) and what a success opens is the caller's.
 */
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { RequestScope } from '../http/scope.js';
import type { UserRow } from '../accounts/model.js';
import { recordPasskeyUse } from '../accounts/passkeys.js';
import {
  answeredChallenge,
  challengeOf,
  consumeChallenge,
  fromBase64Url,
  type ChallengePurpose,
} from '../accounts/passkey-challenges.js';
import type { RelyingParty } from './relying-party.js';
import { passkeyByCredential, userHandleOf, type PasskeyRow } from './store.js';

/** Why an assertion was refused (the `reason` of its login.failure event). */
export type AssertionRefusal =
  | 'challenge'
  | 'unknown-credential'
  | 'user-handle'
  | 'verification'
  | 'user-verification'
  | 'counter';

export type AssertionResult =
  | { ok: true; passkey: PasskeyRow; user: UserRow }
  | { ok: false; reason: AssertionRefusal; passkey?: PasskeyRow; user?: UserRow };

export interface AssertionOptions {
  /** The purpose the challenge was issued for. */
  purpose: ChallengePurpose;
  /** The account the assertion must be of (a second factor: the account whose password was right). */
  userId?: string;
  /** The pending login the challenge must be bound to (a second step after a password). */
  bound?: string;
  /** User verification (PIN, biometrics) required: always for a passwordless sign-in. */
  requireUserVerification: boolean;
  /**
   * The credential's passkey and account as the caller read them (`passkeyByCredential` of the response's
   * id) in this request, before the attempt's reservation: not read again. Its counter is only the floor
   * the signature's must pass; the recorded use is conditioned on the stored one (recordPasskeyUse).
   */
  found?: { passkey: PasskeyRow; user: UserRow } | undefined;
  /**
   * Whether the caller has used up the response's challenge in a statement batch of its own
   * (`answeredChallenge`, `consumeChallengeStatement`): false when it was not ours or used before. Not
   * checked or used up again.
   */
  usedUp?: boolean;
}

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

/**
 * Checks `response` against one of our unexpired, unused challenges of `o.purpose` (used up by this
 * check, whatever its outcome), a registered passkey of a live account (of `o.userId` when given,
 * and of the user handle the authenticator returned), the relying party's id and origins, the
 * signature, user verification when required, and a signature counter that grows (a counter that
 * does not is a cloned authenticator, or a replay: refused). A success records the new counter,
 * backup state and time of use, atomically against a concurrent assertion of the same counter.
 */
export async function verifyPasskeyAssertion(
  scope: RequestScope,
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  o: AssertionOptions,
): Promise<AssertionResult> {
  const { clientDataJSON } = response.response;
  const challenge = challengeOf(clientDataJSON);
  let usedUp = o.usedUp;
  if (usedUp === undefined) {
    const checked = await answeredChallenge(scope, clientDataJSON, o.purpose, o.userId, o.bound);
    usedUp = checked !== undefined && (await consumeChallenge(scope.db, checked));
  }
  if (!challenge || !usedUp) return { ok: false, reason: 'challenge' };

  const found = 'found' in o ? o.found : await passkeyByCredential(scope.db, response.id);
  if (!found) return { ok: false, reason: 'unknown-credential' };
  const { passkey, user } = found;
  const refuse = (reason: AssertionRefusal): AssertionResult => ({ ok: false, reason, passkey, user });
  // The credential must be the expected account's, and the account the authenticator names (the user
  // handle, not covered by the signature) must be the credential's own: never someone else's login.
  if (o.userId !== undefined && passkey.userId !== o.userId) return refuse('user-handle');
  const handle = response.response.userHandle;
  if (handle !== undefined && handle !== b64url(userHandleOf(passkey.userId))) return refuse('user-handle');
  if (handle === undefined && o.purpose === 'login') return refuse('user-handle');

  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: (c) => c === challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: {
        id: passkey.credentialId,
        publicKey: fromBase64Url(passkey.publicKey) as Uint8Array<ArrayBuffer>,
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: o.requireUserVerification,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    if (/counter/i.test(message)) return refuse('counter');
    if (/user could not be verified|user verification/i.test(message)) return refuse('user-verification');
    scope.logger.info('passkey assertion refused', { reason: message.slice(0, 200) });
    return refuse('verification');
  }
  if (!verified.verified) return refuse('verification');

  const info = verified.authenticationInfo;
  const now = scope.now();
  // The counter only grows: of two concurrent assertions with the same counter, one wins.
  const use = { counter: info.newCounter, backupState: info.credentialBackedUp, now };
  if (!(await recordPasskeyUse(scope.db, passkey.id, use))) return refuse('counter');
  return {
    ok: true,
    passkey: { ...passkey, counter: info.newCounter, lastUsedAt: now, backupState: info.credentialBackedUp },
    user,
  };
}

/**
 * The words of /v3/login/passkey in the API description (sign-in-routes.ts): their summaries and descriptions. The
 * document is generated at build time on the Node host (architecture.md §10), so the edge script needs none of
 * them: wrangler.toml's [alias] replaces this module there with worker/edge-aliases/passkey-api-words.js (empty
 * strings), as for the webhooks' words (docs/performance.md, "The edge bundle").
 */
export const W: Record<string, string> = {
  d1: "The browser's PublicKeyCredential as JSON (WebAuthn Level 3 toJSON(); @simplewebauthn/browser)",
  d2:
    'PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3): hand it to navigator.credentials.get ' +
    '(PublicKeyCredential.parseRequestOptionsFromJSON, or @simplewebauthn/browser startAuthentication)',
  d3: 'the pendingToken of the 401 SECOND_FACTOR_REQUIRED (omitted: the auth_pending_login cookie)',
  s4: 'Start a passwordless sign-in with a passkey',
  d5:
    'The options of a WebAuthn authentication: no credentials listed (the authenticator offers the passkeys it ' +
    'holds for this relying party), user verification required. Its challenge is valid for 5 minutes, once. ' +
    'Nothing is stored. Any role.',
  s6: 'Sign in with a passkey (no password)',
  d7: [
    'The browser’s response to the options of /v3/login/passkey/options. Opens a session as /v3/login does: ' +
      'the session cookie, the device cookie (a new device is mailed about), login.success with method passkey.',
    'A refused assertion (an unknown passkey, one whose user handle is not its account’s, a signature that does ' +
      'not verify, no user verification, a signature counter that did not grow, a used or expired challenge) is 401 ' +
      'INVALID_CREDENTIALS and counts as a failed login of that account on the budgets of a wrong password ' +
      '(device, account, client address); a restricted login is 401 ACCOUNT_LOCKED (429 ADDRESS_THROTTLED) before ' +
      'anything is checked. A blocked account: 403 ACCOUNT_BLOCKED. An LDAP or OIDC account’s passkey does not ' +
      'sign in without its directory or provider: 403 LOGIN_NOT_ALLOWED. A cross-site request: 403. Any role.',
  ].join('\n\n'),
  s8: 'The second step of a login with a passkey: the options of its assertion',
  d9: [
    'After a right password answered 401 SECOND_FACTOR_REQUIRED with `passkey` among its `factors`: the options of ' +
      'a WebAuthn authentication for that pending login (docs/security-mfa.md). The body is optional: JSON ' +
      '`{"pendingToken": ...}`, or nothing (the cookie `auth_pending_login` names the pending login). The ' +
      'account’s passkeys are listed (allowCredentials), user verification preferred; the challenge is valid for ' +
      '5 minutes, once, and for this pending login only. Nothing is stored.',
    'A missing, expired, used or forged pending login: 401 UNAUTHENTICATED. An account without a passkey: 409. ' +
      'Any role.',
  ].join('\n\n'),
  s10: 'The second step of a login with a passkey: the assertion opens the session',
  d11: [
    'The browser’s answer to the options of /v3/login/second-factor/passkey/options, with the `pendingToken` ' +
      '(omitted: the cookie `auth_pending_login`). Opens the session exactly as a code at /v3/login/second-factor ' +
      'does (cookie, device cookie, events; the session’s second-factor time starts) and clears the pending cookie.',
    'A refused assertion (not a passkey of the account, a challenge of another pending login, used or expired, a ' +
      'signature that does not verify, a counter that did not grow) is 401 INVALID_CREDENTIALS and counts like a ' +
      'wrong code (401 ACCOUNT_LOCKED, 429 ADDRESS_THROTTLED once restricted). A missing, expired, used or forged ' +
      'pending login: 401 UNAUTHENTICATED. A cross-site request: 403. Any role.',
  ].join('\n\n'),
};

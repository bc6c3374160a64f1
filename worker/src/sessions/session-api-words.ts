/**
 * The words of /v3/login, /v3/oauth_login and /v3/login/union in the API description (routes.ts): their summaries
 * and descriptions. The document is generated at build time on the Node host (architecture.md §10), so the edge
 * script needs none of them: wrangler.toml's [alias] replaces this module there with
 * worker/edge-aliases/session-api-words.js (empty strings), as for the webhooks' words (docs/performance.md, "The
 * edge bundle").
 */
export const W: Record<string, string> = {
  s1: 'Log in with a session (signed cookie)',
  d2: [
    'JSON or an HTML form: `login`, `password`, optional `ldapServer` (form: `ldap_server`) and, for forms, `next`.',
    'Creates a session and sets the HttpOnly, Secure, SameSite=Lax cookie `auth_session` ' +
      "(`__Secure-auth_session` over HTTPS), Path=ROOT_PATH. Beyond the user's session limit the oldest session " +
      'ends.',
    'JSON: 200 with the profile. Form: 303 to `next` (a same-origin path or a front-end URL only) or ' +
      'DEFAULT_FRONTEND_URL; a failed form login goes to DEFAULT_FRONTEND_URL with `auth_error`.',
    'With `ldapServer` the account is an LDAP account of that server record (checked through the bridge; ' +
      "created at its first login). When its login is a local account's, nothing logs in: a short-lived " +
      'pending-merge cookie (and its browser-binding cookie) is set and the answer is 409 MERGE_REQUIRED (JSON) ' +
      'or a 303 to DEFAULT_FRONTEND_MERGE_URL (form); /v3/login/union completes the merge. When it is another ' +
      "external account's (another LDAP record, or OIDC), nothing is linked and no merge is offered: 409 " +
      'LOGIN_CONFLICT (form: `auth_error=login_conflict`); an administrator must resolve it.',
    'A local login also sets the device cookie `auth_device` (`__Host-auth_device` over HTTPS; HttpOnly, Secure, ' +
      'SameSite=Strict, Path=/, a year): signed, bound to the account, never a session. A login presenting it for ' +
      'its account has its own failure budget, so that failures of other clients do not lock this browser out ' +
      '(architecture.md §4). Sign out everywhere, a password change or reset and a block revoke it.',
    'Failures as for login_without_session (including 403 LOGIN_NOT_ALLOWED for an LDAP login the login rule ' +
      'refuses); a local password that must be changed answers 403 PASSWORD_EXPIRED with `changePassword` and ' +
      '`passwordReason` (`initial`: a new account chooses its own; `reset`: an administrator reset it; ' +
      '`expired`: its lifetime ended); with a second factor, after the second step instead, whose session may ' +
      'only change it (docs/security-mfa.md, "Changing factors"); an LDAP one without either (it is changed in ' +
      'the directory); 400 UNKNOWN_LDAP_SERVER; ' +
      '502/503/504 when the directory or the bridge fails (never counted as a wrong password). Any role.',
    'An account with a second factor (docs/security-mfa.md) gets no session for its right password: 401 ' +
      'SECOND_FACTOR_REQUIRED with `factors` (totp, passkey, recovery_code), `pendingToken`, `expiresAt` (5 ' +
      'minutes), ' +
      '`secondStep` (POST /v3/login/second-factor) and, with a passkey, `passkeyOptions`; the token is also set ' +
      'as the HttpOnly cookie ' +
      '`auth_pending_login`. A form post goes to DEFAULT_FRONTEND_URL with `auth_error=second_factor_required`.',
  ].join('\n\n'),
  d3: 'accounts with a second factor: a TOTP code or a recovery code (docs/security-mfa.md)',
  s4: 'OAuth 2.0 password grant: a session, its cookie and an access token',
  d5:
    'The form of RFC 6749 §4.3 (`grant_type=password`, `username`, `password`), used by the Authorize button of ' +
    'these docs. The access token is a Bearer credential for as long as its session lives (logout ends both). ' +
    'Errors in the OAuth shape (RFC 6749 §5.2); a body of another media type than the urlencoded form ' +
    '(multipart too): 415; a client address beyond its password-check bound: the 429 problem. Any role. ' +
    'An account with a second factor (docs/security-mfa.md) sends its TOTP code or a recovery code as `otp` ' +
    'with the grant; without it: 400 `insufficient_user_authentication` (the error of RFC 9470), a wrong code: ' +
    '400 `invalid_grant` (counted as a failed login; the code of the last accepted step again is not counted).',
  s6: 'Complete a pending merge of an external identity with the local account of the same login',
  d7:
    'Needs the short-lived (10 minutes) signed cookie `auth_pending_merge` and its binding cookie ' +
    '`auth_merge_binding` (`__Host-auth_merge_binding` over HTTPS), both set when an LDAP or OIDC login ' +
    'collides with a local account (the browser is then sent to DEFAULT_FRONTEND_MERGE_URL): the merge ' +
    'completes only in the browser that logged in. The user proves the local password (JSON or form ' +
    '`password`); the identity is linked to the local account, both cookies are cleared and a session starts. ' +
    '401 without a valid, bound pending merge; 409 when the identity is linked already (a replay). Any role. ' +
    'A local account with a second factor: the identity is linked, then 401 SECOND_FACTOR_REQUIRED as for ' +
    '/v3/login (the session opens at POST /v3/login/second-factor).',
};

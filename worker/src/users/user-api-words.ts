/**
 * The words of /v4/users in the API description (me-routes.ts, token-request.ts, account-routes.ts,
 * create-routes.ts, service-token-routes.ts): their longer summaries and descriptions. The document is
 * generated at build time on the Node host (architecture.md §10), so the edge script needs none of them:
 * wrangler.toml's [alias] replaces this module there with worker/edge-aliases/user-api-words.js (empty
 * strings), as for the webhooks' words (docs/performance.md, "The edge bundle").
 */
import { RECENT_PASSWORD_LOGIN_MS } from '../auth/recent-password.js';

export const T: Record<string, string> = {
  // What super-access (lent rights) may do, as documented on the grant route; each operation declares its own
  // part (`x-super-access`), and test/http/permissions.test.ts walks every route against it.
  lentRights: [
    'Super-access exists to help users. What it may do (each operation declares it: `x-super-access`, and',
    '`x-super-access-target: unprivileged` where the account must hold neither administrator rights nor the',
    'auditor role):',
    '',
    '| Operation | Super-access |',
    '|---|---|',
    '| list and read accounts, their sessions and API tokens (administrators included) | allowed |',
    '| list the live sessions of all accounts (`/v4/sessions`) | allowed |',
    '| create an account | role `user` only |',
    '| update, delete, block, unblock, unlock, reset the password, end a session, revoke a token |' +
      ' on accounts without administrator or auditor rights (neither the admin or auditor role nor super-access' +
      ' of their own) |',
    '| change a role | refused |',
    '| grant or end super-access | refused |',
    '| identity providers, LDAP servers: read | allowed |',
    '| identity providers, LDAP servers: add, change, remove, test the connection | refused |',
    '| settings (`/v3/settings`): read | allowed |',
    '| settings: change, reset | refused |',
    '| audit logs (`/v3/logs`): types, search, events, export | refused |',
    '| audit pipeline health (`/v3/logs/pipeline`) | allowed |',
    '| the administrator overview (`/v4/admin/overview`: it summarises the audit log) | refused |',
    '',
    'A refusal is 403 with a detail saying what super-access cannot do.',
  ].join('\n'),
  createUser:
    'The password must pass the password policy (422 PASSWORD_POLICY lists every broken rule). Without a ' +
    "password the account cannot sign in until its user chooses one through the welcome mail's link, which " +
    'needs `email` (422 without it); with one, the welcome mail says the account exists, that the ' +
    'administrator gives the password, and where to sign in. 422 when the ' +
    'login breaks the login rule (naming the refused character). 409 when the login is taken (ignoring case and ' +
    'width) or still reserved after a deletion (USER_LOGIN_REUSE_DAY). Super-access may create accounts of the ' +
    'role user only (403 for admin or auditor).' +
    ' A service account (`kind: "service"`) is made without `password` and `email`.',
  firstPassword:
    'the first password, which the administrator gives the user (the welcome mail says so, with no link); ' +
    'absent: the account has none, and the welcome mail links to choosing it (then `email` is required)',
  kind:
    'service: an account that exists to own API tokens (a pipeline, a service), made without `password` ' +
    'and `email` (422 with either), which never signs in (docs/api.md, "Service accounts")',
  listUsers:
    'Paginated (limit at most 100, offset), filtered by login prefix, a substring of login, name or address (`q`), ' +
    'role, status, source and kind (`service`: the service accounts), sorted by login, creation or last login ' +
    '(prefix `-` for descending).',
  patchMe:
    'The console sets it when the user picks a language (docs/mail.md, "Language"). A preference: it ends ' +
    'nothing and is not audited.',
  language: "the language of the account's mails (and the console's choice); null: MAIL_LANGUAGE",
  issue: [
    'Needs a recent proof of the password: Basic, or the cookie of a session started by a password login ' +
      `(/v3/login with a local or LDAP password, /v3/login/union) at most ${RECENT_PASSWORD_LOGIN_MS / 60_000} ` +
      'minutes ago. Otherwise 403 REAUTHENTICATION_REQUIRED (`reason`: stale_login, oauth_access_token, ' +
      'oidc_session, not_a_password): the cookie of /v3/oauth_login (its access token) and OIDC-started sessions ' +
      'never may; an API token or the OAuth access token as Bearer is 401.',
    'The secret is in this response only; it is stored as a hash.',
    '`audiences` limits the token to protected services (docs/api.md, "API token audiences"): 422 naming ' +
      '`audiences` for a name that no service the caller may enter has; `scopes: []` without audiences is 422 ' +
      'too (the token would open nothing).',
  ].join('\n\n'),
  audiencesSummary: "The protected services the caller's API tokens may be limited to",
  audiences:
    'The names of the protected services (/v4/services) the caller may enter by their access rules: the ' +
    'choices of `audiences` when issuing a token (docs/api.md, "API token audiences"). Part of managing ' +
    'tokens: never with an API token.',
  changePassword: [
    'The old password in the body. Allowed while the password is expired (the only thing allowed then).',
    'The old password is checked like a login, on the same failed-login count: a wrong one is 401 ' +
      'INVALID_CREDENTIALS and counts; after AUTH_FAILED_COUNT failures within AUTH_FAILED_TIMEOUT_MIN minutes the ' +
      'account is locked (its logins too) and the answer is 401 ACCOUNT_LOCKED with Retry-After, without checking ' +
      'the password. The client address counts as for a login (429 ADDRESS_THROTTLED).',
    'A change ends every other session of the user (their OAuth access tokens too): a change made with a session ' +
      'keeps that session; one made with Basic or an API token ends them all. API tokens are kept (the user lists ' +
      'and revokes them). Reset and welcome links mailed before end.',
    '409 for an LDAP or OIDC account (its password is not managed here). 422 PASSWORD_POLICY lists every broken ' +
      'rule, including reuse of one of the last USER_PASSWORD_HISTORY_DEPTH passwords.',
  ].join('\n\n'),
  serviceTokenSummary: 'Issue an API token for a service account',
  serviceToken: [
    'Administrators only (not super-access), with a recent proof of the password as for their own tokens ' +
      '(403 REAUTHENTICATION_REQUIRED otherwise). The account must be a service account (409 for a person: a ' +
      "person's tokens are issued by that person). The body, the lifetimes, scopes and audiences are those of " +
      'POST /v4/users/me/tokens; the audiences are the services the service account may enter. Audited ' +
      '`token.issued` in crud_admin.',
    'The secret is in this response only. List and revoke with GET and DELETE /v4/users/{userId}/tokens.',
  ].join('\n\n'),
  expiresInDays:
    'the lifetime in days, at most AUTH_TOKEN_MAX_LIFETIME_DAYS (365 by default); omitted: ' +
    'AUTH_TOKEN_DEFAULT_LIFETIME_DAYS (90); null: it never expires, only where AUTH_TOKEN_NO_EXPIRY_ALLOWED',
  scopes:
    'what the token may be used for (docs/api.md, "API token scopes"), within the owner\'s rights at each ' +
    'request; omitted: everything the owner may do, or, with `audiences`, none of this API (empty: the ' +
    'same; only with `audiences`)',
  audienceNames:
    'the protected services (names of /v4/services) the gate and introspection admit the token for ' +
    '(docs/api.md, "API token audiences"); omitted: no audience limit. Each must name a service the ' +
    "token's owner may enter (GET /v4/users/me/token-audiences)",
};

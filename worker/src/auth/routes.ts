/** Logins without a session: POST /v3/login_without_session (Basic), POST /v3/api_token_login (Bearer). */
import type { App } from '../http/context.js';
import { problemResponses } from '../http/problem.js';
import { PublicUserSchema, toPublicUser } from '../accounts/model.js';
import { ANY_ROLE, protectedRoute } from './protected-route.js';

const basicLogin = protectedRoute(
  { schemes: ['Basic'], roles: ANY_ROLE },
  {
    method: 'post',
    operationId: 'loginWithoutSession',
    path: '/v3/login_without_session',
    tags: ['auths'],
    summary: 'Log in with login and password, without a session',
    description: [
      'Credentials in `Authorization: Basic base64(login:password)`; add `X-LDAP-Name: <server record>` for an ' +
        'LDAP account (without it the account is local).',
      'Creates no session and sets no cookie.',
      `401 does not tell an unknown login from a wrong password. After AUTH_FAILED_COUNT failures within ` +
        `AUTH_FAILED_TIMEOUT_MIN minutes the login is locked for that long (401 ACCOUNT_LOCKED with Retry-After), ` +
        `whatever the password, for every client without a device cookie of the login: Basic clients carry none ` +
        `(a browser that logged in through /v3/login keeps its own budget); 100 failures within a day lock it ` +
        `for every client. After AUTH_ADDRESS_FAILED_COUNT failures from one client address (any logins) within ` +
        `AUTH_ADDRESS_FAILED_WINDOW_MIN minutes, that address gets 429 ADDRESS_THROTTLED with Retry-After.`,
      'Only with the right password: 403 ACCOUNT_BLOCKED (`reason` admin, inactivity, or directory with ' +
        '`directoryReason`) or 403 PASSWORD_EXPIRED (a local account with `passwordReason`: `initial` for a new ' +
        'account, `reset` by an administrator or `expired`; an LDAP account with `directoryReason`: to be ' +
        'changed in the directory); ' +
        'neither is counted as a failure. The last active administrator is never blocked for inactivity.',
      'Active Directory: an account its lockout policy locked answers 401 ACCOUNT_LOCKED with `directoryReason` ' +
        'locked-out and without Retry-After, whatever the password (AD refuses it before checking the password), ' +
        'not counted.',
      'LDAP: 400 UNKNOWN_LDAP_SERVER naming a name without an enabled record (record names are public, answered ' +
        "before any password check); 409 MERGE_REQUIRED when the login is a local account's (merge it through " +
        "/v3/login); 409 LOGIN_CONFLICT when it is another external account's (another record, or OIDC: never " +
        'linked, an administrator must resolve it); 502/503/504 when the directory or the bridge fails (never ' +
        'counted as a wrong password).',
      "LDAP, first login only: 403 LOGIN_NOT_ALLOWED when the directory's login breaks the login rule (letters, " +
        'digits and . _ - @, starting with a letter or digit) or is still reserved after a deletion (`reason`: ' +
        'characters or reserved); no account is created.',
    ].join('\n\n'),
    responses: {
      200: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } },
      ...problemResponses(400, 409, 429, 502, 503, 504),
    },
  },
);

const tokenLogin = protectedRoute(
  { tokenScope: 'account:read', schemes: ['Bearer'], roles: ANY_ROLE },
  {
    method: 'post',
    operationId: 'loginWithApiToken',
    path: '/v3/api_token_login',
    tags: ['auths'],
    summary: 'Log in with an API token, without a session',
    description:
      'Credentials in `Authorization: Bearer <API token>`; local accounts only. Creates no session and sets no ' +
      'cookie. 401 for an unknown, expired or revoked token, or a blocked or deleted account.',
    responses: {
      200: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } },
    },
  },
);

/** Registers the session-less login endpoints. */
export function registerSessionlessLogins(app: App): void {
  app.openapi(basicLogin, (c) => c.json(toPublicUser(c.var.principal.user, c.var.scope.config), 200));
  app.openapi(tokenLogin, (c) => c.json(toPublicUser(c.var.principal.user, c.var.scope.config), 200));
}

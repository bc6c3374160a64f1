/**
 * The gate's route documentation (summaries and descriptions of docs/integration.md's endpoints), apart from
 * the routes: the edge host serves the OpenAPI document written at build time, so its build replaces this
 * module with a stand-in of empty strings (wrangler.toml [alias], docs/performance.md, "The edge bundle").
 */
const TARGETS = 'A service answers for its `hosts` (every path) and its URL `prefixes`; it needs one of them at least.';
const COMMON =
  'Answers only a proxy of AUTH_TRUSTED_PROXIES (anyone else: 403 `untrusted-proxy`). 403 also when no protected ' +
  'service answers for the address or the account may not enter (`reason`). docs/integration.md.';

export const GATE_DOCS = {
  admin1: 'stored lower-case, without a trailing dot, in IDNA A-labels',
  admin2: 'true: any active account; the lists are then ignored',
  admin3: 'the identity headers; omitted: Remote-User, Remote-Name, ...',
  admin4: 'host names it answers for (every path)',
  admin5: 'URL prefixes it answers for (the longest wins)',
  admin6: 'sessions without a verified second factor are sent to the second step; API tokens refused',
  admin7: 'whether Basic (login and password) may enter',
  admin8: 'the client id of its credential (introspection)',
  admin9: 'shown once; only its hash is stored',
  admin10: 'the service and its new secret (shown once)',
  admin11:
    'The SRM and monitoring services are present from the start (SRM_*, MONITORING_*). Secrets are never returned.',
  admin12: `${TARGETS} 409 when the name is taken. The answer carries the client secret, once.`,
  admin13: 'Change a protected service',
  admin14: `Omitted fields keep their values; \`headers\` names only the headers to rename. ${TARGETS}`,
  admin15: 'Remove a protected service',
  admin16: 'Its hosts and prefixes are refused (403) from then on; its credential introspects no more.',
  admin17: "Replace a protected service's secret",
  admin18: 'The old secret stops working at once; the new one is in the answer, once.',
  authz1:
    'allowed: the identity headers (names per service: Remote-User, Remote-Name, Remote-Email, Remote-Groups, ' +
    'Remote-Role)',
  authz2: 'Forward-auth for nginx auth_request',
  authz3: 'Forward-auth for Caddy forward_auth and Traefik ForwardAuth',
  authz4: 'Forward-auth for Envoy ext_authz (HTTP service)',
  authz5: 'Back to a protected service after the sign-in',
  authz6: 'to the service, the sign-in, or the console',
  introspect1: 'required: a session access token or an API token',
  introspect2: 'ignored: both kinds are tried',
  introspect3: 'client_secret_post (else HTTP Basic)',
  introspect4:
    "an API token's scopes, space-separated (empty: none of this service's API); absent for a session or a " +
    'token made without scopes (docs/integration.md, "Introspection")',
  introspect5: 'absolute end (seconds); absent for a token without',
  introspect6:
    "the calling service's client id; for an API token limited to services, their client ids (a list, " +
    'docs/api.md, "API token audiences")',
  introspect7: 'Token introspection (RFC 7662) for protected services',
  introspect8: 'Authorization server metadata (RFC 8414)',
  introspect9:
    "Authenticated with a protected service's credential (`client_id` and the secret of POST /v4/services), as " +
    'HTTP Basic or in the form. `{"active": false}` (200) for anything not valid for the calling service: ' +
    'unknown, expired, revoked, a blocked account, a token whose account may not enter that service, or an API ' +
    'token limited to other services (its audiences) or narrowed to scopes of this API only. A wrong client ' +
    'credential: 401 `invalid_client`.',
  introspect10:
    'Names the issuer and the introspection endpoint. Also served at the RFC 8414 address for an issuer with a ' +
    'path: /.well-known/oauth-authorization-server followed by ROOT_PATH.',
  authz101:
    `${COMMON} The address from X-Original-URL (X-Original-Method), else X-Forwarded-Proto, -Host, -Uri. Not ` +
    'signed in (or the second step needed): 401 with the sign-in address in Location, for `auth_request_set`.',
  authz102:
    `${COMMON} The address from X-Forwarded-Proto, -Host and -Uri (X-Forwarded-Method). Not signed in: a ` +
    "browser's navigation gets 302 to the sign-in, others 401; the second step: the same, with RFC 9470's " +
    '`insufficient_user_authentication` for Bearer clients.',
  authz103:
    `${COMMON} Envoy appends the original path to this one (path_prefix) and keeps the original method and Host; ` +
    'the scheme from X-Forwarded-Proto. Any method. Answers as forward-auth does.',
};

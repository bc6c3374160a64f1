/**
 * The import rules of docs/architecture.md §2, checked by `npm run lint` (dependency-cruiser).
 *
 * worker/src is layered by folder: a folder imports its own files and folders of lower tiers, never
 * a folder of its own tier or above, so no two folders import each other and there is no cycle
 * between folders. The one exception is documented: the request context's types
 * (http/context.ts, http/scope.ts) name capability types with `import type` only.
 * A new folder under worker/src must be given a tier here (rule `folder-has-a-tier`).
 */

/** Folders of worker/src, lowest tier first. docs/architecture.md §2 lists them (npm run docs:layout). */
const TIERS = [
  ['config', 'metrics'],
  ['http'],
  ['store', 'bridge', 'passwords'],
  ['audit', 'errtrack', 'jobs'],
  ['accounts'],
  ['auth'],
  ['mfa'],
  ['groups'],
  ['users', 'settings', 'logs', 'docs', 'pages', 'webhooks'],
  ['ldap', 'notifications', 'first-run', 'health', 'ops', 'metrics-route'],
  ['sessions', 'password-reset', 'schedule', 'overview'],
  ['oidc', 'authentication', 'passkeys', 'gate'],
];
// Above every tier: the files directly in worker/src, imported by no folder.

/**
 * What each folder of worker/src (and each file directly in it) holds, one line each: the layout of
 * docs/architecture.md §2 is generated from these and TIERS (scripts/docs-layout.ts;
 * test/unit/docs-layout.test.ts fails when a folder has no tier or no line here, or the page differs).
 */
const PURPOSES = {
  config: 'the variable registry and resolver (the only reader of the environment); IP ranges',
  metrics: 'the Prometheus registry and the process counters (request, login, hashing)',
  http:
    'the base of every request: the request frame (request-frame.ts), request context and scope, problem type, ' +
    'logger, background work, cookies, CSRF checks, safe redirects, JSON-or-form bodies, forwarded headers, ' +
    "list paging, the answer's headers, the router, request headers on the Node host",
  store: 'drizzle over libSQL, saved settings, sealed secrets (secret-box), unique violations, the credential cache',
  passwords:
    'passwords themselves: hashing (hash/: argon2id, PHC strings), the admission of hashing (admission.ts), ' +
    'the verifier a request uses, the policy and the common-password filter (blocklist/)',
  bridge: 'the client of the on-prem bridge (typed by schema/bridge) and its edge transport',
  audit: 'audit events written to the outbox, the event catalogue; API-access events buffered',
  errtrack: "client-config, the Sentry tunnel, the service's own error reports",
  jobs: 'the job shape (job.ts), the runner and its leases, the retry backoff',
  accounts:
    'the owner of the account data: users, sessions (and the session token), API and reset tokens, the ' +
    'writes of second factors (TOTP, recovery codes, passkeys), device rows, login attempts and locks (the ' +
    "throttle); the account model, lookups and the list, the login name and login rule, a login's success " +
    'bookkeeping, the session-limit rule',
  auth:
    'credentials, password logins, a recent password, roles and protectedRoute (a protected route declared ' +
    'once)',
  groups:
    "/v4/groups and the group-name rule; memberships are written by accounts/group-members.ts (docs/groups.md)",
  users:
    'the account rule, creating accounts, admin changes, external identities and pending merges; /v4/users ' +
    'routes (create-routes, account-routes, me-routes, session-routes); bootstrap of the first admin; the ' +
    'security jobs',
  settings:
    '/v3/settings (routes.ts) and its changes (changes.ts: validation, the write, the reset); sealed-records.ts: ' +
    'the records keyed by name that hold a sealed secret (LDAP servers, identity providers)',
  logs: 'streams, shipping to the log store, the /v3/logs endpoints, the embedded audit log',
  docs: 'the OpenAPI document (generated at build time), its shared statuses, the docs page',
  pages: "the web console's page shells, page registry and texts (§8)",
  webhooks: '/v4/webhooks, the target rules (SSRF), signing, the sender job and its kick (docs/webhooks.md)',
  ldap: 'LDAP logins through the bridge, the LDAP server records, the refresh of LDAP groups',
  notifications: "mail notifications: the event handler, templates, delivery and its job, the mail settings",
  'first-run': 'the first-run page (loopback only, one-time code) and the redirect of ROOT_PATH and /',
  health: 'liveness and readiness',
  ops: "the operator command's logic (npm run ops), over the service's own account functions",
  'metrics-route': 'GET /metrics: the scrape-time series and the exposition',
  sessions:
    'session logins, device cookies, pending-merge claims; /v3/login, /v3/oauth_login, /v3/login/union ' +
    '(routes), the second step (second-step-routes), logout (logout-routes)',
  'password-reset': 'password reset by mail: the flow and its routes (docs/mail.md)',
  schedule: "the registered jobs (each capability's own), in their order",
  overview: "GET /v4/admin/overview: the administrator's first screen (reads only; docs/api.md)",
  oidc: 'the OIDC flow (oauth4webapi) and the identity provider records',
  authentication: 'the authentication middleware (Basic, Bearer, cookie), above every credential it checks',
  mfa:
    'second factors (docs/security-mfa.md): the second step of a login (its pending login: accounts/), its ' +
    'answers (the 401 and its cookie), enforcement and step-up, the OIDC amr/acr claims; ' +
    '/v4/users/me/second-factors, TOTP and recovery-code enrolment (enrolment-routes), the step-up; the ' +
    'writes are accounts/',
  passkeys:
    'WebAuthn passkeys: registration, the passwordless sign-in, verifyPasskeyAssertion (docs/security-passkeys.md)',
  gate:
    "the platform's gatekeeper: protected services (/v4/services) and their snapshot, the one decision, " +
    "forward-auth in each proxy's dialect, token introspection (docs/integration.md); the services a token " +
    'may be limited to (token-audiences.ts, handed to users/ by app.ts)',
  'app.ts': 'createApp: the request frame, errors, 404/405, the route modules (and the test hooks)',
  'service.ts': "assembleService: the one assembly of the service from a host's parts",
  'index.ts': 'the edge host (fetch, scheduled)',
  'test-hooks.ts': 'every /__test__/* route, registered only with AUTH_TEST_CLOCK_CONTROL (docs/testing.md)',
  'wasm.d.ts': 'the type of the WebAssembly modules the edge bundle imports',
};

const SRC = '^worker/src/';
const folders = (names) => `${SRC}(${names.join('|')})/`;
const CONTEXT_TYPES = `${SRC}http/(context|scope)\\.ts$`;

const layerRules = TIERS.flatMap((tier, i) => {
  const notBelow = TIERS.slice(i).flat();
  return tier.map((folder) => {
    const above = notBelow.filter((f) => f !== folder);
    return {
      name: `layer-${folder}`,
      comment: `worker/src/${folder} imports only lower tiers (.dependency-cruiser.cjs TIERS, architecture.md §2)`,
      severity: 'error',
      from: folder === 'http' ? { path: `${SRC}http/`, pathNot: CONTEXT_TYPES } : { path: `${SRC}${folder}/` },
      to: { path: [folders(above), `${SRC}[^/]+\\.ts$`] },
    };
  });
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'context-types-only',
      comment: 'http/context.ts and http/scope.ts name capability types with `import type` only',
      severity: 'error',
      from: { path: CONTEXT_TYPES },
      to: { path: folders(TIERS.slice(1).flat().filter((f) => f !== 'http')), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'folder-has-a-tier',
      comment: 'every folder of worker/src has a place in TIERS',
      severity: 'error',
      from: { path: SRC },
      to: { path: `${SRC}[^/]+/`, pathNot: [folders(TIERS.flat()), `${SRC}[^/]+\\.ts$`] },
    },
    {
      name: 'no-folder-cycles',
      comment: 'no import cycles inside worker/src (folders: the tiers; files: this rule)',
      severity: 'error',
      from: { path: SRC },
      to: { circular: true },
    },
    {
      name: 'worker-src-no-node',
      comment: 'worker/src runs in workerd: no node: modules',
      severity: 'error',
      from: { path: SRC },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'worker-src-no-host',
      comment: 'worker/src imports no Node host, bridge, browser code, scripts or tests',
      severity: 'error',
      from: { path: SRC },
      to: { path: '^(worker/node|ldap-bridge|scripts|test|console)/' },
    },
    {
      name: 'bridge-apart-from-worker',
      comment: 'the bridge never imports the worker; both share only schema/bridge',
      severity: 'error',
      from: { path: '^ldap-bridge/' },
      to: { path: '^worker/' },
    },
    {
      name: 'worker-apart-from-bridge',
      comment:
        'the worker reaches the bridge over HTTPS only; the Node host embeds it for development (and composes ' +
        'the development outbox\'s .eml files with its mail code)',
      severity: 'error',
      from: { path: '^worker/', pathNot: '^worker/node/(embedded-bridge|mail-outbox)\\.ts$' },
      to: { path: '^ldap-bridge/' },
    },
    {
      name: 'schema-imports-no-code',
      comment: 'schema/ (tables, migrations, the bridge contract) imports nothing from worker/ or ldap-bridge/',
      severity: 'error',
      from: { path: '^schema/' },
      to: { path: '^(worker|ldap-bridge|console|scripts|test)/' },
    },
    {
      name: 'console-only-pure-modules',
      comment:
        'browser code imports itself, the console texts (*-texts), the password policy and the User-Agent ' +
        'parser of worker/src, nothing else',
      severity: 'error',
      from: { path: '^console/' },
      to: {
        path: '^(worker|ldap-bridge|scripts|test|schema)/',
        pathNot:
          '^worker/src/(pages/[a-z-]*texts|' +
          'passwords/policy|notifications/user-agent)\\.ts$',
      },
    },
    {
      name: 'console-no-node',
      severity: 'error',
      from: { path: '^console/' },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};

// For scripts/docs-layout.ts, out of the configuration dependency-cruiser reads and validates.
Object.defineProperty(module.exports, 'TIERS', { value: TIERS, enumerable: false });
Object.defineProperty(module.exports, 'PURPOSES', { value: PURPOSES, enumerable: false });

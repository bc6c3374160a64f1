/**
 * The import rules of docs/architecture.md §2, checked by `npm run lint` (dependency-cruiser).
 *
 * worker/src is layered by folder: a folder imports its own files and folders of lower tiers, never
 * a folder of its own tier or above, so no two folders import each other and there is no cycle
 * between folders. The one exception is documented: the request context's types
 * (http/context.ts, http/scope.ts) name capability types with `import type` only.
 * A new folder under worker/src must be given a tier here (rule `folder-has-a-tier`).
 */

/** Folders of worker/src, lowest tier first. */
const TIERS = [
  ['config', 'metrics'], // the variable registry and IP ranges; process-wide counters
  ['http'], // the base of every request
  ['store', 'bridge'], // the database; the on-prem bridge client
  ['audit', 'errtrack', 'jobs'], // audit events; error reports; the job shape, runner and leases
  ['accounts'], // the owner of users, sessions, tokens, second factors, devices and login attempts
  ['auth'], // credentials, password hashing and policy, roles, protected routes, password logins
  ['groups'], // local groups and their administration; the name rule external logins read groups by
  ['users', 'settings', 'logs', 'docs', 'console', 'webhooks'], // webhooks: subscriptions, delivery (below scrape)
  ['ldap', 'notifications', 'first-run', 'health', 'ops', 'scrape'],
  ['sessions', 'password-reset', 'schedule', 'overview'], // overview: the administrator's first screen (reads)
  ['oidc', 'principal', 'mfa', 'passkeys', 'gate'], // principal: the authentication middleware, above every credential it checks;
  // mfa and passkeys: their routes (the factors themselves are account data, in accounts/)
];
// Above every tier: the files directly in worker/src (app.ts, service.ts, index.ts), imported by no folder.

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
          '^worker/src/(console/[a-z-]*texts|' +
          'auth/password-policy|notifications/user-agent)\\.ts$',
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

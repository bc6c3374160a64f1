/**
 * The registry of every configuration variable of the specification (and the few deployment
 * variables this implementation adds). Nothing else in the code knows a variable's environment
 * name, type or default: the resolver reads them from here, and so do the table of docs/configuration.md and tests.
 */
import { checkHostOrRange, checkProxyRange } from './ip-ranges.js';
import { AUDIT_INDEX_PREFIX, IndexPatternSchema } from '../../../schema/bridge/index.js';
import type { BooleanVar, EnumVar, IntegerVar, ListVar, NumberVar, StringVar, VarDef, VarGroup } from './types.js';

/** `ui`: editable in the console although its group is not (a deployment variable that is policy). */
type Common = { env?: string; secret?: boolean; restart?: boolean; ui?: boolean };

const UI = new Set<VarGroup>(['API', 'Security', 'Mail', 'Error tracking']);

function base(group: VarGroup, env: string, description: string, o: Common) {
  const ui = o.ui ?? UI.has(group);
  return {
    env: o.env ?? env,
    group,
    description,
    ui,
    secret: o.secret ?? false,
    restart: o.restart ?? !ui,
  };
}

function str(
  group: VarGroup,
  env: string,
  dflt: string,
  description: string,
  o: Common & { check?: StringVar['check']; format?: string; oneOf?: readonly string[] } = {},
): StringVar {
  // Without an explicit format, the check's own explanation of a value it refuses describes it.
  const format = o.format ?? (o.check ? (o.check('\0') ?? o.check('') ?? undefined) : undefined);
  return { ...base(group, env, description, o), type: 'string', default: dflt, check: o.check, format, oneOf: o.oneOf };
}
function int(
  group: VarGroup,
  env: string,
  dflt: number,
  min: number,
  max: number,
  description: string,
  o: Common = {},
): IntegerVar {
  return { ...base(group, env, description, o), type: 'integer', default: dflt, min, max };
}
function num(
  group: VarGroup,
  env: string,
  dflt: number,
  min: number,
  max: number,
  description: string,
  o: Common = {},
): NumberVar {
  return { ...base(group, env, description, o), type: 'number', default: dflt, min, max };
}
function bool(group: VarGroup, env: string, dflt: boolean, description: string, o: Common = {}): BooleanVar {
  return { ...base(group, env, description, o), type: 'boolean', default: dflt };
}
function list(
  group: VarGroup,
  env: string,
  dflt: readonly string[],
  description: string,
  o: Common & { checkItem?: ListVar['checkItem']; format?: string } = {},
): ListVar {
  return { ...base(group, env, description, o), type: 'list', default: dflt, checkItem: o.checkItem, format: o.format };
}
function enumeration(
  group: VarGroup,
  env: string,
  dflt: string,
  values: readonly string[],
  description: string,
  o: Common = {},
): EnumVar {
  return { ...base(group, env, description, o), type: 'enumeration', default: dflt, values };
}

// ---- format checks -------------------------------------------------------------------------

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'WARN', 'ERROR', 'CRITICAL'] as const;

function httpUrl(value: string): string | null {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? null : 'an absolute http(s) URL';
  } catch {
    return 'an absolute http(s) URL';
  }
}
function urlPath(allowEmpty: boolean) {
  return (value: string): string | null =>
    (allowEmpty && value === '') || /^(\/[A-Za-z0-9._~-]+)+$/.test(value)
      ? null
      : 'a path starting with "/" without a trailing slash';
}
/** A Sentry-style DSN: https://PUBLIC_KEY@HOST[:PORT]/[PATH/]PROJECT_ID, or empty. */
export function dsnCheck(value: string): string | null {
  if (value === '') return null;
  try {
    const u = new URL(value);
    const ok = (u.protocol === 'https:' || u.protocol === 'http:') && u.username !== '' && /\/\d+$/.test(u.pathname);
    return ok ? null : 'a DSN such as https://KEY@HOST/PROJECT_ID';
  } catch {
    return 'a DSN such as https://KEY@HOST/PROJECT_ID';
  }
}
export const LOGSTORE_PLACEHOLDER = 'https://<logstore_host>:9200';
function logstoreUrls(value: string): string | null {
  if (value === LOGSTORE_PLACEHOLDER) return null;
  const parts = value.split(';').map((s) => s.trim());
  return parts.length > 0 && parts.every((p) => httpUrl(p) === null) ? null : 'http(s) URLs separated by ";"';
}
function pem(value: string): string | null {
  return value === '' || /-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/.test(value)
    ? null
    : 'PEM certificate content (-----BEGIN CERTIFICATE----- ...)';
}
/** AUDIT_*_PATTERN: one pattern under the service's own prefix (docs/audit-logs.md), never another index. */
function auditPattern(value: string): string | null {
  return IndexPatternSchema.safeParse(value).success
    ? null
    : `an index pattern starting with ${AUDIT_INDEX_PREFIX} (then lower case letters, digits, . _ + - and *)`;
}
function nonEmpty(value: string): string | null {
  return value.trim() === '' ? 'a non-empty string' : null;
}
/** A special symbol must be one printable character that is neither a letter nor a digit. */
function specialSymbol(item: string): string | null {
  return [...item].length === 1 && !/[\p{L}\p{N}\p{Cc}\s]/u.test(item)
    ? null
    : 'single characters that are neither letters, digits nor spaces';
}

/** A WebAuthn relying-party id: a host name (no scheme, port or path), or empty. */
function webauthnRpId(value: string): string | null {
  const ok =
    value === '' ||
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(value);
  return ok ? null : 'a lower-case host name such as example.com (no scheme, port or path), or empty';
}
/** An http(s) origin: scheme, host and optional port, nothing more. */
function webOrigin(value: string): string | null {
  try {
    const u = new URL(value);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === value ? null : 'an origin';
  } catch {
    return 'an origin such as https://auth.example.com';
  }
}

// ---- the registry -------------------------------------------------------------------------

const A = 'API' as const;
const S = 'Security' as const;

/** An item of GROUP_ROLES: a group name, "=", and admin or auditor. */
function checkGroupRole(item: string): string | null {
  const at = item.lastIndexOf('=');
  const role = item.slice(at + 1).trim();
  if (at <= 0 || item.slice(0, at).trim() === '') return 'a group name, "=", and admin or auditor';
  return role === 'admin' || role === 'auditor' ? null : `the role after "=" is admin or auditor, not "${role}"`;
}
const M = 'Mail' as const;
const E = 'Error tracking' as const;
const DB = 'Database connection' as const;
const G = 'General parameters' as const;
const I = 'Internal service addresses' as const;
const SB = 'Sessions and background processing' as const;
const L = 'Search and log store integration' as const;
const ET = 'Error-tracking integration' as const;
const D = 'Deployment' as const;

export const REGISTRY = {
  // Group API
  LOG_LEVEL: str(A, 'AUTH_LOG_LEVEL', 'INFO', 'logging level of the service', { oneOf: LOG_LEVELS }),
  ACCESS_LOG_LEVEL: str(A, 'AUTH_ACCESS_LOG_LEVEL', 'INFO', 'logging level of API access', { oneOf: LOG_LEVELS }),
  NOTIFICATION_EXPIRATION: int(A, 'AUTH_NOTIFICATION_EXPIRATION', 10, 1, 3650, 'days the notification history is kept'),
  AUDIT_CRUD_USER_LOGS_PATTERN: str(
    A,
    'AUDIT_CRUD_USER_LOGS_PATTERN',
    'svc-sec-crud-user-logs-*',
    "index pattern of the log of users' CRUD operations",
    { check: auditPattern },
  ),
  AUDIT_CRUD_ADMIN_LOGS_PATTERN: str(
    A,
    'AUDIT_CRUD_ADMIN_LOGS_PATTERN',
    'svc-sec-crud-admin-logs-*',
    "index pattern of the log of administrators' CRUD operations",
    { check: auditPattern },
  ),
  AUDIT_EXT_SERVICE_ACCESS_PATTERN: str(
    A,
    'AUDIT_EXT_SERVICE_ACCESS_PATTERN',
    'svc-sec-ext-service-access-*',
    'index pattern of the log of access to corporate services',
    { check: auditPattern },
  ),
  AUDIT_API_ACCESS_PATTERN: str(
    A,
    'AUDIT_API_ACCESS_PATTERN',
    'svc-sec-api-access-*',
    'index pattern of the log of access to the system API',
    { check: auditPattern },
  ),
  AUDIT_USER_ACTIVITY_PATTERN: str(
    A,
    'AUDIT_USER_ACTIVITY_PATTERN',
    'svc-sec-user-activity-*',
    'index pattern of the user activity log',
    { check: auditPattern },
  ),
  AUDIT_DATA_LIFECYCLE_PATTERN: str(
    A,
    'AUDIT_DATA_LIFECYCLE_PATTERN',
    'svc-sec-data-lifecycle-*',
    'index pattern of the monitoring data lifecycle log',
    { check: auditPattern },
  ),
  LOGSTORE_URLS: str(
    A,
    'LOGSTORE_URLS',
    LOGSTORE_PLACEHOLDER,
    'addresses of the search and log store nodes, separated by semicolons',
    { check: logstoreUrls },
  ),
  LOGSTORE_TIMEOUT: int(
    A,
    'LOGSTORE_TIMEOUT',
    10,
    1,
    300,
    'timeout, in seconds, of requests to the search and log store',
  ),

  // Group Security (environment names not shown by the specification: their own names, architecture.md §4)
  DEFAULT_FRONTEND_URL: str(
    S,
    'DEFAULT_FRONTEND_URL',
    'http://localhost',
    'default page to go to after successful authorization',
    { check: httpUrl },
  ),
  DEFAULT_FRONTEND_MERGE_URL: str(
    S,
    'DEFAULT_FRONTEND_MERGE_URL',
    'http://localhost/conflict',
    'default page to go to when accounts with the same login conflict',
    { check: httpUrl },
  ),
  LDAP_SERVER_CONNECT_TIMEOUT: int(
    S,
    'LDAP_SERVER_CONNECT_TIMEOUT',
    5,
    1,
    120,
    'seconds, timeout of connecting to the LDAP server',
  ),
  LDAP_SERVER_SEARCHING_TIMEOUT: int(
    S,
    'LDAP_SERVER_SEARCHING_TIMEOUT',
    5,
    1,
    120,
    'seconds, timeout of a search on the LDAP server',
  ),
  LDAP_GROUPS_REFRESH_MIN: int(
    D,
    'AUTH_LDAP_GROUPS_REFRESH_MIN',
    60,
    0,
    10080,
    'minutes between two reads of the groups of an LDAP account between its logins; a refresh only takes ' +
      'groups (and the roles they gave) away (docs/ldap.md, "Groups"); 0: read at logins only',
    { ui: true },
  ),
  DIRECTORY_SIGNATURE: str(S, 'DIRECTORY_SIGNATURE', '1.2.840.113556.1.4.800', 'signature of the directory service', {
    check: (v) => (/^\d+(\.\d+)+$/.test(v) ? null : 'an OID such as 1.2.840.113556.1.4.800'),
  }),
  GROUP_ROLES: list(
    D,
    'AUTH_GROUP_ROLES',
    [],
    'groups whose members get a role of this service at each LDAP or OIDC login that reads their groups, as ' +
      'name=admin or name=auditor (docs/groups.md, "Roles from groups"); empty: groups give no role',
    { checkItem: checkGroupRole, format: 'comma-separated group=admin or group=auditor', ui: true },
  ),
  AUTH_FAILED_TIMEOUT_MIN: int(
    S,
    'AUTH_FAILED_TIMEOUT_MIN',
    15,
    1,
    1440,
    'minutes, the interval in which failed authorization attempts are counted',
  ),
  AUTH_FAILED_COUNT: int(
    S,
    'AUTH_FAILED_COUNT',
    3,
    1,
    100,
    'number of failed attempts after which a restriction applies',
  ),
  AUTH_SESSIONS_MAX_COUNT: int(S, 'AUTH_SESSIONS_MAX_COUNT', 5, 1, 100, 'maximum number of sessions of a user'),
  AUTH_SESSIONS_DEFAULT_COUNT: int(S, 'AUTH_SESSIONS_DEFAULT_COUNT', 1, 1, 100, 'default number of sessions of a user'),
  USER_INACTIVE_TIMEOUT_DAY: int(
    S,
    'USER_INACTIVE_TIMEOUT_DAY',
    45,
    1,
    3650,
    'days of inactivity after which the account is blocked',
  ),
  USER_LOGIN_REUSE_DAY: int(S, 'USER_LOGIN_REUSE_DAY', 1095, 0, 36500, 'days after which a login may be reused'),
  USER_PASSWORD_MIN_LENGTH: int(S, 'USER_PASSWORD_MIN_LENGTH', 8, 1, 128, 'minimum password length'),
  USER_PASSWORD_MAX_LENGTH: int(S, 'USER_PASSWORD_MAX_LENGTH', 20, 1, 1024, 'maximum password length'),
  USER_PASSWORD_SPECIAL_SYM: list(
    S,
    'USER_PASSWORD_SPECIAL_SYM',
    ['$', '@', '#', '%'],
    'allowed special characters in a password',
    {
      checkItem: specialSymbol,
      format: 'comma-separated single characters',
    },
  ),
  USER_PASSWORD_SPECIAL_SYM_MIN: int(
    S,
    'USER_PASSWORD_SPECIAL_SYM_MIN',
    1,
    0,
    128,
    'minimum count of special characters',
  ),
  USER_PASSWORD_DIGITAL_MIN: int(S, 'USER_PASSWORD_DIGITAL_MIN', 1, 0, 128, 'minimum count of digits'),
  USER_PASSWORD_LOWER_MIN: int(S, 'USER_PASSWORD_LOWER_MIN', 1, 0, 128, 'minimum count of lower-case letters'),
  USER_PASSWORD_UPPER_MIN: int(S, 'USER_PASSWORD_UPPER_MIN', 1, 0, 128, 'minimum count of upper-case letters'),
  USER_PASSWORD_HISTORY_DEPTH: int(
    S,
    'USER_PASSWORD_HISTORY_DEPTH',
    3,
    0,
    100,
    'number of previous passwords that may not be reused',
  ),
  USER_PASSWORD_EXPIRATION_DAY: int(
    S,
    'USER_PASSWORD_EXPIRATION_DAY',
    60,
    0,
    3650,
    'password lifetime in days (0: passwords never expire)',
  ),

  // Group Mail (placeholders are obviously fake: sending refuses while EMAIL_HOST is the placeholder)
  EMAIL_HOST: str(M, 'EMAIL_HOST', 'mail.example.com', 'address of the mail server', { check: nonEmpty }),
  EMAIL_USE_TLS: bool(M, 'EMAIL_USE_TLS', true, 'use TLS when connecting to the mail server'),
  EMAIL_PORT: int(M, 'EMAIL_PORT', 587, 1, 65535, 'port of the mail server'),
  EMAIL_FROM: str(M, 'EMAIL_FROM', 'noreply@example.com', 'sender address or name', { check: nonEmpty }),
  EMAIL_HOST_USER: str(M, 'EMAIL_HOST_USER', 'user', 'user name for the mail server'),
  EMAIL_HOST_PASSWORD: str(M, 'EMAIL_HOST_PASSWORD', 'change-me', 'password for the mail server', { secret: true }),

  // Group Error tracking
  PROFILE: bool(E, 'AUTH_PROFILE', false, 'enables profiling through the error-tracking system', { restart: true }),

  // Hidden: database connection
  DB_SCHEMA: str(
    DB,
    'AUTH_DB_SCHEMA',
    'auth',
    'database schema used by the service (libSQL: the name the database is stamped with)',
    {
      check: (v) => (/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(v) ? null : 'an identifier of letters, digits and "_"'),
    },
  ),
  DB_POOL: bool(DB, 'AUTH_DB_POOL', true, 'use a connection pool'),
  DB_POOL_SIZE: int(DB, 'AUTH_DB_POOL_CONNECT', 20, 1, 1000, 'pool size'),
  DB_POOL_OVERFLOW: int(DB, 'AUTH_DB_POOL_OVERFLOW', 10, 0, 1000, 'extra connections beyond the pool size'),

  // Hidden: general parameters
  PROJECT_NAME: str(G, 'AUTH_PROJECT_NAME', 'AUTH', 'service name', { check: nonEmpty }),
  PROJECT_DESCRIPTION: str(G, 'AUTH_PROJECT_DESCRIPTION', 'Сервис авторизации', 'service description'),
  USE_CONTAINER_IP_FOR_BIND: bool(
    G,
    'AUTH_USE_CONTAINER_IP_FOR_BIND',
    true,
    'use the container IP as the bind address',
  ),
  BIND_HOST: str(G, 'AUTH_BIND_HOST', '', 'address on which the service accepts connections'),
  BIND_PORT: int(G, 'AUTH_BIND_PORT', 8001, 0, 65535, 'port of incoming connections (0: any free port)'),
  ROOT_PATH: str(G, 'AUTH_ROOT_PATH', '/api/auth', 'root path of the published API', { check: urlPath(true) }),
  DOCS_PREFIX: str(G, 'AUTH_DOCS_PREFIX', '/docs', 'path of the published documentation', { check: urlPath(false) }),
  WORKERS: int(G, 'AUTH_WORKERS', 1, 1, 64, 'number of worker processes'),
  DEBUG: bool(G, 'AUTH_DEBUG', false, 'debug mode'),
  SHOW_DEBUG_SETTING: bool(G, 'AUTH_SHOW_DEBUG_SETTING', false, 'controls display of debug settings'),
  RELOAD: bool(G, 'AUTH_RELOAD', false, 'automatic reload when code changes'),
  EVENT_HANDLING: bool(G, 'AUTH_EVENT_HANDLING', true, 'event handling inside the service'),
  STATIC_PATH: str(G, 'AUTH_STATIC_PATH', '/docs', 'path of static files', { check: urlPath(false) }),
  STATIC_DIR: str(G, 'AUTH_STATIC_DIR', 'static', 'directory of static files', { check: nonEmpty }),

  // Hidden: internal service addresses
  AUTH_HOST: str(I, 'AUTH_HOST', 'localhost', 'internal address of the authorization service', { check: nonEmpty }),
  AUTH_PORT: int(I, 'AUTH_PORT', 8001, 1, 65535, 'internal port of the authorization service'),
  AUTH_VERSION_PREFIX: str(I, 'AUTH_VERSION_PREFIX', '/v3', 'version prefix of its API', { check: urlPath(false) }),
  SRM_HOST: str(I, 'SRM_HOST', 'localhost', 'internal address of the SRM service', { check: nonEmpty }),
  SRM_PORT: int(I, 'SRM_PORT', 8002, 1, 65535, 'internal port of the SRM service'),
  SRM_VERSION_PREFIX: str(I, 'SRM_VERSION_PREFIX', '/v3', 'version prefix of its API', { check: urlPath(false) }),
  MONITORING_HOST: str(I, 'MONITORING_HOST', 'localhost', 'internal address of the monitoring service', {
    check: nonEmpty,
  }),
  MONITORING_PORT: int(I, 'MONITORING_PORT', 8004, 1, 65535, 'internal port of the monitoring service'),
  MONITORING_VERSION_PREFIX: str(I, 'MONITORING_VERSION_PREFIX', '/v3', 'version prefix of its API', {
    check: urlPath(false),
  }),

  // Hidden: sessions and background processing
  SESSION_SECRET_KEY: str(
    SB,
    'SESSION_SECRET_KEY',
    '',
    'secret key for user sessions (empty: generated automatically at start)',
    {
      secret: true,
      check: (v) => (v === '' || v.length >= 32 ? null : 'at least 32 characters'),
    },
  ),
  OUTBOX_CONTEXT_DETACH: bool(
    SB,
    'OUTBOX_CONTEXT_DETACH',
    true,
    'controls detaching of context when outbox messages are processed',
  ),
  OUTBOX_BATCH_SIZE: int(SB, 'OUTBOX_BATCH_SIZE', 20, 1, 1000, 'batch size of outbox message processing'),
  BACKGROUND_TYPE: enumeration(
    SB,
    'BACKGROUND_TYPE',
    'MEMORY',
    ['MEMORY'],
    'type of the background-processing mechanism',
  ),
  IN_APP_SCHEDULER_ENABLED: bool(
    SB,
    'IN_APP_SCHEDULER_ENABLED',
    true,
    'enables the built-in scheduler of background tasks',
  ),
  DEBUG_COUNTDOWN_USER_SU: int(SB, 'AUTH_DEBUG_COUNTDOWN_USER_SU', 20, 1, 1440, 'minutes the super-access lasts'),

  // Hidden: search and log store integration
  LOGSTORE_VERIFY_CERTS: bool(L, 'LOGSTORE_VERIFY_CERTS', false, "verify the store's TLS certificates on connect"),
  LOGSTORE_USER_ROLE_ATTRIBUTE: str(
    L,
    'LOGSTORE_USER_ROLE_ATTRIBUTE',
    'role',
    'name of the user attribute whose value serves as the role in the integration',
    { check: nonEmpty },
  ),

  // Hidden: error-tracking integration
  ERRTRACK_DSN: str(ET, 'AUTH_ERRTRACK_DSN', '', 'DSN for sending events of the authorization service', {
    check: dsnCheck,
  }),
  SENDER_ERRTRACK_DSN: str(ET, 'SENDER_ERRTRACK_DSN', '', 'DSN for sending events related to sending messages', {
    check: dsnCheck,
  }),
  ERRTRACK_ENV: str(ET, 'ERRTRACK_ENV', '', 'environment name attached to events; while empty, no events are sent'),
  ERRTRACK_CA: str(
    ET,
    'ERRTRACK_CA',
    '',
    'root certificate (PEM) that verifies the TLS connection to the error-tracking system',
    { check: pem },
  ),
  FRONTEND_ERRTRACK_DSN: str(
    ET,
    'FRONTEND_ERRTRACK_DSN',
    '',
    'DSN for events of the web interface; while empty, error tracking is off in the browser',
    { check: dsnCheck },
  ),
  FRONTEND_ERRTRACK_TUNNEL: bool(
    ET,
    'FRONTEND_ERRTRACK_TUNNEL',
    false,
    'send web-interface events through the authorization service',
  ),
  FRONTEND_ERRTRACK_TRACES_SAMPLE_RATE: num(
    ET,
    'FRONTEND_ERRTRACK_TRACES_SAMPLE_RATE',
    1.0,
    0,
    1,
    'share of traced web-interface transactions',
  ),
  FRONTEND_ERRTRACK_REPLAYS_SAMPLE_RATE: num(
    ET,
    'FRONTEND_ERRTRACK_REPLAYS_SAMPLE_RATE',
    0.1,
    0,
    1,
    'share of user sessions for which a session replay is recorded',
  ),
  FRONTEND_ERRTRACK_TUNNEL_TIMEOUT: num(
    ET,
    'FRONTEND_ERRTRACK_TUNNEL_TIMEOUT',
    5.0,
    0.1,
    120,
    'seconds, timeout of relaying an event from the browser',
  ),
  FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE: int(
    ET,
    'FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE',
    2097152,
    1024,
    104857600,
    'bytes, maximum size of an event accepted from the browser for relaying',
  ),

  // Deployment variables added by this implementation (architecture.md §1, §4); not in the specification
  LIBSQL_URL: str(
    D,
    'LIBSQL_URL',
    'file:data/auth.db',
    'libSQL database: file: (Node host) or http(s)://, libsql:// (sqld, Turso)',
    {
      check: (v) =>
        /^(file:|https?:\/\/|libsql:\/\/|wss?:\/\/)/.test(v) ? null : 'a file:, http(s)://, libsql:// or ws(s):// URL',
    },
  ),
  LIBSQL_AUTH_TOKEN: str(D, 'LIBSQL_AUTH_TOKEN', '', 'auth token of the libSQL server (sqld, Turso)', { secret: true }),
  AUTH_BOOTSTRAP_ADMIN_LOGIN: str(
    D,
    'AUTH_BOOTSTRAP_ADMIN_LOGIN',
    '',
    'login of the first administrator, created while no administrator exists',
  ),
  AUTH_BOOTSTRAP_ADMIN_PASSWORD: str(
    D,
    'AUTH_BOOTSTRAP_ADMIN_PASSWORD',
    '',
    'password of the first administrator (must pass the password policy)',
    { secret: true },
  ),
  PUBLIC_URL: str(
    D,
    'AUTH_PUBLIC_URL',
    '',
    "the service's public origin as browsers reach it (https://auth.example.com): mails link to the console's " +
      "pages there while DEFAULT_FRONTEND_URL is not set; empty: the Node host's own address (docs/mail.md)",
    {
      check: (v) =>
        v === '' || (httpUrl(v) === null && /^https?:\/\/[^/?#]+\/?$/.test(v)) ? null : 'an http(s) origin',
    },
  ),
  COOKIE_DOMAIN: str(
    D,
    'AUTH_COOKIE_DOMAIN',
    '',
    "the session cookie's Domain (e.g. .example.com), so that one sign-in reaches the platform's protected " +
      'services behind the gate (docs/integration.md); it then has Path=/. Empty: a host-only cookie scoped to ' +
      'ROOT_PATH. The CSRF rules are the same either way',
    {
      check: (v) =>
        v === '' || /^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(v)
          ? null
          : 'a domain name in lower case (an optional leading dot), or an IPv4 address',
    },
  ),
  BRIDGE_URL: str(
    D,
    'AUTH_BRIDGE_URL',
    '',
    'base URL of the ldap-bridge (https://host:port); empty: no bridge. Locally the edge host may name the mTLS ' +
      'binding emulator (http://127.0.0.1:port)',
    {
      check: (v) =>
        v === '' || /^https:\/\/[^/]+$/.test(v) || /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(v)
          ? null
          : 'an https:// origin such as https://bridge.internal:8443 (or the local emulator http://127.0.0.1:port)',
    },
  ),
  BRIDGE_EMBEDDED: bool(
    D,
    'AUTH_BRIDGE_EMBEDDED',
    true,
    'Node host: while BRIDGE_URL is empty, run a development bridge on loopback inside the host, over mutual ' +
      'TLS with the BRIDGE_TLS_* development certificates (made with openssl at the first start when absent). ' +
      'Production runs the bridge on-prem instead',
  ),
  BRIDGE_TLS_CERT: str(
    D,
    'AUTH_BRIDGE_TLS_CERT',
    'data/certs/worker-client.pem',
    'Node host: file of the client certificate presented to the bridge',
  ),
  BRIDGE_TLS_KEY: str(
    D,
    'AUTH_BRIDGE_TLS_KEY',
    'data/certs/worker-client.key',
    'Node host: file of the key of that certificate',
  ),
  BRIDGE_TLS_CA: str(
    D,
    'AUTH_BRIDGE_TLS_CA',
    'data/certs/dev-ca.pem',
    "Node host: file of the CA that signs the bridge's server certificate",
  ),
  SECRETS_ENCRYPTION_KEY: str(
    D,
    'AUTH_SECRETS_ENCRYPTION_KEY',
    '',
    'key that encrypts stored secrets (TOTP secrets, LDAP service passwords, OIDC client secrets, the mail ' +
      'password); empty: SESSION_SECRET_KEY seals them, and with neither set the Node host generates one ' +
      'once and keeps it in secrets.key beside the database (back it up with the database)',
    {
      secret: true,
      check: (v) => (v === '' || v.length >= 32 ? null : 'at least 32 characters'),
    },
  ),
  AUDIT_API_ACCESS_ENABLED: bool(
    D,
    'AUTH_AUDIT_API_ACCESS',
    true,
    'record an api_access audit event for every request authenticated with Basic or Bearer ' +
      '(buffered, written within a second)',
  ),
  AUDIT_API_ACCESS_WINDOW_SEC: int(
    D,
    'AUTH_AUDIT_API_ACCESS_WINDOW_SEC',
    60,
    0,
    3600,
    'seconds of the window in which successful API reads of one account, credential, path, status and client ' +
      'address are recorded as one api.request event with their count (0: one event per request)',
  ),
  AUDIT_LOCAL_RETENTION_DAYS: int(
    D,
    'AUTH_AUDIT_LOCAL_RETENTION_DAYS',
    30,
    1,
    3650,
    'days audit events are kept in the database while no log store is configured (LOGSTORE_URLS the placeholder)',
    { ui: true },
  ),
  AUDIT_LOCAL_MAX_MB: int(
    D,
    'AUTH_AUDIT_LOCAL_MAX_MB',
    1024,
    1,
    1_000_000,
    'megabytes the audit events in the database may take while no log store is configured (estimated from ' +
      'the rows); beyond, the oldest are deleted (docs/audit-logs-embedded.md, "Size bound")',
    { ui: true },
  ),
  OUTBOX_DELIVERED_MAX_MB: int(
    D,
    'AUTH_OUTBOX_DELIVERED_MAX_MB',
    256,
    1,
    1_000_000,
    'megabytes the audit events already delivered to the log store may take in the outbox; beyond, the ' +
      'oldest delivered are deleted before OUTBOX_RETENTION_DAY (undelivered events never)',
  ),
  OUTBOX_RETENTION_DAY: int(
    D,
    'AUTH_OUTBOX_RETENTION_DAY',
    7,
    1,
    3650,
    'days audit events are kept in the outbox after their delivery to the log store',
  ),
  SESSION_IDLE_TIMEOUT_MIN: int(
    D,
    'AUTH_SESSION_IDLE_TIMEOUT_MIN',
    120,
    1,
    10080,
    'minutes without a request after which a session ends',
  ),
  SESSION_ABSOLUTE_TIMEOUT_HOURS: int(
    D,
    'AUTH_SESSION_ABSOLUTE_TIMEOUT_HOURS',
    24,
    1,
    720,
    'hours after which a session ends, however active',
  ),
  TEST_CLOCK_CONTROL: bool(
    D,
    'AUTH_TEST_CLOCK_CONTROL',
    false,
    'test suites only: POST ROOT_PATH/__test__/clock shifts the service clock; never enable in production',
  ),
  SESSION_SECRET_KEY_PREVIOUS: str(
    D,
    'SESSION_SECRET_KEY_PREVIOUS',
    '',
    'previous session key, still accepted to verify cookies during a rotation',
    {
      secret: true,
      check: (v) => (v === '' || v.length >= 32 ? null : 'at least 32 characters'),
    },
  ),
  SECRETS_ENCRYPTION_KEY_PREVIOUS: str(
    D,
    'AUTH_SECRETS_ENCRYPTION_KEY_PREVIOUS',
    '',
    'previous AUTH_SECRETS_ENCRYPTION_KEY, still accepted to decrypt stored secrets during a rotation ' +
      '(they are re-encrypted with the current key)',
    {
      secret: true,
      check: (v) => (v === '' || v.length >= 32 ? null : 'at least 32 characters'),
    },
  ),
  MFA_REQUIRED_ROLES: list(
    D,
    'AUTH_MFA_REQUIRED_ROLES',
    [],
    'roles whose accounts must use a second factor; a session of such an account without one may only enrol ' +
      '(docs/security-mfa.md)',
    {
      checkItem: (item) => (['admin', 'auditor', 'user'].includes(item) ? null : 'roles: admin, auditor, user'),
      format: 'comma-separated roles (admin, auditor, user)',
      ui: true,
    },
  ),
  TOKEN_DEFAULT_LIFETIME_DAYS: int(
    D,
    'AUTH_TOKEN_DEFAULT_LIFETIME_DAYS',
    90,
    1,
    3650,
    'days an API token lives when its creator names no lifetime (at most AUTH_TOKEN_MAX_LIFETIME_DAYS)',
    { ui: true },
  ),
  TOKEN_MAX_LIFETIME_DAYS: int(
    D,
    'AUTH_TOKEN_MAX_LIFETIME_DAYS',
    365,
    1,
    3650,
    'the longest lifetime an API token may be given, in days (tokens made before keep theirs)',
    { ui: true },
  ),
  TOKEN_NO_EXPIRY_ALLOWED: bool(
    D,
    'AUTH_TOKEN_NO_EXPIRY_ALLOWED',
    false,
    'whether an API token may be made that never expires (expiresInDays: null)',
    { ui: true },
  ),
  MFA_STEP_UP_MIN: int(
    D,
    'AUTH_MFA_STEP_UP_MIN',
    15,
    1,
    1440,
    'minutes a second-factor verification of a session lets it do sensitive operations (step-up)',
    { ui: true },
  ),
  ADDRESS_FAILED_COUNT: int(
    D,
    'AUTH_ADDRESS_FAILED_COUNT',
    30,
    1,
    1_000_000,
    'failed logins from one client address (IPv4 /32, IPv6 /64), across all logins, within ' +
      'AUTH_ADDRESS_FAILED_WINDOW_MIN, after which that address gets 429 for every password login',
  ),
  ADDRESS_FAILED_WINDOW_MIN: int(
    D,
    'AUTH_ADDRESS_FAILED_WINDOW_MIN',
    15,
    1,
    1440,
    'minutes, the interval in which the failed logins of one client address are counted',
  ),
  NEW_DEVICE_MAIL: bool(
    D,
    'AUTH_NEW_DEVICE_MAIL',
    true,
    "mail the owner when a session login comes from a client without the account's device cookie (time, " +
      'address, browser; Basic and API logins never do); UI-editable',
    { ui: true },
  ),
  MAX_BODY_SIZE: int(
    D,
    'AUTH_MAX_BODY_SIZE',
    65536,
    1024,
    10485760,
    'bytes, largest request body accepted (413 beyond, refused before it is buffered); ' +
      'the Sentry tunnel has its own FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE',
  ),
  TRUSTED_PROXIES: list(
    D,
    'AUTH_TRUSTED_PROXIES',
    [],
    'Node host: IP addresses or CIDR ranges of the reverse proxies whose X-Forwarded-Proto and ' +
      'X-Forwarded-For are believed (empty: none). The edge host never believes forwarded headers',
    {
      checkItem: checkProxyRange,
      format: 'comma-separated IP addresses or CIDR ranges',
    },
  ),
  WEBHOOK_ALLOW_HTTP_HOSTS: list(
    D,
    'AUTH_WEBHOOK_ALLOW_HTTP_HOSTS',
    [],
    'host names (or IP addresses) that webhook subscriptions may reach over plain http:// (development, a ' +
      'receiver on the same host); every other subscription URL must be https:// (docs/webhooks.md, "Targets")',
    { format: 'comma-separated host names or IP addresses' },
  ),
  WEBHOOK_ALLOW_PRIVATE: list(
    D,
    'AUTH_WEBHOOK_ALLOW_PRIVATE',
    [],
    'host names, IP addresses or CIDR ranges that webhooks may reach although they are loopback, private, ' +
      'link-local or a cloud metadata address (refused otherwise: docs/webhooks.md, "Targets")',
    { checkItem: checkHostOrRange, format: 'comma-separated host names, IP addresses or CIDR ranges' },
  ),
  WEBAUTHN_RP_ID: str(
    D,
    'AUTH_WEBAUTHN_RP_ID',
    '',
    "passkeys' relying-party id: the service's host name or a registrable domain it lies in (passkeys are bound " +
      "to it: changing it makes every registered passkey unusable). Empty: the host name of the service's public " +
      'origin, as the request reached it (docs/security-passkeys.md)',
    { check: webauthnRpId },
  ),
  WEBAUTHN_ORIGINS: list(
    D,
    'AUTH_WEBAUTHN_ORIGINS',
    [],
    'origins whose pages may register and use passkeys (the console, a front end); each must lie within ' +
      "AUTH_WEBAUTHN_RP_ID. Empty: the service's public origin, as the request reached it",
    { checkItem: webOrigin, format: 'comma-separated origins such as https://auth.example.com' },
  ),
  PASSWORD_HASH_CONCURRENCY: int(
    D,
    'AUTH_PASSWORD_HASH_CONCURRENCY',
    2,
    1,
    64,
    'password checks and hashes (argon2id) run at once per process (edge: per isolate). Unset on the Node host: ' +
      'one per core the process may use (divided among WORKERS), at most UV_THREADPOOL_SIZE (4 by default) minus 2, ' +
      'at least 1; the host runs them on those libuv threads',
  ),
  PASSWORD_BLOCKLIST_FILE: str(
    D,
    'AUTH_PASSWORD_BLOCKLIST_FILE',
    '',
    "the operator's password filter (npm run blocklist:compile), refused besides the bundled common passwords; " +
      'the edge reads it from the static assets, so it must lie in STATIC_DIR (empty: the bundled list only)',
  ),
  PASSWORD_HASH_QUEUE: int(
    D,
    'AUTH_PASSWORD_HASH_QUEUE',
    32,
    0,
    10000,
    'password checks that may wait for a free slot, served fairly across client addresses (device-cookie logins ' +
      'first, addresses with recent failures last: docs/security-admission.md); when full, the worst placed waiter ' +
      "is shed with 429, or a newcomer placed no better gets 429 (a clean address's first attempt waits in as many " +
      'places again); never a 503, never counted as a failed login',
  ),
  PASSWORD_ADDRESS_IN_FLIGHT: int(
    D,
    'AUTH_PASSWORD_ADDRESS_IN_FLIGHT',
    4,
    1,
    1000,
    'password checks and hashes one client address (IPv4 /32, IPv6 /64) may have running or waiting at once, ' +
      'per process (edge: per isolate); beyond, 429 PASSWORD_CHECKS_THROTTLED with Retry-After, nothing checked',
  ),
  PASSWORD_ADDRESS_RATE: int(
    D,
    'AUTH_PASSWORD_ADDRESS_RATE',
    60,
    1,
    100000,
    'password checks and hashes per minute one client address (IPv4 /32, IPv6 /64) may start, per process ' +
      '(edge: per isolate), refilled continuously; beyond, 429 PASSWORD_CHECKS_THROTTLED with Retry-After',
  ),
  PASSWORD_ADDRESS_BURST: int(
    D,
    'AUTH_PASSWORD_ADDRESS_BURST',
    20,
    1,
    100000,
    'password checks and hashes an idle client address may start at once before AUTH_PASSWORD_ADDRESS_RATE applies',
  ),
  MAIL_LANGUAGE: enumeration(
    D,
    'AUTH_MAIL_LANGUAGE',
    'ru',
    ['ru', 'en'],
    'language of the mails the service sends (notifications, password reset)',
  ),
  TOKEN_EXPIRY_NOTICE_DAY: int(
    D,
    'AUTH_TOKEN_EXPIRY_NOTICE_DAY',
    7,
    0,
    365,
    'days before an API token expires when its owner is told by mail, once per token (0: never)',
    { ui: true },
  ),
  PASSWORD_EXPIRY_NOTICE_DAY: int(
    D,
    'AUTH_PASSWORD_EXPIRY_NOTICE_DAY',
    7,
    0,
    365,
    'days before a password expires when its owner is told by mail, once per password (0: never)',
  ),
  REVOCATION_CHECK_SEC: int(
    D,
    'AUTH_REVOCATION_CHECK_SEC',
    30,
    0,
    300,
    'seconds an instance (edge: isolate) trusts its last database check of a session or API token before ' +
      'checking again: a logout, block, password change or token revocation holds at once on the instance that ' +
      "made it and within this bound on every other; likewise a device cookie's priority lane at login " +
      '(0: every request checks; architecture.md §6)',
    { ui: true },
  ),
  PASSWORD_RESET_TTL_MIN: int(
    D,
    'AUTH_PASSWORD_RESET_TTL_MIN',
    30,
    5,
    1440,
    'minutes a password-reset link (sent by mail) stays valid',
  ),
  WELCOME_LINK_TTL_HOURS: int(
    D,
    'AUTH_WELCOME_LINK_TTL_HOURS',
    72,
    1,
    720,
    "hours the link of a new account's mail (to set its first password) stays valid",
  ),
  METRICS_TOKEN: str(
    D,
    'AUTH_METRICS_TOKEN',
    '',
    'Bearer token of GET ROOT_PATH/metrics (Prometheus scrapes); empty: the endpoint answers 404',
    {
      secret: true,
      check: (v) =>
        v === '' || /^[\x21-\x7e]{32,}$/.test(v) ? null : 'at least 32 printable ASCII characters, no spaces',
    },
  ),
} as const satisfies Record<string, VarDef>;

export type Registry = typeof REGISTRY;
export type VarName = keyof Registry;
export const VAR_NAMES = Object.keys(REGISTRY) as VarName[];

/** The definition of a variable by name. */
export function varDef(name: VarName): VarDef {
  return REGISTRY[name];
}

/** Whether a string names a registered variable. */
export function isVarName(name: string): name is VarName {
  return Object.hasOwn(REGISTRY, name);
}

/**
 * The audit streams (architecture.md §5): one per AUDIT_* index pattern of the specification. Each
 * stream is a log type of the logs endpoints, and the events of a stream are shipped into a dated
 * concrete index under its pattern, derived from the event's own timestamp (so a retry of the same
 * event always targets the same index, where `create` with its id answers 409).
 */
import type { ConfigSnapshot } from '../config/index.js';

/** The log types, as named in the logs endpoints' paths, with their variable and meaning. */
export const STREAMS = {
  user_activity: {
    variable: 'AUDIT_USER_ACTIVITY_PATTERN',
    description: 'logins and logouts, refused logins, lockouts, sessions started and ended',
  },
  crud_user: {
    variable: 'AUDIT_CRUD_USER_LOGS_PATTERN',
    description: "a user's changes to their own account: password, API tokens, sessions",
  },
  crud_admin: {
    variable: 'AUDIT_CRUD_ADMIN_LOGS_PATTERN',
    description:
      "administrators' changes: accounts, roles, blocks, settings (before and after), LDAP and " +
      'identity-provider records, super-access',
  },
  api_access: {
    variable: 'AUDIT_API_ACCESS_PATTERN',
    description: 'every request authenticated with per-request credentials (Basic or Bearer)',
  },
  ext_service_access: {
    variable: 'AUDIT_EXT_SERVICE_ACCESS_PATTERN',
    description: "calls to external services on a user's behalf: LDAP directory, OIDC provider, mail",
  },
  data_lifecycle: {
    variable: 'AUDIT_DATA_LIFECYCLE_PATTERN',
    description: 'retention purges and deletions made by jobs',
  },
} as const;

export type StreamName = keyof typeof STREAMS;

/** Whether `name` is a stream (a log type); anything else is a 404 of the logs endpoints. */
export function isStream(name: string): name is StreamName {
  return Object.hasOwn(STREAMS, name);
}

/** The effective index pattern of a stream (UI-editable). */
export function streamPattern(config: ConfigSnapshot, stream: StreamName): string {
  return config.get(STREAMS[stream].variable);
}

/** `yyyy.mm.dd` of a UTC timestamp. */
function day(at: number): string {
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}.${two(d.getUTCMonth() + 1)}.${two(d.getUTCDate())}`;
}

/**
 * The concrete index of an event of `at` under `pattern`: the pattern's last `*` becomes the UTC day
 * (`svc-sec-api-access-*` → `svc-sec-api-access-2026.11.26`); any other `*` is dropped.
 */
export function datedIndex(pattern: string, at: number): string {
  const last = pattern.lastIndexOf('*');
  const dated = last < 0 ? `${pattern}-${day(at)}` : `${pattern.slice(0, last)}${day(at)}${pattern.slice(last + 1)}`;
  return dated.replaceAll('*', '');
}

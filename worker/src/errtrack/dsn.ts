/**
 * DSNs of the error-tracking system (Sentry): `{protocol}://{publicKey}@{host}[:port][/prefix]/{projectId}`.
 * Parsed with the WHATWG URL parser, so host names compare case-insensitively and a default port
 * equals no port (https://h:443/1 is https://h/1).
 */

export interface Dsn {
  protocol: 'https' | 'http';
  publicKey: string;
  /** Host name and port as URL#host gives them (lower case, default port omitted). */
  host: string;
  /** Path before the project id, without a trailing slash ('' when none). */
  pathPrefix: string;
  projectId: string;
}

/** Parses a DSN, or returns null when it is not one. */
export function parseDsn(value: string): Dsn | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return null;
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username === '' || u.search !== '' || u.hash !== '')
    return null;
  const m = /^(.*)\/(\d+)\/?$/.exec(u.pathname);
  if (!m) return null;
  return {
    protocol: u.protocol === 'https:' ? 'https' : 'http',
    publicKey: decodeURIComponent(u.username),
    host: u.host,
    pathPrefix: m[1]!,
    projectId: m[2]!,
  };
}

/** Whether two DSNs name the same project: same host (with port) and project id. */
export function sameProject(a: Dsn, b: Dsn): boolean {
  return a.host === b.host && a.projectId === b.projectId;
}

/**
 * The envelope endpoint of a DSN's project, `{protocol}://{host}{prefix}/api/{projectId}/envelope/`.
 * Authentication travels in the envelope header's `dsn` (how Sentry's tunnels work).
 */
export function envelopeEndpoint(dsn: Dsn): string {
  return `${dsn.protocol}://${dsn.host}${dsn.pathPrefix}/api/${dsn.projectId}/envelope/`;
}

/**
 * Who the log store sees (OpenSearch Security proxy authentication): the caller's login as
 * `x-proxy-user` and, as `x-proxy-roles`, the value of the account attribute named by
 * LOGSTORE_USER_ROLE_ATTRIBUTE, so that ops can map it to roles and document-level security.
 */
import type { Principal } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { effectiveRole } from '../accounts/model.js';
import type { UserRow } from '../accounts/model.js';

/** The attribute names LOGSTORE_USER_ROLE_ATTRIBUTE may hold, and how each is read. */
export const ROLE_ATTRIBUTES: Record<string, (user: UserRow, now: number) => string | null> = {
  // The effective role: admin during super-access; LDAP and OIDC role mappings already land here.
  role: (user, now) => effectiveRole(user, now),
  login: (user) => user.login,
  email: (user) => user.email,
  source: (user) => user.source,
  sourceName: (user) => user.sourceName,
};

/**
 * Header values are bytes (Latin-1 at best, and the store reads them as ASCII), and `x-proxy-roles` is
 * comma-separated: UTF-8 percent-encoding of anything outside printable ASCII, of `%` and of `,` keeps
 * a login such as `Иван` or an attribute value with a comma one unambiguous header value.
 */
export function headerSafe(value: string): string {
  return value.replace(/[^\x20-\x24\x26-\x2b\x2d-\x7e]/gu, (ch) => {
    try {
      return encodeURIComponent(ch);
    } catch {
      return '%EF%BF%BD'; // a lone surrogate: U+FFFD
    }
  });
}

export interface ProxyIdentity {
  proxyUser: string;
  proxyRoles: string[];
}

/** The proxy-authentication identity of the caller; 503 when the variable names no known attribute. */
export function proxyIdentity(principal: Principal, attribute: string, now: number): ProxyIdentity {
  const read = Object.hasOwn(ROLE_ATTRIBUTES, attribute) ? ROLE_ATTRIBUTES[attribute] : undefined;
  // Fail closed: sending some other value as the role could widen what document-level security shows.
  if (!read) {
    throw new ProblemError('SERVICE_UNAVAILABLE', {
      detail: `LOGSTORE_USER_ROLE_ATTRIBUTE is "${attribute}"; supported: ${Object.keys(ROLE_ATTRIBUTES).join(', ')}`,
      extensions: { cause: 'LOGSTORE_MISCONFIGURED' },
    });
  }
  const value = read(principal.user, now);
  return {
    proxyUser: headerSafe(principal.user.login),
    proxyRoles: value === null || value === '' ? [] : [headerSafe(value)],
  };
}

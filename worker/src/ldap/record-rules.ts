/**
 * The rules of an LDAP server record (docs/ldap.md, "Record"): what an administrator is warned of, and the
 * bind DN and password that go together. The HTTP side: admin-routes.ts.
 */
import { ProblemError } from '../http/problem.js';
import type { LdapServerRow } from './records.js';

/** A record's name (the value of X-LDAP-Name). */
export const SERVER_NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
export const SERVER_NAME_MESSAGE = 'letters, digits, ".", "-" and "_" (the value of X-LDAP-Name)';

/** A warning about a record, answered with it. */
export interface LdapWarning {
  code: 'UNENCRYPTED_BIND';
  urls: string[];
  message: string;
}

/**
 * The record's warnings: plain ldap:// URLs without StartTLS carry every bind password in clear text
 * (docs/ldap.md, "Record"). Allowed (a directory on the same host, a lab), but said at every answer.
 */
export function warningsOf(r: Pick<LdapServerRow, 'urls' | 'startTls'>): LdapWarning[] {
  if (r.startTls) return [];
  const plain = r.urls.filter((u) => /^ldap:\/\//i.test(u));
  if (plain.length === 0) return [];
  const message =
    `bind passwords (the service account's and those of users signing in) travel unencrypted to ` +
    `${plain.join(', ')}: use ldaps:// or turn on startTls`;
  return [{ code: 'UNENCRYPTED_BIND', urls: plain, message }];
}

/** A bind DN without a password would bind anonymously-or-fail; refuse the pair half set. */
export function assertBindPair(bindDn: string | null, bindPasswordSet: boolean): void {
  if ((bindDn === null) !== !bindPasswordSet) {
    throw new ProblemError('VALIDATION', {
      detail: 'bindDn and bindPassword go together: set both (a service account) or neither (anonymous search)',
      extensions: {
        errors: [
          {
            location: 'json',
            path: bindDn === null ? 'bindDn' : 'bindPassword',
            message: 'set together with its pair',
          },
        ],
      },
    });
  }
}

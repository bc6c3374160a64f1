/**
 * The words of /v3/settings/ldap-servers in the API description (admin-routes.ts): their summaries and
 * descriptions. The document is generated at build time on the Node host (architecture.md §10), so the edge script
 * needs none of them: wrangler.toml's [alias] replaces this module there with worker/edge-aliases/ldap-api-words.js
 * (empty strings), as for the webhooks' words (docs/performance.md, "The edge bundle").
 */
import { SEALING_UNAVAILABLE } from '../store/secret-box.js';
import { DEFAULT_GROUP_FILTER, DEFAULT_USER_FILTER } from './records.js';

const PATCH_DESCRIPTION =
  'Omitted fields keep their values. A change that would send the stored service password somewhere new (a URL ' +
  'not in ' +
  'the stored list, StartTLS turned off for ldap:// URLs, another caCert) needs `bindPassword` in the same request: ' +
  'otherwise 422 naming bindPassword, and nothing changes.';

export const W: Record<string, string> = {
  d1: 'tried in order until one connects',
  d2: 'upgrade ldap:// connections with StartTLS before any bind',
  d3: "PEM CA certificate(s) verifying the directory's TLS; null: the bridge's system roots",
  d4: "the service account that finds users' entries; null: anonymous search",
  d5: 'stored encrypted; never returned',
  d6:
    'an attribute holding admin, auditor or user, or group DNs (e.g. memberOf) matched with roleAdminGroup ' +
    'and roleAuditorGroup; null: new accounts are users',
  d7:
    'how each login reads the user\'s groups (docs/ldap.md, "Groups"): none; memberOf, the group DNs of the ' +
    "user's `groupAttr` (Active Directory, OpenLDAP's memberof overlay); search, the entries under " +
    '`groupBaseDn` matching `groupFilter`, {dn} standing for the escaped user DN',
  d8: 'the attribute listing the group DNs (memberOf mode)',
  d9: 'where groups are searched (search mode); null: baseDn',
  d10: "the group entry's attribute naming it (search mode; memberOf: the DN's first RDN value)",
  d11:
    "UNENCRYPTED_BIND: ldap:// URLs without StartTLS, so the bind passwords (the service account's and " +
    'those of users signing in) travel unencrypted to them',
  d12: 'what an administrator should know about the record (docs/ldap.md, "Record"); empty when nothing',
  d13: 'Service passwords are never returned.',
  s14: 'Add an LDAP server record',
  s15: 'Read an LDAP server record',
  d16: 'Service passwords are never returned.',
  s17: 'Change an LDAP server record',
  s18: 'Remove an LDAP server record',
  d19: 'Accounts of this server stay, but cannot log in until a record of the same name exists again.',
  userFilter:
    `search filter with {login}; null: ${DEFAULT_USER_FILTER}, or ` +
    `(|(sAMAccountName={login})(userPrincipalName={login})) on Active Directory`,
  groupFilter: `the group search filter (search mode); null: ${DEFAULT_GROUP_FILTER}`,
  create:
    'The name is the value of X-LDAP-Name; it is public (a sign-in page offers it, and logins name an unknown ' +
    'one), so it must reveal nothing secret. 409 when the name is taken. ' +
    SEALING_UNAVAILABLE,
  patch: `${PATCH_DESCRIPTION} ${SEALING_UNAVAILABLE}`,
};

import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * LDAP server records, addressed by `name` (the value of X-LDAP-Name, or `ldapServer` of
 * /v3/login). The service account's password is stored encrypted (AES-GCM, secret-box) with a key
 * that is not in the database. The bridge reaches the directory; the worker only holds the record.
 */
export const ldapServers = sqliteTable('ldap_servers', {
  name: text('name').primaryKey(),
  /** JSON array of ldap:// or ldaps:// URLs, tried in order. */
  urls: text('urls', { mode: 'json' }).$type<string[]>().notNull(),
  startTls: integer('start_tls', { mode: 'boolean' }).notNull().default(false),
  /** PEM CA certificate(s) verifying the directory's TLS; null: the bridge's system roots. */
  caCert: text('ca_cert'),
  bindDn: text('bind_dn'),
  bindPasswordEnc: text('bind_password_enc'),
  baseDn: text('base_dn').notNull(),
  /** Search filter with {login}, e.g. (uid={login}); null: (uid={login}), or the AD logins in AD. */
  userFilter: text('user_filter'),
  attrDisplayName: text('attr_display_name').default('displayName'),
  attrEmail: text('attr_email').default('mail'),
  /** An attribute holding admin/auditor/user, or group DNs (memberOf) matched with the groups below. */
  attrRole: text('attr_role'),
  roleAdminGroup: text('role_admin_group'),
  roleAuditorGroup: text('role_auditor_group'),
  /**
   * How logins read the user's groups (docs/ldap.md, "Groups"): none; memberOf, the values of
   * `groupAttr` (group DNs; Active Directory, OpenLDAP's memberof overlay); or search, the entries under
   * `groupBaseDn` matching `groupFilter` with the user's DN (escaped) in place of {dn}.
   */
  groupMode: text('group_mode', { enum: ['none', 'memberOf', 'search'] })
    .notNull()
    .default('none'),
  groupAttr: text('group_attr').notNull().default('memberOf'),
  groupBaseDn: text('group_base_dn'),
  groupFilter: text('group_filter'),
  /** The group entry's attribute that names it (its first value; memberOf: the DN's first RDN value). */
  groupNameAttr: text('group_name_attr').notNull().default('cn'),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/** LDAP server records: reading one, and the bridge's connection settings built from it. */
import { eq } from 'drizzle-orm';
import type { LdapConnection } from '../../../schema/bridge/index.js';
import { ldapServers } from '../../../schema/index.js';
import type { ConfigSnapshot } from '../config/index.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { openSecret } from '../store/secret-box.js';
import { resealLdapPassword } from '../store/stored-secrets.js';

export type LdapServerRow = typeof ldapServers.$inferSelect;

/** The default search filter: the login attribute of OpenLDAP-style directories. */
export const DEFAULT_USER_FILTER = '(uid={login})';

/** The record named `name`, if any. */
export async function findLdapServer(db: Db, name: string): Promise<LdapServerRow | undefined> {
  const rows = await db.select().from(ldapServers).where(eq(ldapServers.name, name)).limit(1);
  return rows[0];
}

/** The record named `name`, or 404. */
export async function ldapServerByName(db: Db, name: string): Promise<LdapServerRow> {
  const row = await findLdapServer(db, name);
  if (!row) throw new ProblemError('NOT_FOUND', { detail: `no LDAP server named ${name}` });
  return row;
}

/**
 * The connection settings the bridge needs, with the service password decrypted for this call
 * only. LDAP_SERVER_CONNECT_TIMEOUT and LDAP_SERVER_SEARCHING_TIMEOUT are read at request time.
 */
export async function connectionOf(
  { db, config }: { db: Db; config: ConfigSnapshot },
  row: LdapServerRow,
): Promise<LdapConnection> {
  return {
    urls: row.urls,
    startTls: row.startTls,
    caCert: row.caCert,
    bindDn: row.bindDn,
    // Sealed with a previous key (a rotation): re-sealed with the current one as it is read.
    bindPassword: row.bindPasswordEnc
      ? await openSecret(config, row.bindPasswordEnc, resealLdapPassword(db, row.name, row.bindPasswordEnc))
      : null,
    baseDn: row.baseDn,
    // null: the bridge picks (uid={login}), or the sAMAccountName/userPrincipalName pair on AD.
    userFilter: row.userFilter,
    attributes: { displayName: row.attrDisplayName, email: row.attrEmail, role: row.attrRole },
    roleGroups: { admin: row.roleAdminGroup, auditor: row.roleAuditorGroup },
    directorySignature: config.get('DIRECTORY_SIGNATURE'),
    connectTimeoutMs: config.get('LDAP_SERVER_CONNECT_TIMEOUT') * 1000,
    searchTimeoutMs: config.get('LDAP_SERVER_SEARCHING_TIMEOUT') * 1000,
  };
}

/**
 * How long the worker waits for the bridge: the bridge's own worst case (each URL's connect, the
 * user's fresh connection and its StartTLS at the connect timeout; service bind, root DSE, search
 * and user bind at the search timeout; unbinds) plus a margin, so that the bridge reports the
 * directory's timeout (504 DIRECTORY_TIMEOUT) before the worker gives up on the bridge.
 */
export function bridgeTimeoutMs(conn: LdapConnection): number {
  return (conn.urls.length + 2) * conn.connectTimeoutMs + 5 * conn.searchTimeoutMs + 2000;
}

/** LDAP server records: reading and writing them, and the bridge's connection settings built from one. */
import type { LdapConnection } from '../../../schema/bridge/index.js';
import { ldapServers } from '../../../schema/index.js';
import type { ConfigSnapshot } from '../config/index.js';
import { sealedRecords } from '../settings/sealed-records.js';
import type { Db } from '../store/index.js';
import { openSecret } from '../store/secret-box.js';
import { resealLdapPassword } from '../store/stored-secrets.js';

export type LdapServerRow = typeof ldapServers.$inferSelect;

/** The default search filter: the login attribute of OpenLDAP-style directories. */
export const DEFAULT_USER_FILTER = '(uid={login})';
/** The default group search filter: groups naming the user's DN as a member (groupOfNames, AD groups). */
export const DEFAULT_GROUP_FILTER = '(member={dn})';

/**
 * Why a change would send the stored service password somewhere it did not go before: a server
 * not in the stored list, in the clear (StartTLS turned off for ldap:// URLs), or to whoever the
 * new CA vouches for. Such a change must carry the password again: otherwise whoever may edit the
 * record could point it at their own server and read a password that is "never returned".
 */
function passwordDestinationChanges(before: LdapServerRow, change: Partial<LdapServerRow>): string[] {
  const urls = change.urls ?? before.urls;
  const reasons: string[] = [];
  if (change.urls?.some((u) => !before.urls.includes(u))) reasons.push('urls names a new server');
  if (change.startTls === false && before.startTls && urls.some((u) => /^ldap:/i.test(u)))
    reasons.push('startTls turned off');
  if (change.caCert !== undefined && change.caCert !== before.caCert) reasons.push('caCert changed');
  return reasons;
}

/** The LDAP server records (settings/sealed-records.ts): the service password is the sealed secret. */
export const ldapServerRecords = sealedRecords<LdapServerRow>({
  table: ldapServers,
  noun: 'LDAP server',
  article: 'an',
  events: { created: 'ldap_server.created', updated: 'ldap_server.updated', deleted: 'ldap_server.deleted' },
  createdData: (row) => ({ name: row.name, urls: row.urls, baseDn: row.baseDn }),
  secret: {
    path: 'bindPassword',
    what: 'service password',
    moves: passwordDestinationChanges,
    // Clearing the DN clears the password with it: nothing stored would follow then.
    stored: (before, change) =>
      (change.bindDn !== undefined ? change.bindDn : before.bindDn) !== null && before.bindPasswordEnc !== null,
  },
});

/** The record named `name`, if any. */
export const findLdapServer = ldapServerRecords.find;

/** The record named `name`, or 404. */
export const ldapServerByName = ldapServerRecords.byName;

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
    groups:
      row.groupMode === 'none'
        ? { mode: 'none' }
        : {
            mode: row.groupMode,
            attr: row.groupAttr,
            baseDn: row.groupBaseDn ?? row.baseDn,
            filter: row.groupFilter ?? DEFAULT_GROUP_FILTER,
            nameAttr: row.groupNameAttr,
          },
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

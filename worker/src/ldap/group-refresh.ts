/**
 * The periodic refresh of LDAP groups (docs/ldap.md, "Groups"): between its logins, an LDAP account's
 * groups are read again every LDAP_GROUPS_REFRESH_MIN minutes through the bridge (the service
 * account finds the entry; no password). A refresh only narrows: the groups the directory no longer
 * lists go, with the role GROUP_ROLES gave through them; a group added in the directory waits
 * for the account's next login. An entry the directory no longer finds loses its LDAP groups. A
 * directory that cannot be reached changes nothing (its accounts cannot log in meanwhile either).
 */
import { and, eq, lt, ne, sql } from 'drizzle-orm';
import { liveAccounts } from '../accounts/live.js';
import { LdapGroupsResponseSchema } from '../../../schema/bridge/index.js';
import { groupMembers, groups, ldapServers, users } from '../../../schema/index.js';
import { groupNameKey, narrowLdapGroupsStatements } from '../accounts/group-members.js';
import { demotesLastAdmin } from '../accounts/last-admin.js';
import type { Role } from '../accounts/model.js';
import { runAccountBatch } from '../accounts/writes.js';
import { auditInsert } from '../audit/events.js';
import type { Scope } from '../http/scope.js';
import type { Job } from '../jobs/job.js';
import { roleOfGroups } from '../users/external.js';
import { bridgeTimeoutMs, connectionOf } from './records.js';

/** Accounts asked of the bridge in one call (its limit). */
const BATCH = 100;
const RANK: Record<Role, number> = { user: 0, auditor: 1, admin: 2 };

/** Refreshes the accounts of each record that reads groups; counts for the job's log line. */
export async function refreshLdapGroups(scope: Scope): Promise<Record<string, number>> {
  const minutes = scope.config.get('LDAP_GROUPS_REFRESH_MIN');
  const counts = { accounts: 0, narrowed: 0, failedServers: 0 };
  if (minutes === 0 || !scope.bridge) return counts;
  const { db } = scope;
  const now = scope.now();
  const records = await db
    .select()
    .from(ldapServers)
    .where(and(eq(ldapServers.enabled, true), ne(ldapServers.groupMode, 'none')));
  for (const record of records) {
    // The accounts of this record whose LDAP groups were read longest ago, past the interval.
    const due = await db
      .select({ id: users.id, login: users.login, role: users.role })
      .from(groupMembers)
      .innerJoin(users, eq(users.id, groupMembers.userId))
      .where(
        and(
          eq(groupMembers.source, 'ldap'),
          lt(groupMembers.readAt, now - minutes * 60_000),
          eq(users.source, 'ldap'),
          eq(users.sourceName, record.name),
          liveAccounts,
        ),
      )
      .groupBy(users.id)
      .orderBy(sql`min(${groupMembers.readAt})`)
      .limit(BATCH);
    if (due.length === 0) continue;
    let answer: ReturnType<typeof LdapGroupsResponseSchema.parse>;
    try {
      const connection = await connectionOf(scope, record);
      answer = await scope.bridge.call(
        '/v1/ldap/groups',
        { connection, logins: due.map((d) => d.login) },
        LdapGroupsResponseSchema,
        bridgeTimeoutMs(connection) + due.length * connection.searchTimeoutMs * 2,
      );
    } catch (err) {
      counts.failedServers++;
      scope.logger.warning('LDAP groups refresh: the directory was not read; groups stay as last read', {
        server: record.name,
        error: err instanceof Error ? err.message : String(err),
      });
      continue;
    }
    const byLogin = new Map(answer.results.map((r) => [r.login, r]));
    const mapping = scope.config.get('GROUP_ROLES');
    for (const account of due) {
      const result = byLogin.get(account.login);
      if (!result) continue;
      counts.accounts++;
      const held = await db
        .select({ id: groups.id, name: groups.name })
        .from(groupMembers)
        .innerJoin(groups, eq(groups.id, groupMembers.groupId))
        .where(and(eq(groupMembers.userId, account.id), eq(groupMembers.source, 'ldap')));
      const listed = new Set(result.found ? result.groups.map(groupNameKey) : []);
      const kept = held.filter((g) => listed.has(groupNameKey(g.name)));
      const removed = held.filter((g) => !listed.has(groupNameKey(g.name)));
      // The role the removed groups gave goes with them; a role from elsewhere (set by hand) stays.
      const before = roleOfGroups(
        mapping,
        held.map((g) => g.name),
      );
      const after =
        roleOfGroups(
          mapping,
          kept.map((g) => g.name),
        ) ?? 'user';
      let lower =
        removed.length > 0 && before && account.role === before && RANK[after] < RANK[account.role]
          ? (after as 'auditor' | 'user')
          : undefined;
      // The last active administrator keeps admin (docs/groups.md): a warning instead of the demotion.
      const spared = lower !== undefined && (await demotesLastAdmin(db, account.id, lower)) ? lower : undefined;
      if (spared) lower = undefined;
      const statements = narrowLdapGroupsStatements(
        db,
        account.id,
        kept.map((g) => g.id),
        now,
        lower,
      );
      if (removed.length > 0) {
        counts.narrowed++;
        statements.push(
          auditInsert(db, now, {
            stream: 'crud_admin',
            type: 'user.refreshed',
            subject: account,
            data: {
              source: 'ldap',
              sourceName: record.name,
              by: 'job',
              groupsRemoved: removed.map((g) => g.name),
              ...(lower ? { role: lower } : {}),
            },
          }),
        );
      }
      if (spared) {
        scope.logger.warning('LDAP groups refresh: the last active administrator keeps admin', {
          server: record.name,
          login: account.login,
        });
        statements.push(
          auditInsert(db, now, {
            stream: 'crud_admin',
            type: 'user.last_admin_kept',
            subject: account,
            data: { source: 'ldap', sourceName: record.name, by: 'job', role: spared },
          }),
        );
      }
      await runAccountBatch(db, statements as [(typeof statements)[number], ...typeof statements]);
    }
  }
  return counts;
}

/** The job: every few minutes, under its lease; each account at most once per interval. */
export const refreshLdapGroupsJob: Job = {
  name: 'refresh-ldap-groups',
  leaseMs: 10 * 60_000,
  run: refreshLdapGroups,
};

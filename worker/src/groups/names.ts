/** Group names and what GROUP_ROLES makes of them (docs/groups.md). */
import { groupNameKey } from '../accounts/group-members.js';

/**
 * A group name (docs/groups.md): 1 to 128 characters, no control characters, no comma (names travel
 * comma-separated in Remote-Groups and GROUP_ROLES), no "=" (GROUP_ROLES), no blanks at
 * either end. A directory's or a provider's group whose name breaks the rule is not read.
 */
export const GROUP_NAME_RULE = /^(?=\S)[^\p{Cc},=]{1,128}(?<=\S)$/u;

/**
 * The roles GROUP_ROLES (`mapping`, items `group=role`) gives the members of the group `name` at
 * their LDAP and OIDC logins (docs/groups.md, "Roles from groups"), highest first.
 */
export function rolesOfGroup(mapping: readonly string[], name: string): Array<'admin' | 'auditor'> {
  const key = groupNameKey(name);
  const roles = new Set<string>();
  for (const item of mapping) {
    const at = item.lastIndexOf('=');
    if (groupNameKey(item.slice(0, at).trim()) === key) roles.add(item.slice(at + 1).trim());
  }
  return (['admin', 'auditor'] as const).filter((r) => roles.has(r));
}

/**
 * A group name (docs/groups.md): 1 to 128 characters, no control characters, no comma (names travel
 * comma-separated in Remote-Groups and GROUP_ROLES), no "=" (GROUP_ROLES), no blanks at
 * either end. A directory's or a provider's group whose name breaks the rule is not read.
 */
export const GROUP_NAME_RULE = /^(?=\S)[^\p{Cc},=]{1,128}(?<=\S)$/u;

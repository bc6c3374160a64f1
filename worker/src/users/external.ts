/**
 * Accounts of external identities (an LDAP server record, an OIDC provider): the account linked to
 * the identity, else a new account (source ldap or oidc) for it. A login that collides with another
 * account is never logged in silently: it becomes a pending merge that /v3/login/union completes
 * (a local account), or is refused (another external account): users/identity-merge.ts.
 */
import { and, eq } from 'drizzle-orm';
import { runAccountBatch, type AccountBatchItem } from '../accounts/writes.js';
import { createAccountStatements, refreshProfileStatement } from '../accounts/account-writes.js';
import { auditInsert } from '../audit/events.js';
import type { RequestScope } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { loginSkeleton } from './confusables.js';
import { loginKey, loginViolation, normaliseLogin } from '../accounts/login-name.js';
import { lookAlikeOf, reservedUntil } from './login-skeletons.js';
import {
  assertMayLogIn as assertAccountMayLogIn,
  loggedIn,
  loginSuccessStatements,
  sourceData,
} from '../accounts/login-rule.js';
import type { Role, UserRow } from '../accounts/model.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import { userIdentities, users } from '../../../schema/index.js';
import { demotesLastAdmin } from '../accounts/last-admin.js';
import { liveAccounts } from '../accounts/live.js';
import { accountGroups, externalGroupsStatements, groupNameKey } from '../accounts/group-members.js';
import { GROUP_NAME_RULE } from '../groups/names.js';

export interface ExternalIdentity {
  source: 'ldap' | 'oidc';
  /** The LDAP server record or the OIDC provider. */
  sourceName: string;
  /** The OIDC issuer (`iss`) that vouched for the subject; '' for LDAP. Part of the identity's key. */
  issuer: string;
  /** Stable at the source: entryUUID / objectGUID / DN, or the OIDC `sub`. */
  externalId: string;
  login: string;
  displayName: string;
  email: string | null;
  /** The role the source maps, or null when it maps none (new accounts are then users). */
  role: Role | null;
  /** Whether later logins refresh the role too (the source maps roles). */
  refreshRole: boolean;
  /**
   * The names of the groups the source lists for the identity at this login (docs/groups.md);
   * undefined when the source reads no groups (its memberships are then left as they are).
   */
  groups?: readonly string[];
}

const RANK: Record<Role, number> = { user: 0, auditor: 1, admin: 2 };
const higher = (a: Role | null, b: Role | null): Role | null =>
  a === null ? b : b === null ? a : RANK[a] >= RANK[b] ? a : b;

/**
 * The role GROUP_ROLES gives `names` (the highest of the groups listed), or null when none of
 * them is listed; undefined when groups decide no role (the setting is empty, or the source reads
 * no groups).
 */
export function roleOfGroups(
  mapping: readonly string[],
  names: readonly string[] | undefined,
): Role | null | undefined {
  if (names === undefined || mapping.length === 0) return undefined;
  const keys = new Set(names.map(groupNameKey));
  let role: Role | null = null;
  for (const item of mapping) {
    const at = item.lastIndexOf('=');
    const mapped = item.slice(at + 1).trim() as Role;
    if (keys.has(groupNameKey(item.slice(0, at).trim()))) role = higher(role, mapped);
  }
  return role;
}

/**
 * The role of an external account at this login (docs/groups.md, "Roles from groups"): when groups
 * decide (GROUP_ROLES set and the source reads groups), the higher of the source's own mapping
 * (`refreshRole`) and the groups', else user, whatever was set by hand meanwhile; otherwise the
 * source's mapping when it refreshes roles, else `current`.
 */
function roleAtLogin(scope: RequestScope, identity: ExternalIdentity, current: Role | null): Role {
  const fromGroups = roleOfGroups(scope.config.get('GROUP_ROLES'), identity.groups);
  const fromSource = identity.refreshRole || current === null ? identity.role : null;
  if (fromGroups !== undefined) return higher(fromSource, fromGroups) ?? 'user';
  return fromSource ?? current ?? 'user';
}

/** Writes the groups of this login (when the source reads groups) and answers the account with them. */
async function withGroupsOfLogin(scope: RequestScope, user: UserRow, identity: ExternalIdentity): Promise<UserRow> {
  if (identity.groups === undefined) return user;
  const names = identity.groups.filter((n) => GROUP_NAME_RULE.test(n));
  if (names.length < identity.groups.length)
    scope.logger.warning('group names not allowed here were skipped', {
      source: identity.source,
      sourceName: identity.sourceName,
      skipped: identity.groups.length - names.length,
    });
  const now = scope.now();
  await runAccountBatch(
    scope.db,
    externalGroupsStatements(scope.db, user.id, identity.source, identity.sourceName, names, now) as [
      AccountBatchItem,
      ...AccountBatchItem[],
    ],
  );
  return { ...user, groups: await accountGroups(scope.db, user.id) };
}

export type Outcome = { user: UserRow } | { collision: { login: string; externalId: string } };

/**
 * Finds, refreshes or creates the account of `identity`. A new account's login must pass the login
 * rule, not be reserved and not look like another live account's login (another key, the same
 * confusable skeleton): else 403 LOGIN_NOT_ALLOWED (audited with `also`, e.g. forgetting the failed
 * attempts), and no account is created. The same login (the same key) is a collision: a merge.
 */
export async function accountOfIdentity(
  scope: RequestScope,
  identity: ExternalIdentity,
  o: { also?: AccountBatchItem[] } = {},
): Promise<Outcome> {
  const db = scope.db;
  const now = scope.now();
  const { source, sourceName, issuer, externalId, displayName, email } = identity;
  const found = await linkedAccount(scope, identity);
  if (found) {
    // External accounts follow their source's profile; a merged local account keeps its own.
    let role = found.source === source ? roleAtLogin(scope, identity, found.role) : found.role;
    const kept = await keptLastAdmin(scope, found, identity, role);
    if (kept.length > 0) role = found.role;
    if (
      found.source === source &&
      (found.displayName !== displayName || found.email !== email || found.role !== role)
    ) {
      await runAccountBatch(db, [
        refreshProfileStatement(db, found.id, { displayName, email, role }, now),
        auditInsert(db, now, {
          stream: 'crud_admin',
          type: 'user.refreshed',
          subject: found,
          request: scope.request,
          data: { source, sourceName, ...(role !== found.role ? { role } : {}) },
        }),
        ...kept,
      ]);
      return { user: await withGroupsOfLogin(scope, { ...found, displayName, email, role }, identity) };
    }
    if (kept.length > 0) await runAccountBatch(db, kept as [AccountBatchItem]);
    return { user: await withGroupsOfLogin(scope, found, identity) };
  }

  const login = await assertLoginAllowed(scope, identity, o.also ?? []);
  const row: UserRow = {
    id: crypto.randomUUID(),
    login,
    loginKey: loginKey(login),
    loginSkeleton: loginSkeleton(login),
    displayName,
    email,
    role: roleAtLogin(scope, identity, null),
    source,
    kind: 'person',
    sourceName,
    externalId,
    status: 'active',
    blockedReason: null,
    passwordHash: null,
    passwordChangedAt: null,
    mustChangePassword: false,
    lastLoginAt: null,
    lastActivityAt: null,
    sessionLimit: null,
    superAccessUntil: null,
    groups: [],
    language: null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  try {
    await runAccountBatch(db, [
      ...createAccountStatements(db, row),
      db
        .insert(userIdentities)
        .values({ id: crypto.randomUUID(), userId: row.id, source, sourceName, issuer, externalId, createdAt: now }),
      auditInsert(db, now, {
        stream: 'crud_admin',
        type: 'user.created',
        subject: row,
        request: scope.request,
        data: { source, sourceName },
      }),
    ]);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A first login of this very identity created its account meanwhile (two tabs, a client's
    // retry): this one logs in to it too.
    const created = await linkedAccount(scope, identity);
    if (created) return { user: await withGroupsOfLogin(scope, created, identity) };
    // A look-alike created meanwhile (the skeleton's index): refused as it would have been before.
    if ((await lookAlikeOf(db, login)) !== undefined) {
      return refuseLogin(scope, identity, login, LOOK_ALIKE, 'look-alike', o.also ?? []);
    }
    // The login belongs to another account (local, or another source's): a merge, not a login.
    return { collision: { login, externalId } };
  }
  return { user: await withGroupsOfLogin(scope, row, identity) };
}

/**
 * When the role of this login would take admin from the last active administrator (docs/groups.md,
 * "Roles from groups"): the warning event of keeping it (the account stays admin), else nothing.
 */
async function keptLastAdmin(
  scope: RequestScope,
  found: UserRow,
  identity: ExternalIdentity,
  role: Role,
): Promise<AccountBatchItem[]> {
  if (found.role !== 'admin' || role === 'admin' || !(await demotesLastAdmin(scope.db, found.id, role))) return [];
  const { source, sourceName } = identity;
  scope.logger.warning('the last active administrator keeps admin, which its groups or source no longer give', {
    login: found.login,
    source,
    sourceName,
    role,
  });
  return [
    auditInsert(scope.db, scope.now(), {
      stream: 'crud_admin',
      type: 'user.last_admin_kept',
      subject: found,
      request: scope.request,
      data: { source, sourceName, role },
    }),
  ];
}

/** The live account linked to `identity`, if any. */
async function linkedAccount(scope: RequestScope, identity: ExternalIdentity): Promise<UserRow | undefined> {
  const { source, sourceName, issuer, externalId } = identity;
  const linked = await scope.db
    .select({ user: users })
    .from(userIdentities)
    .innerJoin(users, eq(users.id, userIdentities.userId))
    .where(
      and(
        eq(userIdentities.source, source),
        eq(userIdentities.sourceName, sourceName),
        eq(userIdentities.issuer, issuer),
        eq(userIdentities.externalId, externalId),
        liveAccounts,
      ),
    )
    .limit(1);
  return linked[0]?.user;
}

const LOOK_ALIKE = 'the login looks like the login of another account (Unicode TR #39 confusables)';

/**
 * The login rule for a new external account: the source's login, in NFC, must pass the rule of
 * every login (no new lines, invisible characters, markup or compatibility characters), not be (or
 * look like) a login reserved after a deletion (USER_LOGIN_REUSE_DAY), and not look like another
 * live account's login. It is refused, never altered. Returns the login to store.
 */
async function assertLoginAllowed(
  scope: RequestScope,
  identity: ExternalIdentity,
  also: AccountBatchItem[],
): Promise<string> {
  const db = scope.db;
  const login = normaliseLogin(identity.login);
  const why = loginViolation(login);
  if (why) return refuseLogin(scope, identity, login, why, 'characters', also);
  const reserved = await reservedUntil(db, login, scope.now());
  if (reserved !== undefined) {
    const until = new Date(reserved).toISOString();
    const detail = `the login is, or looks like, the login of a deleted account, reserved until ${until}`;
    return refuseLogin(scope, identity, login, detail, 'reserved', also);
  }
  // The other account's login is not named: the person logging in may not know it.
  if ((await lookAlikeOf(db, login)) !== undefined) {
    return refuseLogin(scope, identity, login, LOOK_ALIKE, 'look-alike', also);
  }
  return login;
}

/** Audits and logs the refusal of an external login's login, then throws 403 LOGIN_NOT_ALLOWED. */
async function refuseLogin(
  scope: RequestScope,
  identity: ExternalIdentity,
  login: string,
  why: string,
  reason: 'characters' | 'reserved' | 'look-alike',
  also: AccountBatchItem[],
): Promise<never> {
  const db = scope.db;
  const now = scope.now();
  const source = sourceData(identity);
  const data = { reason: `login-not-allowed:${reason}`, ...source };
  const event = { stream: 'user_activity', type: 'login.refused', subjectLogin: login, data } as const;
  await runAccountBatch(db, [auditInsert(db, now, { ...event, request: scope.request }), ...also]);
  scope.logger.warning('external login refused: its login is not allowed', { ...source, reason, detail: why });
  const from = `${identity.source === 'ldap' ? 'LDAP server' : 'identity provider'} ${identity.sourceName}`;
  const detail = `the login from ${from} cannot be an account here: ${why}`;
  throw new ProblemError('LOGIN_NOT_ALLOWED', { detail, extensions: { reason } });
}

/** Applies the account rule (accounts/login-rule.ts) to an external login, as to a password login. */
export async function assertMayLogIn(
  scope: RequestScope,
  user: UserRow,
  source: Pick<ExternalIdentity, 'source' | 'sourceName'>,
  also: AccountBatchItem[] = [],
): Promise<void> {
  await assertAccountMayLogIn(scope, user, source, also);
}

/**
 * Records the successful login in one batch with `also` (e.g. forgetting the failed attempts);
 * `data` adds to the audit event. Returns the account as it now is.
 */
export async function recordLogin(
  scope: RequestScope,
  user: UserRow,
  source: Pick<ExternalIdentity, 'source' | 'sourceName'>,
  o: { also?: AccountBatchItem[]; data?: Record<string, unknown> } = {},
): Promise<UserRow> {
  const now = scope.now();
  const db = scope.db;
  const data = {
    source: source.source,
    [source.source === 'oidc' ? 'provider' : 'server']: source.sourceName,
    ...o.data,
  };
  await runAccountBatch(db, [
    ...loginSuccessStatements(db, now, user, { request: scope.request, data }),
    ...(o.also ?? []),
  ]);
  return loggedIn(user, now);
}

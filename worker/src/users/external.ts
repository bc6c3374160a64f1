/**
 * Accounts of external identities (an LDAP server record, an OIDC provider): the account linked to
 * the identity, else a new account (source ldap or oidc) for it. A login that collides with another
 * account is never logged in silently: it becomes a pending merge that /v3/login/union completes
 * (a local account), or is refused (another external account): users/identity-merge.ts.
 */
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { auditInsert } from '../audit/events.js';
import type { RequestScope } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { loginKey, loginViolation, normaliseLogin } from './login-name.js';
import { assertMayLogIn as assertAccountMayLogIn, sourceData } from './login-rule.js';
import type { Role, UserRow } from './model.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import { loginReservations, userIdentities, users } from '../../../schema/index.js';

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
}

export type Outcome = { user: UserRow } | { collision: { login: string; externalId: string } };

/**
 * Finds, refreshes or creates the account of `identity`. A new account's login must pass the login
 * rule and not be reserved: else 403 LOGIN_NOT_ALLOWED (audited with `also`, e.g. forgetting the
 * failed attempts), and no account is created.
 */
export async function accountOfIdentity(
  scope: RequestScope,
  identity: ExternalIdentity,
  o: { also?: BatchItem<'sqlite'>[] } = {},
): Promise<Outcome> {
  const db = scope.db;
  const now = scope.now();
  const { source, sourceName, issuer, externalId, displayName, email } = identity;
  const linked = await db
    .select({ user: users })
    .from(userIdentities)
    .innerJoin(users, eq(users.id, userIdentities.userId))
    .where(
      and(
        eq(userIdentities.source, source),
        eq(userIdentities.sourceName, sourceName),
        eq(userIdentities.issuer, issuer),
        eq(userIdentities.externalId, externalId),
        isNull(users.deletedAt),
      ),
    )
    .limit(1);
  const found = linked[0]?.user;
  if (found) {
    // External accounts follow their source's profile; a merged local account keeps its own.
    const role = identity.refreshRole && identity.role ? identity.role : found.role;
    if (
      found.source === source &&
      (found.displayName !== displayName || found.email !== email || found.role !== role)
    ) {
      await db.batch([
        db.update(users).set({ displayName, email, role, updatedAt: now }).where(eq(users.id, found.id)),
        auditInsert(db, now, {
          stream: 'crud_admin',
          type: 'user.refreshed',
          subject: found,
          request: scope.request,
          data: { source, sourceName, ...(role !== found.role ? { role } : {}) },
        }),
      ]);
      return { user: { ...found, displayName, email, role } };
    }
    return { user: found };
  }

  const login = await assertLoginAllowed(scope, identity, o.also ?? []);
  const row: UserRow = {
    id: crypto.randomUUID(),
    login,
    loginKey: loginKey(login),
    displayName,
    email,
    role: identity.role ?? 'user',
    source,
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
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  try {
    await db.batch([
      db.insert(users).values(row),
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
    // The login belongs to another account (local, or another source's): a merge, not a login.
    if (isUniqueViolation(err)) return { collision: { login, externalId } };
    throw err;
  }
  return { user: row };
}

/**
 * The login rule for a new external account: the source's login, in NFC, must pass the rule of
 * every login (no new lines, invisible characters or markup) and not be reserved after a deletion
 * (USER_LOGIN_REUSE_DAY). It is refused, never altered. Returns the login to store.
 */
async function assertLoginAllowed(
  scope: RequestScope,
  identity: ExternalIdentity,
  also: BatchItem<'sqlite'>[],
): Promise<string> {
  const db = scope.db;
  const now = scope.now();
  const login = normaliseLogin(identity.login);
  let why = loginViolation(login);
  let reason = 'characters';
  if (!why) {
    const reserved = await db
      .select({ until: loginReservations.until })
      .from(loginReservations)
      .where(and(eq(loginReservations.loginKey, loginKey(login)), gt(loginReservations.until, now)));
    if (!reserved[0]) return login;
    why = `the login belonged to a deleted account and is reserved until ${new Date(reserved[0].until).toISOString()}`;
    reason = 'reserved';
  }
  const source = sourceData(identity);
  const data = { reason: `login-not-allowed:${reason}`, ...source };
  const event = { stream: 'user_activity', type: 'login.refused', subjectLogin: login, data } as const;
  await db.batch([auditInsert(db, now, { ...event, request: scope.request }), ...also]);
  scope.logger.warning('external login refused: its login is not allowed', { ...source, reason, detail: why });
  const from = `${identity.source === 'ldap' ? 'LDAP server' : 'identity provider'} ${identity.sourceName}`;
  const detail = `the login from ${from} cannot be an account here: ${why}`;
  throw new ProblemError('LOGIN_NOT_ALLOWED', { detail, extensions: { reason } });
}

/** Applies the account rule (users/login-rule.ts) to an external login, as to a password login. */
export async function assertMayLogIn(
  scope: RequestScope,
  user: UserRow,
  source: Pick<ExternalIdentity, 'source' | 'sourceName'>,
  also: BatchItem<'sqlite'>[] = [],
): Promise<void> {
  const { db, config, logger, request } = scope;
  await assertAccountMayLogIn({ db, config, logger, request, now: scope.now() }, user, source, also);
}

/**
 * Records the successful login in one batch with `also` (e.g. forgetting the failed attempts);
 * `data` adds to the audit event. Returns the account as it now is.
 */
export async function recordLogin(
  scope: RequestScope,
  user: UserRow,
  source: Pick<ExternalIdentity, 'source' | 'sourceName'>,
  o: { also?: BatchItem<'sqlite'>[]; data?: Record<string, unknown> } = {},
): Promise<UserRow> {
  const now = scope.now();
  const db = scope.db;
  await db.batch([
    db.update(users).set({ lastLoginAt: now, lastActivityAt: now }).where(eq(users.id, user.id)),
    auditInsert(db, now, {
      stream: 'user_activity',
      type: 'login.success',
      subject: user,
      request: scope.request,
      data: { source: source.source, [source.source === 'oidc' ? 'provider' : 'server']: source.sourceName, ...o.data },
    }),
    ...(o.also ?? []),
  ]);
  return { ...user, lastLoginAt: now, lastActivityAt: now };
}

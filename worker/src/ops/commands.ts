/**
 * The operator command (`npm run ops`): the way back when the only administrator is locked out,
 * blocked or has forgotten the password. It works on the database directly (no HTTP, no login), so
 * it is for whoever can reach the database (the Node host's file, or LIBSQL_URL and its token).
 * Every use is an audit event in audit_outbox with actor_login "operator" (actor_id null), written
 * by the service's own account functions in the same transaction as the change.
 */
import { and, asc, eq } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import { loginKey } from '../auth/credentials.js';
import { lockedUntil, throttleKey } from '../accounts/throttle.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { users } from '../../../schema/index.js';
import { removeEveryFactor } from '../accounts/factors.js';
import { OPERATOR_ACTOR, unblockAccount, unlockAccount } from '../users/admin-changes.js';
import { LoginSchema } from '../accounts/login-name.js';
import { createLocalAccount } from '../users/create.js';
import type { UserRow } from '../accounts/model.js';
import { setPassword } from '../users/password.js';
import type { RequestScope, Scope } from '../http/scope.js';
import { liveAccounts } from '../accounts/live.js';

/**
 * The scope of the operator command (no request): its configuration is the effective one (environment
 * and saved settings), so the password policy is the service's.
 */
export type OperatorScope = Scope & Pick<RequestScope, 'verifier'>;

/** What the operator sees of an account: never the hash. */
export interface AccountState {
  login: string;
  role: UserRow['role'];
  source: UserRow['source'];
  status: UserRow['status'];
  blockedReason: UserRow['blockedReason'];
  /** Set while failed logins lock the account. */
  lockedUntil: number | null;
  mustChangePassword: boolean;
  lastLoginAt: number | null;
}

/** The throttle key of an account's failed logins (per LDAP server record for LDAP accounts). */
function accountThrottleKey(user: UserRow): string {
  return throttleKey(user.loginKey, user.source === 'ldap' && user.sourceName ? user.sourceName : undefined);
}

async function stateOf(scope: OperatorScope, user: UserRow): Promise<AccountState> {
  return {
    login: user.login,
    role: user.role,
    source: user.source,
    status: user.status,
    blockedReason: user.blockedReason,
    lockedUntil: await lockedUntil(scope.db, accountThrottleKey(user), scope.now()),
    mustChangePassword: user.mustChangePassword,
    lastLoginAt: user.lastLoginAt,
  };
}

/** The live account of `login` (case-insensitive), or 404 naming it. */
async function accountOf(db: Db, login: string): Promise<UserRow> {
  const rows = await db
    .select()
    .from(users)
    .where(and(eq(users.loginKey, loginKey(login)), liveAccounts))
    .limit(1);
  if (!rows[0]) throw new ProblemError('NOT_FOUND', { detail: `no account with the login "${login}"` });
  return rows[0];
}

/** The state of the account of `login` as now stored. */
export async function describeAccount(scope: OperatorScope, login: string): Promise<AccountState> {
  return stateOf(scope, await accountOf(scope.db, login));
}

/** Lists the live administrators with their state; the listing itself is audited. */
export async function listAdministrators(scope: OperatorScope): Promise<AccountState[]> {
  const admins = await scope.db
    .select()
    .from(users)
    .where(and(eq(users.role, 'admin'), liveAccounts))
    .orderBy(asc(users.loginKey));
  const event = { type: 'operator.admins_listed', actor: OPERATOR_ACTOR, data: { count: admins.length } } as const;
  await scope.db.batch([auditInsert(scope.db, scope.now(), { stream: 'crud_admin', ...event })]);
  return Promise.all(admins.map((u) => stateOf(scope, u)));
}

/** Ends the failed-login lock of an account (its counted failures too). */
export async function unlockLogin(scope: OperatorScope, login: string): Promise<AccountState> {
  const user = await accountOf(scope.db, login);
  await unlockAccount(scope, OPERATOR_ACTOR, user);
  return describeAccount(scope, login);
}

/** Unblocks an account blocked by an administrator or by inactivity. */
export async function unblockLogin(scope: OperatorScope, login: string): Promise<AccountState> {
  const user = await accountOf(scope.db, login);
  await unblockAccount(scope, OPERATOR_ACTOR, user);
  return describeAccount(scope, login);
}

/**
 * Sets a new password for a local account: the password policy and history apply, and the user
 * must change it at the next login (as after an administrator's reset).
 */
export async function resetPasswordOf(scope: OperatorScope, login: string, password: string): Promise<AccountState> {
  const user = await accountOf(scope.db, login);
  await setPassword(scope, user, password, {
    actor: OPERATOR_ACTOR,
    // As an administrator's reset: every session ends, every API token is revoked and every passkey ends.
    ends: { reason: 'admin_reset', tokens: true, passkeys: true },
    mustChange: true,
  });
  return describeAccount(scope, login);
}

/**
 * Removes every second factor of an account (TOTP, passkeys) and its recovery codes (a locked-out administrator who
 * lost the authenticator): every session ends, the event (actor "operator") mails the user.
 * Returns how many factor rows and codes were removed.
 */
export async function removeFactorsOf(scope: OperatorScope, login: string): Promise<number> {
  const user = await accountOf(scope.db, login);
  // One transaction: the deletions, the ended sessions and the event (accounts/factors.ts).
  return removeEveryFactor(scope.db, user, { now: scope.now(), actor: OPERATOR_ACTOR, by: 'operator' });
}

/** Creates another administrator (local account; policy-checked, audited). */
export async function createAdministrator(
  scope: OperatorScope,
  login: string,
  password: string,
  o: { mustChange?: boolean } = {},
): Promise<AccountState> {
  const parsed = LoginSchema.safeParse(login);
  if (!parsed.success) {
    const detail = `login "${login}": ${parsed.error.issues.map((i) => i.message).join('; ')}`;
    throw new ProblemError('VALIDATION', { detail });
  }
  const user = await createLocalAccount(
    scope,
    { login, password, role: 'admin', mustChangePassword: o.mustChange ?? false },
    { actor: OPERATOR_ACTOR, via: 'operator' },
  );
  return stateOf(scope, user);
}

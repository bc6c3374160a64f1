/**
 * Administrators' changes to accounts (and the operator command's). Every change to an
 * administrator is conditioned, in the same SQL statement, on another live active administrator
 * remaining, so two concurrent requests can never leave the service without one.
 */
import { and, sql, type SQL } from 'drizzle-orm';
import { runAccountBatch, type AccountBatchItem } from '../accounts/writes.js';
import { changeAccountStatement, endSuperAccessStatement } from '../accounts/account-writes.js';
import { auditInsert, auditInsertWhen, type AuditEventType } from '../audit/events.js';
import { loginKey } from '../auth/credentials.js';
import { loginSkeleton } from './confusables.js';
import { throttleKey, unlockStatements } from '../accounts/throttle.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { loginReservations, users } from '../../../schema/index.js';
import { DAY_MS, type Role, type UserRow } from '../accounts/model.js';
import type { Scope } from '../http/scope.js';
import { activeAccounts } from '../accounts/live.js';
import { assertSessionLimit, endSessionsStatement, revokeDevicesStatement } from '../accounts/sessions.js';
import { endUserLinks } from '../accounts/reset-tokens.js';

/**
 * Who makes an admin change: an administrator's account, or the operator command (`npm run ops`),
 * which works on the database directly and has no account (id null).
 */
export type Actor = Pick<UserRow, 'login' | 'role'> & { id: string | null };

/** The actor of the operator command in audit events: actor_login "operator", actor_id null. */
export const OPERATOR_ACTOR: Actor = { id: null, login: 'operator', role: 'admin' };

/**
 * Super-access lends administrator rights for a while: it cannot hand out lasting ones (an admin
 * account or role) nor super-access, or it would outlive DEBUG_COUNTDOWN_USER_SU.
 */
export function assertMayGrantAdmin(actor: Pick<UserRow, 'role'>): void {
  if (actor.role !== 'admin')
    throw new ProblemError('FORBIDDEN', { detail: 'super-access cannot grant administrator rights or super-access' });
}

/**
 * Roles are lasting rights (auditor reads the audit log, which records what super-access did):
 * super-access neither gives nor changes them.
 */
export function assertMayChangeRole(actor: UserRow): void {
  if (actor.role !== 'admin')
    throw new ProblemError('FORBIDDEN', { detail: 'super-access cannot give or change roles' });
}

/** SQL: another live, active administrator than `id` exists. */
function anotherAdmin(id: string): SQL {
  // A person: a service account never signs in, so it cannot be the administrator who remains.
  return sql`(select count(*) from ${users}
    where role = 'admin' and kind = 'person' and ${activeAccounts} and id <> ${id}) > 0`;
}

/** Whether a change takes an administrator's admin rights away (then another must remain). */
function removesAdmin(user: UserRow, change: { role?: Role; status?: 'blocked'; deleted?: boolean }): boolean {
  return (
    user.role === 'admin' &&
    user.status === 'active' &&
    (change.status === 'blocked' || change.deleted === true || (change.role !== undefined && change.role !== 'admin'))
  );
}

/**
 * Runs an update of `user` (plus extra statements) in one batch; refuses with 409 when it would
 * remove the last active administrator.
 */
export async function updateAccount(
  scope: Scope,
  actor: Actor,
  user: UserRow,
  set: Partial<UserRow>,
  o: {
    audit: { type: AuditEventType; data?: Record<string, unknown> };
    extra?: (happened: SQL) => AccountBatchItem[];
    change?: { role?: Role; status?: 'blocked'; deleted?: boolean };
  },
): Promise<void> {
  const { db } = scope;
  const now = scope.now();
  const guard = removesAdmin(user, o.change ?? {}) ? anotherAdmin(user.id) : sql`1 = 1`;
  // The audit event and any extra statement run in the same transaction, only if the update did.
  const happened = sql`exists (select 1 from ${users} where id = ${user.id} and updated_at = ${now})`;
  const [result] = await runAccountBatch(db, [
    changeAccountStatement(db, user.id, set, now, guard),
    auditInsertWhen(
      db,
      now,
      {
        stream: 'crud_admin',
        type: o.audit.type,
        actor: actor,
        subject: user,
        request: scope.request,
        data: o.audit.data ?? {},
      },
      happened,
    ),
    ...(o.extra?.(happened) ?? []),
  ]);
  if (result.rowsAffected === 0) {
    throw new ProblemError('CONFLICT', {
      detail: 'the last active administrator cannot be deleted, blocked or demoted',
    });
  }
}

/**
 * Deletes an account (kept as a tombstone) and reserves its login for USER_LOGIN_REUSE_DAY days, with
 * its look-alikes (the reservation keeps the login's confusable skeleton).
 */
export async function deleteAccount(scope: Scope, actor: Actor, user: UserRow, reuseDays: number): Promise<void> {
  const now = scope.now();
  const until = now + reuseDays * DAY_MS;
  await updateAccount(
    scope,
    actor,
    user,
    { deletedAt: now },
    {
      audit: { type: 'user.deleted', data: { loginReservedUntil: new Date(until).toISOString() } },
      change: { deleted: true },
      extra: (happened) =>
        reuseDays > 0
          ? [
              scope.db.run(sql`
              insert into ${loginReservations} (login_key, until, skeleton)
              select ${loginKey(user.login)}, ${until}, ${loginSkeleton(user.login)} where ${happened}
              on conflict (login_key) do update set until = excluded.until, skeleton = excluded.skeleton`),
            ]
          : [],
    },
  );
}

/** Ends a failed-login lock of a local account. */
export async function unlockAccount(scope: Scope, actor: Actor, user: UserRow): Promise<void> {
  const { db } = scope;
  const now = scope.now();
  await db.batch([
    ...unlockStatements(
      db,
      throttleKey(loginKey(user.login), user.source === 'ldap' && user.sourceName ? user.sourceName : undefined),
      user.id,
    ),
    auditInsert(db, now, {
      stream: 'crud_admin',
      type: 'account.unlocked',
      actor: actor,
      subject: user,
      request: scope.request,
    }),
  ]);
}

/** Unblocks an account (blocked by an admin or by inactivity) and restarts its inactivity period. */
export async function unblockAccount(scope: Scope, actor: Actor, user: UserRow): Promise<void> {
  const set = { status: 'active' as const, blockedReason: null, lastActivityAt: scope.now() };
  await updateAccount(scope, actor, user, set, { audit: { type: 'account.unblocked' } });
}

/**
 * Blocks an account: its sessions and reset/welcome links end for good (an unblock must not revive an unattended
 * browser or an old mail); its API tokens are only refused while blocked (docs/security.md, "What ends what").
 */
export async function blockAccount(scope: Scope, actor: Actor, user: UserRow): Promise<void> {
  const now = scope.now();
  await updateAccount(
    scope,
    actor,
    user,
    { status: 'blocked', blockedReason: 'admin' },
    {
      audit: { type: 'account.blocked', data: { reason: 'admin' } },
      change: { status: 'blocked' },
      extra: (happened) => [
        endSessionsStatement(scope.db, user.id, now, 'block', { when: happened }),
        revokeDevicesStatement(scope.db, user.id, happened),
        endUserLinks(scope.db, user.id, now, happened),
      ],
    },
  );
}

/** Changes an account's details; nobody changes their own role, and lent rights never change a role. */
export async function changeAccountDetails(
  scope: Scope,
  actor: UserRow,
  user: UserRow,
  body: { displayName?: string; email?: string | null; role?: Role; sessionLimit?: number | null },
): Promise<void> {
  if (body.role !== undefined && body.role !== user.role && user.id === actor.id) {
    throw new ProblemError('FORBIDDEN', { detail: 'nobody changes their own role' });
  }
  if (body.role !== undefined && body.role !== user.role) assertMayChangeRole(actor);
  assertSessionLimit(scope.config, body.sessionLimit);
  const before = {
    displayName: user.displayName,
    email: user.email,
    role: user.role,
    sessionLimit: user.sessionLimit,
  };
  // A new address ends the links mailed to the old one (docs/security.md, "What ends what").
  const newAddress = body.email !== undefined && body.email !== user.email;
  const now = scope.now();
  await updateAccount(scope, actor, user, body, {
    audit: { type: 'user.updated', data: { before, after: body } },
    change: { role: body.role },
    extra: (happened) => (newAddress ? [endUserLinks(scope.db, user.id, now, happened)] : []),
  });
}

/** Lends administrator rights for `minutes` (default DEBUG_COUNTDOWN_USER_SU); only an administrator does. */
export async function grantSuperAccess(scope: Scope, actor: UserRow, user: UserRow, minutes?: number): Promise<void> {
  assertMayGrantAdmin(actor);
  const m = minutes ?? scope.config.get('DEBUG_COUNTDOWN_USER_SU');
  const until = scope.now() + m * 60_000;
  await updateAccount(
    scope,
    actor,
    user,
    { superAccessUntil: until },
    { audit: { type: 'super_access.granted', data: { until: new Date(until).toISOString(), minutes: m } } },
  );
}

/** Ends an account's super-access now. */
export async function endSuperAccess(scope: Scope, actor: Actor, user: UserRow): Promise<void> {
  await updateAccount(
    scope,
    actor,
    user,
    { superAccessUntil: null },
    { audit: { type: 'super_access.ended', data: { by: 'admin' } } },
  );
}

/** Accounts whose super-access has ended: cleared, with the audit event (run by the jobs). */
export async function endExpiredSuperAccess(db: Db, now: number): Promise<number> {
  const ended = await db
    .select({ id: users.id, login: users.login })
    .from(users)
    .where(and(sql`${users.superAccessUntil} is not null`, sql`${users.superAccessUntil} <= ${now}`))
    .limit(500);
  for (const u of ended) {
    await runAccountBatch(db, [
      endSuperAccessStatement(db, u.id, now),
      auditInsert(db, now, { stream: 'crud_admin', type: 'super_access.ended', subject: u }),
    ]);
  }
  return ended.length;
}

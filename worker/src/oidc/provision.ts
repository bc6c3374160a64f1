/**
 * The account of an OIDC identity: the account linked to it, else a new account (source oidc) for
 * it; a login that collides with another account is never logged in silently: it becomes a
 * pending merge that /v3/login/union completes.
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Context } from 'hono';
import type * as oauth from 'oauth4webapi';
import { auditInsert } from '../audit/events.js';
import { loginKey } from '../auth/credentials.js';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import type { UserRow } from '../users/model.js';
import { isUniqueViolation } from '../users/store.js';
import { userIdentities, users } from '../../../schema/index.js';
import type { ProviderRow } from './flow.js';

export type Outcome = { user: UserRow } | { collision: { login: string; externalId: string } };

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Finds, refreshes or creates the account of `claims` at `provider`. */
export async function accountOfIdentity(c: Context<AppEnv>, provider: ProviderRow, claims: oauth.IDToken): Promise<Outcome> {
  const db = c.var.db;
  const now = c.var.deps.clock();
  const sub = claims.sub;
  const login = text(claims[provider.claimLogin]) ?? sub;
  const displayName = text(claims[provider.claimDisplayName]) ?? login;
  const email = text(claims[provider.claimEmail]) ?? null;
  const linked = await db
    .select({ user: users })
    .from(userIdentities)
    .innerJoin(users, eq(users.id, userIdentities.userId))
    .where(and(eq(userIdentities.source, 'oidc'), eq(userIdentities.sourceName, provider.name), eq(userIdentities.externalId, sub), isNull(users.deletedAt)))
    .limit(1);
  const found = linked[0]?.user;
  if (found) {
    // External accounts follow their provider's profile; a merged local account keeps its own.
    if (found.source === 'oidc' && (found.displayName !== displayName || found.email !== email)) {
      await db.update(users).set({ displayName, email, updatedAt: now }).where(eq(users.id, found.id));
      return { user: { ...found, displayName, email } };
    }
    return { user: found };
  }

  const role = ((r) => (r === 'admin' || r === 'auditor' || r === 'user' ? r : 'user'))(provider.claimRole ? claims[provider.claimRole] : undefined);
  const row: UserRow = {
    id: crypto.randomUUID(),
    login,
    loginKey: loginKey(login),
    displayName,
    email,
    role,
    source: 'oidc',
    sourceName: provider.name,
    externalId: sub,
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
      db.insert(userIdentities).values({ id: crypto.randomUUID(), userId: row.id, source: 'oidc', sourceName: provider.name, externalId: sub, createdAt: now }),
      auditInsert(db, now, { stream: 'crud_admin', type: 'user.created', subject: row, requestId: c.var.requestId, data: { source: 'oidc', provider: provider.name } }),
    ]);
  } catch (err) {
    // The login belongs to another account (local, LDAP, or another provider's): a merge, not a login.
    if (isUniqueViolation(err)) return { collision: { login, externalId: sub } };
    throw err;
  }
  return { user: row };
}

/** Refuses a blocked account, and blocks one inactive too long (as a password login would). */
export async function assertMayLogIn(c: Context<AppEnv>, user: UserRow): Promise<void> {
  const now = c.var.deps.clock();
  if (user.status === 'blocked') throw new ProblemError('ACCOUNT_BLOCKED', { detail: 'the account is blocked', extensions: { reason: user.blockedReason ?? 'admin' } });
  const basis = user.lastActivityAt ?? user.createdAt;
  if (now - basis > c.var.config.get('USER_INACTIVE_TIMEOUT_DAY') * 86_400_000) {
    await c.var.db.batch([
      c.var.db.update(users).set({ status: 'blocked', blockedReason: 'inactivity', updatedAt: now }).where(eq(users.id, user.id)),
      auditInsert(c.var.db, now, { stream: 'user_activity', type: 'account.blocked', subject: user, requestId: c.var.requestId, data: { reason: 'inactivity' } }),
    ]);
    throw new ProblemError('ACCOUNT_BLOCKED', { detail: 'the account is blocked after a long inactivity', extensions: { reason: 'inactivity' } });
  }
}

/** Records the successful login. */
export async function recordLogin(c: Context<AppEnv>, user: UserRow, provider: ProviderRow): Promise<void> {
  const now = c.var.deps.clock();
  await c.var.db.batch([
    c.var.db.update(users).set({ lastLoginAt: now, lastActivityAt: now }).where(eq(users.id, user.id)),
    auditInsert(c.var.db, now, { stream: 'user_activity', type: 'login.success', subject: user, requestId: c.var.requestId, data: { source: 'oidc', provider: provider.name } }),
  ]);
}

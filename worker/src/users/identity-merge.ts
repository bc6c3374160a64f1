/**
 * Pending merges (architecture.md §4, "Sessions and tokens"): when an external login (LDAP, OIDC)
 * collides with a local account of the same login, nothing logs in silently; the external identity
 * is linked to the local account only once its owner proves the local password (/v3/login/union).
 * A collision with another external account (no local password to prove) is refused instead.
 * The signed cookies that carry a pending merge are the sessions capability's (sessions/merge.ts).
 */
import { z } from '@hono/zod-openapi';
import { and, eq } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { RequestScope } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { userIdentities, users } from '../../../schema/index.js';
import type { ExternalIdentity } from './external.js';
import { loginKey } from '../accounts/login-name.js';
import type { UserRow } from '../accounts/model.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import { liveAccounts } from '../accounts/live.js';

/** The external identity waiting to be linked to the local account of `login`. */
export const PendingMergeSchema = z.object({
  login: z.string().min(1),
  source: z.enum(['ldap', 'oidc']),
  sourceName: z.string().min(1),
  /** The OIDC issuer ('' for LDAP): part of the identity's key. */
  issuer: z.string(),
  externalId: z.string().min(1),
});
export type PendingMerge = z.infer<typeof PendingMergeSchema>;

/**
 * What a login colliding with the account `identity.login` becomes: a pending merge when that
 * account is local (its password proves the owner at /v3/login/union), else 409 LOGIN_CONFLICT.
 * Two external sources are never linked: neither side has a password this service can check, so
 * whoever logged in first would otherwise decide whose account the login is.
 */
export async function pendingMergeOf(scope: RequestScope, identity: ExternalIdentity): Promise<PendingMerge> {
  const { source, sourceName, issuer, externalId, login } = identity;
  const db = scope.db;
  const live = and(eq(users.loginKey, loginKey(login)), liveAccounts);
  const other = (await db.select().from(users).where(live).limit(1))[0];
  if (other?.source === 'local' && other.passwordHash !== null)
    return { login, source, sourceName, issuer, externalId };
  const key = and(
    eq(userIdentities.source, source),
    eq(userIdentities.sourceName, sourceName),
    eq(userIdentities.issuer, issuer),
    eq(userIdentities.externalId, externalId),
  );
  const linked = (await db.select({ id: userIdentities.id }).from(userIdentities).where(key).limit(1))[0];
  // A first login of this very identity finished meanwhile, or the holder was just deleted: no conflict.
  if (!other || linked) {
    throw new ProblemError('CONFLICT', { detail: 'the account of this login changed during the login: try again' });
  }
  await auditInsert(db, scope.now(), {
    stream: 'user_activity',
    type: 'login.refused',
    subject: other,
    request: scope.request,
    data: {
      source,
      [source === 'oidc' ? 'provider' : 'server']: sourceName,
      reason: 'login-conflict',
      heldBy: { source: other.source, sourceName: other.sourceName },
    },
  });
  throw new ProblemError('LOGIN_CONFLICT', {
    detail:
      `the login ${login} belongs to an account of another identity source, which has no local password ` +
      'to prove ownership: nothing was linked; an administrator must resolve the conflict',
    extensions: { login },
  });
}

/**
 * Links the identity of a pending merge to `user` (the local account whose password was just
 * proven). Single use: an identity once linked cannot be linked again (a replay is 409).
 */
export async function linkPendingMerge(scope: RequestScope, merge: PendingMerge, user: UserRow): Promise<void> {
  const db = scope.db;
  const now = scope.now();
  try {
    await db.batch([
      db.insert(userIdentities).values({ id: crypto.randomUUID(), userId: user.id, ...merge, createdAt: now }),
      auditInsert(db, now, {
        stream: 'user_activity',
        type: 'identity.linked',
        actor: user,
        subject: user,
        request: scope.request,
        data: {
          source: merge.source,
          sourceName: merge.sourceName,
          issuer: merge.issuer,
          externalId: merge.externalId,
        },
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err))
      throw new ProblemError('CONFLICT', { detail: 'this external identity is already linked to an account' });
    throw err;
  }
}

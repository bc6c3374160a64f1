/**
 * Pending merges (DESIGN.md §4): when an external login (LDAP, OIDC) collides with a local account
 * of the same login, a short-lived signed cookie carries the external identity until the user
 * proves the local password at /v3/login/union; the identity is then linked to the local account.
 * A collision with another external account (no local password to prove) is refused instead.
 */
import type { Context } from 'hono';
import { z } from '@hono/zod-openapi';
import { bytesToHex } from '@noble/hashes/utils.js';
import { and, eq, isNull } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { isUniqueViolation } from '../users/store.js';
import type { UserRow } from '../users/model.js';
import type { ExternalIdentity } from '../users/external.js';
import { userIdentities, users } from '../../../schema/index.js';
import { MAX_PASSWORD_LENGTH, loginKey } from '../auth/credentials.js';
import { tokenHash } from '../auth/tokens.js';
import { MERGE_COOKIE, clearAuthCookie, clearHostCookie, readAuthCookie, readHostCookie, setAuthCookie, setHostCookie } from './http.js';
import { signClaims, verifyClaims } from './keys.js';
import { checkPasswordForSession } from './login.js';

export const MERGE_AUDIENCE = 'auth-pending-merge';
const MERGE_TTL_MS = 10 * 60_000;
/** The cookie that binds a pending merge to the browser that logged in (see startPendingMerge). */
const BINDING_COOKIE = 'auth_merge_binding';

export const MergeBody = z
  .object({
    password: z.string().min(1).max(MAX_PASSWORD_LENGTH).openapi({ description: 'the password of the local account' }),
    next: z.string().max(2048).optional(),
  })
  .openapi('MergeRequest');

const PendingMerge = z.object({
  login: z.string().min(1),
  source: z.enum(['ldap', 'oidc']),
  sourceName: z.string().min(1),
  /** The OIDC issuer ('' for LDAP): part of the identity's key. */
  issuer: z.string(),
  externalId: z.string().min(1),
});
export type PendingMerge = z.infer<typeof PendingMerge>;

/**
 * What a login colliding with the account `identity.login` becomes: a pending merge when that
 * account is local (its password proves the owner at /v3/login/union), else 409 LOGIN_CONFLICT.
 * Two external sources are never linked: neither side has a password this service can check, so
 * whoever logged in first would otherwise decide whose account the login is.
 */
export async function pendingMergeOf(c: Context<AppEnv>, identity: ExternalIdentity): Promise<PendingMerge> {
  const { source, sourceName, issuer, externalId, login } = identity;
  const db = c.var.db;
  const live = and(eq(users.loginKey, loginKey(login)), isNull(users.deletedAt));
  const other = (await db.select().from(users).where(live).limit(1))[0];
  if (other?.source === 'local' && other.passwordHash !== null) return { login, source, sourceName, issuer, externalId };
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
  await auditInsert(db, c.var.deps.clock(), {
    stream: 'user_activity',
    type: 'login.refused',
    subject: other,
    requestId: c.var.requestId,
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
 * Starts a pending merge: sets its signed cookie (LDAP and OIDC logins call this on a collision),
 * bound to this browser by a random value in a second cookie (`__Host-` over HTTPS) whose hash the
 * signed cookie carries: a leaked or planted merge cookie alone completes nothing elsewhere.
 */
export async function startPendingMerge(c: Context<AppEnv>, merge: PendingMerge): Promise<void> {
  const expiresAt = c.var.deps.clock() + MERGE_TTL_MS;
  const binding = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
  const claims = { ...merge, binding: tokenHash(binding) };
  const token = await signClaims(await c.var.sessionKeys(), claims, expiresAt, MERGE_AUDIENCE);
  setAuthCookie(c, token, expiresAt, MERGE_COOKIE);
  setHostCookie(c, BINDING_COOKIE, binding, expiresAt);
}

/**
 * Checks the pending merge, its binding to this browser and the local password, links the identity;
 * returns the local account. Single use: both cookies are cleared, and the identity, once linked,
 * cannot be linked again (a replay is 409).
 */
export async function completeMerge(c: Context<AppEnv>, password: string): Promise<UserRow> {
  const token = readAuthCookie(c, MERGE_COOKIE);
  const binding = readHostCookie(c, BINDING_COOKIE);
  const now = c.var.deps.clock();
  const claims = token ? await verifyClaims(await c.var.sessionKeys(), token, MERGE_AUDIENCE, now) : undefined;
  const merge = PendingMerge.safeParse(claims);
  // Hashes are compared: the timing of this comparison reveals nothing about the binding value.
  const bound = binding !== undefined && claims?.binding === tokenHash(binding);
  if (!merge.success || !bound) {
    throw new ProblemError('UNAUTHENTICATED', {
      detail: 'no valid pending merge in this browser: log in with the external account again',
      headers: { 'WWW-Authenticate': 'Bearer realm="auth"' },
    });
  }
  const user = await checkPasswordForSession(c, merge.data.login, password);
  const db = c.var.db;
  try {
    await db.batch([
      db.insert(userIdentities).values({ id: crypto.randomUUID(), userId: user.id, ...merge.data, createdAt: now }),
      auditInsert(db, now, {
        stream: 'user_activity',
        type: 'identity.linked',
        actor: user,
        subject: user,
        requestId: c.var.requestId,
        data: { source: merge.data.source, sourceName: merge.data.sourceName, issuer: merge.data.issuer, externalId: merge.data.externalId },
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ProblemError('CONFLICT', { detail: 'this external identity is already linked to an account' });
    throw err;
  }
  clearAuthCookie(c, MERGE_COOKIE);
  clearHostCookie(c, BINDING_COOKIE);
  return user;
}

/**
 * Pending merges (DESIGN.md §4): when an external login (LDAP, OIDC) collides with a local account
 * of the same login, a short-lived signed cookie carries the external identity until the user
 * proves the local password at /v3/login/union; the identity is then linked to the local account.
 */
import type { Context } from 'hono';
import { z } from '@hono/zod-openapi';
import { auditInsert } from '../audit/events.js';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { isUniqueViolation } from '../users/store.js';
import type { UserRow } from '../users/model.js';
import { userIdentities } from '../../../schema/index.js';
import { MAX_PASSWORD_LENGTH } from '../auth/credentials.js';
import { MERGE_COOKIE, clearAuthCookie, readAuthCookie, setAuthCookie } from './http.js';
import { signClaims, verifyClaims } from './keys.js';
import { checkPasswordForSession } from './login.js';

export const MERGE_AUDIENCE = 'auth-pending-merge';
const MERGE_TTL_MS = 10 * 60_000;

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
  externalId: z.string().min(1),
});
export type PendingMerge = z.infer<typeof PendingMerge>;

/** Starts a pending merge: sets its signed cookie (LDAP and OIDC logins call this on a collision). */
export async function startPendingMerge(c: Context<AppEnv>, merge: PendingMerge): Promise<void> {
  const expiresAt = c.var.deps.clock() + MERGE_TTL_MS;
  setAuthCookie(c, await signClaims(await c.var.sessionKeys(), merge, expiresAt, MERGE_AUDIENCE), expiresAt, MERGE_COOKIE);
}

/** Checks the pending merge and the local password, links the identity; returns the local account. */
export async function completeMerge(c: Context<AppEnv>, password: string): Promise<UserRow> {
  const token = readAuthCookie(c, MERGE_COOKIE);
  const now = c.var.deps.clock();
  const claims = token ? await verifyClaims(await c.var.sessionKeys(), token, MERGE_AUDIENCE, now) : undefined;
  const merge = PendingMerge.safeParse(claims);
  if (!merge.success) throw new ProblemError('UNAUTHENTICATED', { detail: 'no valid pending merge: log in with the external account again', headers: { 'WWW-Authenticate': 'Bearer realm="auth"' } });
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
        data: { source: merge.data.source, sourceName: merge.data.sourceName, externalId: merge.data.externalId },
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ProblemError('CONFLICT', { detail: 'this external identity is already linked to an account' });
    throw err;
  }
  clearAuthCookie(c, MERGE_COOKIE);
  return user;
}

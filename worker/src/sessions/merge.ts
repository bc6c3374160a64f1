/**
 * The signed claims of a pending merge (users/identity-merge.ts): what the short-lived cookie
 * `auth_pending_merge` carries until the user proves the local password at /v3/login/union, bound
 * to the browser that logged in by a random value in a second cookie, whose hash the claims carry.
 * Routes set and read the cookies; this module signs and checks what they hold.
 */
import { z } from '@hono/zod-openapi';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { RequestScope } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { MAX_PASSWORD_LENGTH } from '../auth/credentials.js';
import { tokenHash } from '../accounts/tokens.js';
import { PendingMergeSchema, type PendingMerge } from '../users/identity-merge.js';
import { signClaims, verifyClaims } from '../accounts/session-keys.js';

export const MERGE_AUDIENCE = 'auth-pending-merge';
/** The signed cookie of a pending merge. */
export const MERGE_COOKIE = 'auth_pending_merge';
/** The cookie that binds a pending merge to the browser that logged in (a `__Host-` cookie over HTTPS). */
export const BINDING_COOKIE = 'auth_merge_binding';
const MERGE_TTL_MS = 10 * 60_000;

export const MergeBody = z
  .object({
    password: z.string().min(1).max(MAX_PASSWORD_LENGTH).openapi({ description: 'the password of the local account' }),
    next: z.string().max(2048).optional(),
  })
  .openapi('MergeRequest');

/** The values of the two cookies of a pending merge, and when they expire. */
export interface PendingMergeCookies {
  token: string;
  binding: string;
  expiresAt: number;
}

/**
 * Signs a pending merge, bound to a fresh random value for the browser's binding cookie: a leaked
 * or planted merge cookie alone completes nothing in another browser.
 */
export async function signPendingMerge(scope: RequestScope, merge: PendingMerge): Promise<PendingMergeCookies> {
  const expiresAt = scope.now() + MERGE_TTL_MS;
  const binding = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
  const claims = { ...merge, binding: tokenHash(binding) };
  const token = await signClaims(await scope.sessionKeys(), claims, expiresAt, MERGE_AUDIENCE);
  return { token, binding, expiresAt };
}

/** The pending merge of the two cookies' values, or 401 when they are missing, forged, expired or unbound. */
export async function verifyPendingMerge(
  scope: RequestScope,
  token: string | undefined,
  binding: string | undefined,
): Promise<PendingMerge> {
  const claims = token ? await verifyClaims(await scope.sessionKeys(), token, MERGE_AUDIENCE, scope.now()) : undefined;
  const merge = PendingMergeSchema.safeParse(claims);
  // Hashes are compared: the timing of this comparison reveals nothing about the binding value.
  const bound = binding !== undefined && claims?.binding === tokenHash(binding);
  if (!merge.success || !bound) {
    throw new ProblemError('UNAUTHENTICATED', {
      detail: 'no valid pending merge in this browser: log in with the external account again',
      headers: { 'WWW-Authenticate': 'Bearer realm="auth"' },
    });
  }
  return merge.data;
}

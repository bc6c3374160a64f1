/**
 * What the routes of an existing account under /v4/users/{userId} share (account-routes.ts,
 * account-access-routes.ts, account-token-routes.ts).
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import { validated } from '../http/validated.js';
import { accountLockedUntil, liveAccount } from '../accounts/lookup.js';
import { PublicUserSchema, toPublicUser, type UserRow } from '../accounts/model.js';

export const UserParam = z.object({ userId: z.string().min(1).max(64) });
export const one = {
  200: { description: 'the account', content: { 'application/json': { schema: PublicUserSchema } } },
};

/** The live account of the path's {userId}, or 404. */
export async function target(c: Context<AppEnv>): Promise<UserRow> {
  return liveAccount(c.var.scope.db, validated(c, 'param', UserParam).userId);
}

/** The account as now stored, with its lock, as the public shape. */
export async function answer(c: Context<AppEnv>, id: string) {
  const user = await liveAccount(c.var.scope.db, id);
  const lockedUntil = await accountLockedUntil(c.var.scope.db, user, c.var.scope.now());
  return c.json(toPublicUser(user, c.var.scope.config, lockedUntil), 200);
}

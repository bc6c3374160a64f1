/**
 * Reads across every account for the administrator's views (docs/console.md, "Overview" and
 * "Sessions"): the live sessions of all users, paged and filtered by a login substring. Reads only.
 */
import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../store/index.js';
import { sessions, users } from '../../../schema/index.js';
import { likeLiteral } from './lookup.js';
import { loginKey } from './login-name.js';
import type { SessionPolicy, SessionRow } from './sessions.js';
import { liveAccounts } from './live.js';

/** A live session with the account it belongs to. */
export interface AccountSession {
  session: SessionRow;
  user: { id: string; login: string; displayName: string };
}

/** SQL: a session is live (not ended, before its absolute end, used within the idle time). */
export function liveSession(now: number, p: SessionPolicy) {
  return and(isNull(sessions.revokedAt), gt(sessions.expiresAt, now), gt(sessions.lastSeenAt, now - p.idleMs));
}

/**
 * The live sessions of live accounts whose login contains `login` (by login key, case-insensitive,
 * wildcards literal), most recently used first, with how many match in all.
 */
export async function listAllSessions(
  db: Db,
  q: { login?: string; limit: number; offset: number },
  now: number,
  p: SessionPolicy,
): Promise<{ rows: AccountSession[]; total: number }> {
  const where = and(
    liveSession(now, p),
    liveAccounts,
    q.login ? sql`${users.loginKey} like ${`%${likeLiteral(loginKey(q.login))}%`} escape '\\'` : undefined,
  );
  const [rows, count] = await db.batch([
    db
      .select({ session: sessions, user: { id: users.id, login: users.login, displayName: users.displayName } })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(where)
      .orderBy(desc(sessions.lastSeenAt), desc(sessions.id))
      .limit(q.limit)
      .offset(q.offset),
    db.select({ n: sql<number>`count(*)` }).from(sessions).innerJoin(users, eq(users.id, sessions.userId)).where(where),
  ]);
  return { rows, total: Number(count[0]?.n ?? 0) };
}

/** Session rows: creation within the user's limit, the one-query lookup, listing and revocation. */
import { and, desc, eq, gt, isNull, ne, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { auditInsert, auditInsertOfAccountWhen, auditInsertWhen } from '../audit/events.js';
import type { ConfigSnapshot } from '../config/index.js';
import { CredentialCache, preparedPerDb, reusableStatement, writeMark, type Db } from '../store/index.js';
import type { UserRow } from './model.js';
import { devices, sessions, users, type SessionEndReason } from '../../../schema/index.js';
import type { RequestMeta } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { AccountWrite, accountWrite, devicesOfAccount, runAccountBatch, type AccountBatchItem } from './writes.js';
import { activeAccounts } from './live.js';

export type SessionRow = typeof sessions.$inferSelect;
export type SessionAuthMethod = NonNullable<SessionRow['authMethod']>;

export interface SessionPolicy {
  idleMs: number;
  absoluteMs: number;
  /** How long an instance trusts its last check that a session lives (AUTH_REVOCATION_CHECK_SEC). */
  recheckMs: number;
}

/** Idle and absolute lifetimes and the revocation re-check bound, read at request time. */
export function sessionPolicy(config: ConfigSnapshot): SessionPolicy {
  return {
    idleMs: config.get('SESSION_IDLE_TIMEOUT_MIN') * 60_000,
    absoluteMs: config.get('SESSION_ABSOLUTE_TIMEOUT_HOURS') * 3_600_000,
    recheckMs: revocationCheckMs(config),
  };
}

/** The revocation re-check bound of cached session and token lookups (architecture.md §6). */
export function revocationCheckMs(config: ConfigSnapshot): number {
  return config.get('REVOCATION_CHECK_SEC') * 1000;
}

/**
 * The session limit an administrator may give an account (creating or changing it): at most
 * AUTH_SESSIONS_MAX_COUNT, else 422 naming the field.
 */
export function assertSessionLimit(config: ConfigSnapshot, requested: number | null | undefined): void {
  const max = config.get('AUTH_SESSIONS_MAX_COUNT');
  if (requested && requested > max) {
    throw new ProblemError('VALIDATION', {
      detail: `sessionLimit: at most AUTH_SESSIONS_MAX_COUNT (${max})`,
      extensions: { errors: [{ location: 'json', path: 'sessionLimit', message: `at most ${max}` }] },
    });
  }
}

/** The user's session limit: their own (at most AUTH_SESSIONS_MAX_COUNT) or AUTH_SESSIONS_DEFAULT_COUNT. */
export function sessionLimit(user: UserRow, config: ConfigSnapshot): number {
  const max = config.get('AUTH_SESSIONS_MAX_COUNT');
  return Math.min(user.sessionLimit ?? config.get('AUTH_SESSIONS_DEFAULT_COUNT'), max);
}

/** A session is live while not revoked, not past its absolute end, and used within the idle time. */
function live(now: number, p: SessionPolicy) {
  return and(isNull(sessions.revokedAt), gt(sessions.expiresAt, now), gt(sessions.lastSeenAt, now - p.idleMs));
}

/** What a new session is: its kind, how the login was proven, when, and from where. */
export interface NewSession {
  kind: SessionRow['kind'];
  authMethod: SessionAuthMethod;
  now: number;
  config: ConfigSnapshot;
  userAgent?: string;
  request?: RequestMeta;
  /** The login passed a second factor (its second step): the session's step-up time starts there. */
  secondFactorAt?: number;
}

/**
 * The statements that create a session and end the user's oldest live sessions beyond their
 * limit, with the audit event: to run in one transaction (createSession), or within a login's own
 * (a local password login, auth/password-login.ts `alsoOnSuccess`).
 */
export function sessionWrites(
  db: Db,
  user: UserRow,
  o: NewSession,
): { row: SessionRow; writes: [AccountBatchItem, ...AccountBatchItem[]] } {
  const p = sessionPolicy(o.config);
  const limit = sessionLimit(user, o.config);
  const id = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24))))
    .replaceAll('+', '-')
    .replaceAll('/', '_');
  const row: SessionRow = {
    id,
    userId: user.id,
    kind: o.kind,
    createdAt: o.now,
    lastSeenAt: o.now,
    expiresAt: o.now + p.absoluteMs,
    revokedAt: null,
    revokedReason: null,
    userAgent: o.userAgent?.slice(0, 200) ?? null,
    authMethod: o.authMethod,
    authenticatedAt: o.now,
    secondFactorAt: o.secondFactorAt ?? null,
  };
  const writes: [AccountBatchItem, ...AccountBatchItem[]] = [
    accountWrite(user.id, insertSession(db, row)),
    // Keep the newest `limit` live sessions (the new one included); end the rest.
    accountWrite(user.id, endSessionsBeyond(db, { now: o.now, userId: user.id, idleSince: o.now - p.idleMs, limit })),
    auditInsert(db, o.now, {
      stream: 'user_activity',
      type: 'session.created',
      subject: user,
      request: o.request,
      data: { kind: o.kind, authMethod: o.authMethod, limit, ...(o.secondFactorAt ? { secondFactor: true } : {}) },
    }),
  ];
  return { row, writes };
}

// A new session's statements (every session login's), built once.
const insertSession = reusableStatement(
  (db, p) => db.insert(sessions).values(p),
  [
    'id',
    'userId',
    'kind',
    'createdAt',
    'lastSeenAt',
    'expiresAt',
    'revokedAt',
    'revokedReason',
    'userAgent',
    'authMethod',
    'authenticatedAt',
    'secondFactorAt',
  ],
);
const endSessionsBeyond = reusableStatement(
  (db, p) =>
    db.run(sql`
      update ${sessions} set revoked_at = ${p.now}, revoked_reason = 'limit'
      where id in (
        select id from ${sessions}
        where user_id = ${p.userId} and revoked_at is null and expires_at > ${p.now}
          and last_seen_at > ${p.idleSince}
        order by created_at desc, rowid desc limit -1 offset ${p.limit})`),
  ['now', 'userId', 'idleSince', 'limit'],
);

/** Creates a session within the user's limit (sessionWrites, in one transaction). */
export async function createSession(db: Db, user: UserRow, o: NewSession): Promise<SessionRow> {
  const { row, writes } = sessionWrites(db, user, o);
  await runAccountBatch(db, writes);
  return row;
}

// At most one query per session per AUTH_REVOCATION_CHECK_SEC (store/credential-cache.ts: the staleness bound).
const sessionCache = new CredentialCache<{ user: UserRow; session: SessionRow }>(
  undefined,
  undefined,
  (found) => found.user.id,
);

/** Database lookups of sessions made by this process (tests: a cached answer costs none). */
export const sessionLookups = (): number => sessionCache.loads;

/**
 * The live session `id` and its live, active account, in one query, or none while the lookup is
 * cached (any revocation made here is seen at once; one made elsewhere within `p.recheckMs`).
 * The absolute and idle timeouts are checked at every use, cached or not.
 */
export async function sessionAccount(
  db: Db,
  id: string,
  now: number,
  p: SessionPolicy,
): Promise<{ user: UserRow; session: SessionRow } | undefined> {
  const idleSince = now - p.idleMs;
  const live = (f: { session: SessionRow }) => f.session.expiresAt > now && f.session.lastSeenAt > idleSince;
  return sessionCache.get(
    id,
    now,
    live,
    async () => {
      const found = await sessionLookup(db).get({ id, now, idleSince });
      // Shared by the requests of this session until the cache drops it: nobody may change it.
      if (found) Object.freeze(found.user);
      return found;
    },
    p.recheckMs,
  );
}

/**
 * The lookup of `sessionAccount` as a statement of a batch, for an isolate's first request, whose
 * start-up reads carry it (one round trip, architecture.md §6, "A far database"): `keep` hands its
 * rows to the session cache, as if `sessionAccount` had read them at `now`. `id` is the session id
 * of a cookie whose signature is not checked yet: the cache is only ever asked after that check. The
 * idle timeout, a setting not read yet, is left to the cache's check at use. The caller keeps
 * nothing when the start-up reads refuse the database.
 */
export function sessionLookupInBatch(db: Db, id: string, now: number) {
  const since = writeMark();
  return {
    query: sessionLookupQuery(db, id, now, 0),
    /** `rows`: what `query` read. */
    keep(rows: readonly unknown[] | undefined) {
      const found = (rows as { user: UserRow; session: SessionRow }[] | undefined)?.[0];
      if (!found || found.session.expiresAt <= now) return;
      Object.freeze(found.user);
      sessionCache.keep(id, found, now, since);
    },
  };
}

// The hot path of every cookie request: prepared once per handle; its batchable form for a first request.
const sessionLookup = preparedPerDb((db) =>
  sessionLookupQuery(db, sql.placeholder('id'), sql.placeholder('now'), sql.placeholder('idleSince')).prepare(),
);

function sessionLookupQuery(
  db: Db,
  id: string | Placeholder,
  now: number | Placeholder,
  idleSince: number | Placeholder,
) {
  return db
    .select({ user: users, session: sessions })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(
        eq(sessions.id, id),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
        gt(sessions.lastSeenAt, idleSince),
        activeAccounts,
      ),
    )
    .limit(1);
}

/**
 * Records activity at most once a minute: the write when one is due (run off the request's critical
 * path), else undefined (decided at once: most requests schedule nothing). `s` is the (cached) row:
 * its `lastSeenAt` moves at once, so concurrent requests do not touch again.
 */
export function touchSession(db: Db, s: SessionRow, now: number): (() => Promise<unknown>) | undefined {
  if (now - s.lastSeenAt < 60_000) return undefined;
  s.lastSeenAt = now;
  return () =>
    db.batch([
      db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, s.id)),
      db.update(users).set({ lastActivityAt: now }).where(eq(users.id, s.userId)),
    ]);
}

/** The live sessions of a user, newest first. */
export async function listSessions(db: Db, userId: string, now: number, p: SessionPolicy): Promise<SessionRow[]> {
  return db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), live(now, p)))
    .orderBy(desc(sessions.createdAt));
}

/**
 * The statement ending the live sessions of a user with `reason`, except `except` (the session of
 * the request that caused it), and only when `when` holds (for batches conditioned on a change).
 */
export function endSessionsStatement(
  db: Db,
  userId: string,
  now: number,
  reason: SessionEndReason,
  o: { except?: string; when?: SQL } = {},
): AccountWrite {
  const except = o.except === undefined ? undefined : ne(sessions.id, o.except);
  return accountWrite(
    userId,
    db
      .update(sessions)
      .set({ revokedAt: now, revokedReason: reason })
      .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now), except, o.when)),
  );
}

/**
 * The statement recording that session `sessionId` of `userId` passed a second factor at `now`
 * (its step-up time starts there); only while `when` holds, when given.
 */
export function secondFactorStatement(
  db: Db,
  userId: string,
  sessionId: string,
  now: number,
  when?: SQL,
): AccountWrite {
  return accountWrite(
    userId,
    db
      .update(sessions)
      .set({ secondFactorAt: now })
      .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), when)),
  );
}

/**
 * The statement revoking every device cookie of an account (sessions/device-cookie.ts), only when
 * `when` holds (for batches conditioned on a change): with a password change or reset, a block and
 * "sign out everywhere", whose devices then count as untrusted until their next login.
 */
export function revokeDevicesStatement(db: Db, userId: string, when?: SQL) {
  // An account write, also of its devices: the cached checks of these devices go with it.
  return new AccountWrite(db.delete(devices).where(and(eq(devices.userId, userId), when)), [
    userId,
    devicesOfAccount(userId),
  ]);
}

/** Revokes one session of a user (or all when `id` is undefined); returns how many ended. */
export async function revokeSessions(
  db: Db,
  user: UserRow,
  o: { id?: string; now: number; actor: UserRow; reason: SessionEndReason; request?: RequestMeta },
): Promise<number> {
  const where = and(
    eq(sessions.userId, user.id),
    isNull(sessions.revokedAt),
    o.id === undefined ? undefined : eq(sessions.id, o.id),
  );
  const [result] = await runAccountBatch(db, [
    accountWrite(user.id, db.update(sessions).set({ revokedAt: o.now, revokedReason: o.reason }).where(where)),
    // Audited only when the update above ended a session (changes() reads the previous statement).
    auditInsertWhen(
      db,
      o.now,
      {
        stream: user.id === o.actor.id ? 'user_activity' : 'crud_admin',
        type: o.id === undefined ? 'session.revoked_all' : 'session.revoked',
        actor: o.actor,
        subject: user,
        request: o.request,
        data: o.id === undefined ? { reason: o.reason } : { sessionId: o.id, reason: o.reason },
      },
      sql`changes() > 0`,
    ),
    // "Sign out everywhere" also ends the account's device cookies.
    ...(o.id === undefined ? [revokeDevicesStatement(db, user.id)] : []),
  ]);
  return result.rowsAffected;
}

/**
 * Logs out the live session `id` of account `userId`, both known from a verified signed token, in one
 * round trip (no lookup first: architecture.md §6), with its audit event; false when it had ended already.
 */
export async function logOutSignedSession(
  db: Db,
  o: { id: string; userId: string; now: number; policy: SessionPolicy; request?: RequestMeta },
): Promise<boolean> {
  const [result] = await runAccountBatch(db, [
    accountWrite(
      o.userId,
      db
        .update(sessions)
        .set({ revokedAt: o.now, revokedReason: 'logout' })
        .where(and(eq(sessions.id, o.id), eq(sessions.userId, o.userId), live(o.now, o.policy))),
    ),
    // Audited only when the update above ended the session (changes() reads the previous statement).
    auditInsertOfAccountWhen(
      db,
      o.now,
      {
        stream: 'user_activity',
        type: 'session.revoked',
        request: o.request,
        data: { sessionId: o.id, reason: 'logout' },
      },
      o.userId,
      sql`changes() > 0`,
    ),
  ]);
  return result.rowsAffected > 0;
}

/**
 * A session that no longer authenticates, with its account, to tell the holder of its (validly
 * signed) token why; undefined when there is no such row.
 */
export async function endedSession(db: Db, id: string): Promise<{ user: UserRow; session: SessionRow } | undefined> {
  const rows = await db
    .select({ user: users, session: sessions })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.id, id))
    .limit(1);
  return rows[0];
}

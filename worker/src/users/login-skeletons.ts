/**
 * Look-alike logins (docs/security.md, "Logins"): the checks by confusable skeleton (users/confusables.ts) of a
 * new account's login against the live accounts and the reservations of deleted logins, and the backfill of
 * the skeleton columns (the migrations cannot compute them): in batches, under a job lease, while the service
 * answers (docs/architecture.md §6, "Backfills after an upgrade"). Until it is done, the checks also compute
 * the skeletons of the accounts not filled yet, so a look-alike is refused during the backfill as after it.
 */
import { fillLoginSkeletonsWrite } from '../accounts/account-writes.js';
import { runAccountBatch } from '../accounts/writes.js';
import { and, asc, count, eq, gt, isNull, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../store/index.js';
import type { Job } from '../jobs/job.js';
import type { Logger } from '../http/logger.js';
import { jobLeases, loginReservations, users } from '../../../schema/index.js';
import { loginSkeleton } from './confusables.js';
import { loginKey } from '../accounts/login-name.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import { liveAccounts } from '../accounts/live.js';

/** Rows read and written per batch: one transaction each, short enough not to hold a host's event loop. */
export const SKELETON_BATCH = 500;
/** Rows read per look of a check at the live accounts not filled yet. */
const SCAN_BATCH = 2_000;

/** Where a walk over the live accounts without a skeleton stands: the last row seen (oldest first). */
interface Cursor {
  createdAt: number;
  id: string;
}

/** The next live accounts without a skeleton after `after`, oldest first (users_pending_login_skeleton). */
async function pendingAfter(
  db: Db,
  after: Cursor | undefined,
  limit: number,
): Promise<{ id: string; login: string; loginKey: string; createdAt: number }[]> {
  const past = after ? sql`and (created_at, id) > (${after.createdAt}, ${after.id})` : sql``;
  // The index named: the planner would take the skeleton index for "is null" and sort every pending row per batch.
  return db.all(sql`
    select id, login, login_key as loginKey, created_at as createdAt
    from ${users} indexed by users_pending_login_skeleton
    where login_skeleton is null and ${liveAccounts} ${past}
    order by created_at, id limit ${limit}`);
}

/**
 * The login of a live account that looks like `login` without being it (another key), if any: by the
 * skeleton index, and among the live accounts whose skeleton is not filled yet (none once the backfill is
 * done, but the newer of two look-alikes) by computing theirs.
 */
export async function lookAlikeOf(db: Db, login: string): Promise<string | undefined> {
  const skeleton = loginSkeleton(login);
  const key = loginKey(login);
  const [row] = await db
    .select({ login: users.login })
    .from(users)
    .where(and(eq(users.loginSkeleton, skeleton), ne(users.loginKey, key), liveAccounts))
    .limit(1);
  if (row) return row.login;
  let after: Cursor | undefined;
  for (;;) {
    const rows = await pendingAfter(db, after, SCAN_BATCH);
    const alike = rows.find((r) => r.loginKey !== key && loginSkeleton(r.login) === skeleton);
    if (alike) return alike.login;
    if (rows.length < SCAN_BATCH) return undefined;
    after = rows[rows.length - 1]!;
  }
}

/**
 * Until when `login` is reserved at `now`: its key or its skeleton is a deleted account's login's (a
 * reservation not filled yet compared by its computed skeleton).
 */
export async function reservedUntil(db: Db, login: string, now: number): Promise<number | undefined> {
  const skeleton = loginSkeleton(login);
  const key = loginKey(login);
  const rows = await db
    .select({ until: loginReservations.until, key: loginReservations.loginKey, skeleton: loginReservations.skeleton })
    .from(loginReservations)
    .where(
      and(
        or(
          eq(loginReservations.loginKey, key),
          eq(loginReservations.skeleton, skeleton),
          isNull(loginReservations.skeleton),
        ),
        gt(loginReservations.until, now),
      ),
    )
    .orderBy(asc(loginReservations.until));
  return rows.find((r) => r.key === key || (r.skeleton ?? loginSkeleton(r.key)) === skeleton)?.until;
}

/** A live account left without a skeleton: it looks like `other`'s login, which has it. */
export interface LookAlikeConflict {
  login: string;
  other: string;
}

/** The skeleton of one row, unless another live account holds it (then the conflict). */
async function fillOne(db: Db, row: { id: string; login: string }): Promise<LookAlikeConflict | 'filled' | 'gone'> {
  const skeleton = loginSkeleton(row.login);
  try {
    const [res] = await runAccountBatch(db, [fillLoginSkeletonsWrite(db, [{ id: row.id, skeleton }])]);
    return res.rowsAffected > 0 ? 'filled' : 'gone';
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const [holder] = await db
      .select({ login: users.login })
      .from(users)
      .where(and(eq(users.loginSkeleton, skeleton), liveAccounts))
      .limit(1);
    return { login: row.login, other: holder?.login ?? '' };
  }
}

export interface FillResult {
  /** accounts given their skeleton */
  filled: number;
  /** live accounts left without one: each looks like an older account's login */
  conflicts: LookAlikeConflict[];
  /** every live account without a skeleton was looked at (false: the time budget ran out first) */
  complete: boolean;
}

export interface FillOptions {
  /** rows per batch (SKELETON_BATCH) */
  batchSize?: number;
  /** stop after the batch that ends past this time (Date.now()); the next run goes on */
  deadline?: number;
  /** called after each batch */
  onBatch?: (progress: { filled: number; conflicts: number }) => void;
  /** checked before each batch: true stops the run where it is (a host closing) */
  stopped?: () => boolean;
}

/**
 * Fills the skeletons still null (new columns, a rekeyed login), in batches of one transaction each:
 * live accounts oldest first, so of two that already looked alike the older keeps its skeleton; the
 * newer stays null (its own key still works) and is returned, for an administrator to rename or delete
 * one of the two. Reservations get the skeleton of their key. Idempotent, and safe beside another run:
 * each write fills a row only while it has no skeleton. Costs an index look once all is filled.
 */
export async function fillLoginSkeletons(db: Db, o: FillOptions = {}): Promise<FillResult> {
  const limit = o.batchSize ?? SKELETON_BATCH;
  const reserved = await db
    .select({ key: loginReservations.loginKey })
    .from(loginReservations)
    .where(isNull(loginReservations.skeleton));
  for (const r of reserved) {
    await db
      .update(loginReservations)
      .set({ skeleton: loginSkeleton(r.key) })
      .where(and(eq(loginReservations.loginKey, r.key), isNull(loginReservations.skeleton)));
  }
  const conflicts: LookAlikeConflict[] = [];
  let filled = 0;
  let after: Cursor | undefined;
  for (;;) {
    if (o.stopped?.()) return { filled, conflicts, complete: false };
    const rows = await pendingAfter(db, after, limit);
    if (rows.length === 0) return { filled, conflicts, complete: true };
    try {
      // One transaction for the batch; a look-alike in it rolls it back, and the rows go one by one.
      const rowsOf = rows.map((r) => ({ id: r.id, skeleton: loginSkeleton(r.login) }));
      const [result] = await runAccountBatch(db, [fillLoginSkeletonsWrite(db, rowsOf)]);
      filled += result.rowsAffected;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      for (const row of rows) {
        const outcome = await fillOne(db, row);
        if (outcome === 'filled') filled += 1;
        else if (outcome !== 'gone') conflicts.push(outcome);
      }
    }
    o.onBatch?.({ filled, conflicts: conflicts.length });
    if (rows.length < limit) return { filled, conflicts, complete: true };
    after = rows[rows.length - 1]!;
    if (o.deadline !== undefined && Date.now() >= o.deadline) return { filled, conflicts, complete: false };
    // The host's other work (requests, on Node the one event loop) goes between two batches.
    await new Promise((r) => setTimeout(r, 0));
  }
}

/** The job's name: its lease keeps to one run at a time across instances. */
export const SKELETON_JOB = 'login-skeletons';
/** A run stops after this long (the edge's scheduled invocation is short); the next one goes on. */
const RUN_BUDGET_MS = 20_000;
/** Progress is logged at most this often during a run. */
const PROGRESS_EVERY_MS = 5_000;

/** Look-alikes already reported by this process (edge: isolate): each is logged once, not at every run. */
const reported = new Set<string>();

/** What the last run of this process (edge: isolate) found, for the Node host's loop. */
let lastComplete = false;

/** Whether the last run of this process finished the backfill (false before any run). */
export function skeletonsComplete(): boolean {
  return lastComplete;
}

/** Live accounts without a skeleton (still to fill, or look-alikes left to an administrator). */
export async function skeletonsRemaining(db: Db): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(users)
    .where(and(isNull(users.loginSkeleton), liveAccounts));
  return row?.n ?? 0;
}

/** Whether a run of the backfill holds its lease now (on any instance). */
export async function skeletonsFilling(db: Db, now: number): Promise<boolean> {
  const [row] = await db
    .select({ until: jobLeases.until })
    .from(jobLeases)
    .where(and(eq(jobLeases.name, SKELETON_JOB), gt(jobLeases.until, now), ne(jobLeases.holder, '')));
  return row !== undefined;
}

/**
 * One run of the backfill (at most RUN_BUDGET_MS), logging its progress: how many were filled and how
 * many remain, every few seconds and at its end, and each look-alike left without a skeleton (once per
 * process).
 */
export async function runSkeletonBackfill(db: Db, logger: Logger, o: FillOptions = {}): Promise<FillResult> {
  const started = Date.now();
  const pending = await skeletonsRemaining(db);
  let logged = started;
  if (pending > reported.size) logger.info('filling login skeletons', { remaining: pending });
  const result = await fillLoginSkeletons(db, {
    deadline: started + RUN_BUDGET_MS,
    ...o,
    onBatch: (p) => {
      o.onBatch?.(p);
      if (Date.now() - logged < PROGRESS_EVERY_MS) return;
      logged = Date.now();
      logger.info('filling login skeletons', { filled: p.filled, remaining: pending - p.filled });
    },
  });
  for (const { login, other } of result.conflicts) {
    if (reported.has(login)) continue;
    reported.add(login);
    const msg = 'login looks like another live account login (same confusable skeleton): delete one of the two';
    logger.warning(msg, { login, other });
  }
  if (result.filled > 0 || !result.complete)
    logger.info(result.complete ? 'login skeletons filled' : 'filling login skeletons: the next run goes on', {
      filled: result.filled,
      remaining: pending - result.filled,
      durationMs: Date.now() - started,
    });
  lastComplete = result.complete;
  return result;
}

/**
 * The backfill as a periodic job (edge: each Cron Trigger; Node: the in-app scheduler, and at start until
 * done): one run at a time across instances, each at most RUN_BUDGET_MS.
 */
export const fillLoginSkeletonsJob: Job = skeletonJob();

/** The job, its runs stopped between two batches once `stopped` says so (the Node host closing). */
export function skeletonJob(o: Pick<FillOptions, 'stopped' | 'batchSize'> = {}): Job {
  return {
    name: SKELETON_JOB,
    leaseMs: 2 * RUN_BUDGET_MS + 60_000,
    everyMs: 55_000,
    async run(scope) {
      const r = await runSkeletonBackfill(scope.db, scope.logger, o);
      return { filled: r.filled, conflicts: r.conflicts.length, complete: r.complete ? 1 : 0 };
    },
  };
}

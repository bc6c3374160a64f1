/**
 * Job leases (architecture.md §4): one row per job in libSQL. Taking the lease is one conditional
 * upsert, so of two hosts (or two cron firings) racing for it exactly one statement changes the row;
 * the other sees no change and skips the run. A holder that crashes keeps the lease only until
 * `until`, after which the next run takes it over.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../store/index.js';
import { jobLeases } from '../../../schema/index.js';

/**
 * Takes the lease of `name` for `ttlMs` when it is free or expired and the job's last run is at least
 * `everyMs` ago (so a job runs at its own pace whoever fires the schedule); true when this holder has it.
 */
export async function acquireLease(
  db: Db,
  name: string,
  holder: string,
  now: number,
  ttlMs: number,
  everyMs = 0,
): Promise<boolean> {
  const res = await db.run(sql`
    insert into ${jobLeases} (name, holder, until) values (${name}, ${holder}, ${now + ttlMs})
    on conflict (name) do update set holder = excluded.holder, until = excluded.until
    where ${jobLeases.until} <= ${now} and coalesce(${jobLeases.lastRunAt}, 0) <= ${now - everyMs}`);
  return res.rowsAffected === 1;
}

/**
 * Ends this holder's lease and records the run, counting it (and its failure) for the metrics (a
 * lease taken over meanwhile is left alone).
 */
export async function releaseLease(
  db: Db,
  name: string,
  holder: string,
  run: { at: number; durationMs: number; result: string; failed?: boolean },
): Promise<void> {
  await db
    .update(jobLeases)
    .set({
      until: run.at + run.durationMs,
      lastRunAt: run.at,
      lastDurationMs: run.durationMs,
      lastResult: run.result,
      runCount: sql`${jobLeases.runCount} + 1`,
      failureCount: sql`${jobLeases.failureCount} + ${run.failed ? 1 : 0}`,
    })
    .where(and(eq(jobLeases.name, name), eq(jobLeases.holder, holder)));
}

/**
 * Counts a run made without the lease (the test-only job trigger) for the metrics, leaving the
 * lease and the last run alone, so the job's pace is unchanged.
 */
export async function countUnleasedRun(db: Db, name: string, failed: boolean): Promise<void> {
  const f = failed ? 1 : 0;
  await db.run(sql`
    insert into ${jobLeases} (name, holder, until, run_count, failure_count) values (${name}, '', 0, 1, ${f})
    on conflict (name) do update set run_count = run_count + 1, failure_count = failure_count + ${f}`);
}

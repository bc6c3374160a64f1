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
export async function acquireLease(db: Db, name: string, holder: string, now: number, ttlMs: number, everyMs = 0): Promise<boolean> {
  const res = await db.run(sql`
    insert into ${jobLeases} (name, holder, until) values (${name}, ${holder}, ${now + ttlMs})
    on conflict (name) do update set holder = excluded.holder, until = excluded.until
    where ${jobLeases.until} <= ${now} and coalesce(${jobLeases.lastRunAt}, 0) <= ${now - everyMs}`);
  return res.rowsAffected === 1;
}

/** Ends this holder's lease and records the run (a lease taken over meanwhile is left alone). */
export async function releaseLease(db: Db, name: string, holder: string, run: { at: number; durationMs: number; result: string }): Promise<void> {
  await db
    .update(jobLeases)
    .set({ until: run.at + run.durationMs, lastRunAt: run.at, lastDurationMs: run.durationMs, lastResult: run.result })
    .where(and(eq(jobLeases.name, name), eq(jobLeases.holder, holder)));
}

/**
 * Running periodic jobs under their leases. The registered jobs are in schedule/index.ts: each capability
 * defines its own on top of this (architecture.md §2).
 */
import { createLogger, type Logger } from '../http/logger.js';
import type { Job, JobContext } from './job.js';
import { acquireLease, releaseLease } from './lease.js';
export type { Job, JobContext } from './job.js';

const DEFAULT_LEASE_MS = 5 * 60_000;
/** Slightly under the 5-minute schedule, so a firing a little early still runs the job. */
const DEFAULT_EVERY_MS = 4 * 60_000;

/** A job context whose logger may be left out (jobs then log JSON lines to the console at INFO). */
export type JobInput = Omit<JobContext, 'logger'> & { logger?: Logger };

const withLogger = (o: JobInput): JobContext => ({
  ...o,
  logger: o.logger ?? createLogger({ threshold: () => 'INFO', now: () => o.now }),
});

/**
 * Runs one job under its lease, and logs the run with its duration and counts: `ran`, `skipped`
 * (another run holds the lease, or the job ran less than `everyMs` ago: `ignorePace` leaves that
 * out, for runs kicked by a request) or `failed`.
 */
export async function runJob(
  o: JobInput,
  job: Job,
  opts: { holder?: string; ignorePace?: boolean } = {},
): Promise<'ran' | 'skipped' | 'failed'> {
  const ctx = withLogger(o);
  const holder = opts.holder ?? crypto.randomUUID();
  const every = opts.ignorePace ? 0 : (job.everyMs ?? DEFAULT_EVERY_MS);
  if (!(await acquireLease(ctx.db, job.name, holder, ctx.now, job.leaseMs ?? DEFAULT_LEASE_MS, every))) {
    ctx.logger.debug('job skipped: another run holds its lease, or it ran recently', { job: job.name });
    return 'skipped';
  }
  const started = Date.now();
  let result: string;
  let outcome: 'ran' | 'failed' = 'ran';
  try {
    const counts = (await job.run(ctx)) ?? {};
    result = JSON.stringify(counts);
    // DEBUG: the scheduler fires every 30 s; failures are ERROR, and GET /metrics counts the runs.
    ctx.logger.debug('job ran', { job: job.name, durationMs: Date.now() - started, ...counts });
  } catch (err) {
    outcome = 'failed';
    result = JSON.stringify({ error: String(err) });
    ctx.logger.error('job failed', { job: job.name, durationMs: Date.now() - started, err });
  }
  const run = { at: ctx.now, durationMs: Date.now() - started, result, failed: outcome === 'failed' };
  await releaseLease(ctx.db, job.name, holder, run);
  return outcome;
}

/**
 * Runs every job of `jobs` once, each under its lease (see runJob); one failing job does not stop the
 * others. Returns the names of the jobs that failed.
 */
export async function runJobs(o: JobInput, jobs: readonly Job[]): Promise<string[]> {
  const ctx = withLogger(o);
  const holder = crypto.randomUUID();
  const failed: string[] = [];
  for (const job of jobs) if ((await runJob(ctx, job, { holder })) === 'failed') failed.push(job.name);
  return failed;
}

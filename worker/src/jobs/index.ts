/**
 * Running periodic jobs under their leases. The registered jobs are in schedule/index.ts: each capability
 * defines its own on top of this (architecture.md §2).
 */
import type { Scope } from '../http/scope.js';
import type { Job } from './job.js';
import { acquireLease, releaseLease } from './lease.js';
export type { Job } from './job.js';

const DEFAULT_LEASE_MS = 5 * 60_000;
/** Slightly under the 5-minute schedule, so a firing a little early still runs the job. */
const DEFAULT_EVERY_MS = 4 * 60_000;

/**
 * Runs one job under its lease, and logs the run with its duration and counts: `ran`, `skipped`
 * (another run holds the lease, or the job ran less than `everyMs` ago: `ignorePace` leaves that
 * out, for runs kicked by a request) or `failed`.
 */
export async function runJob(
  scope: Scope,
  job: Job,
  opts: { holder?: string; ignorePace?: boolean } = {},
): Promise<'ran' | 'skipped' | 'failed'> {
  const now = scope.now();
  const holder = opts.holder ?? crypto.randomUUID();
  const every = opts.ignorePace ? 0 : (job.everyMs ?? DEFAULT_EVERY_MS);
  if (!(await acquireLease(scope.db, job.name, holder, now, job.leaseMs ?? DEFAULT_LEASE_MS, every))) {
    scope.logger.debug('job skipped: another run holds its lease, or it ran recently', { job: job.name });
    return 'skipped';
  }
  const started = Date.now();
  let result: string;
  let outcome: 'ran' | 'failed' = 'ran';
  try {
    const counts = (await job.run(scope)) ?? {};
    result = JSON.stringify(counts);
    // DEBUG: the scheduler fires every 30 s; failures are ERROR, and GET /metrics counts the runs.
    scope.logger.debug('job ran', { job: job.name, durationMs: Date.now() - started, ...counts });
  } catch (err) {
    outcome = 'failed';
    result = JSON.stringify({ error: String(err) });
    scope.logger.error('job failed', { job: job.name, durationMs: Date.now() - started, err });
  }
  const run = { at: now, durationMs: Date.now() - started, result, failed: outcome === 'failed' };
  await releaseLease(scope.db, job.name, holder, run);
  return outcome;
}

/**
 * Runs every job of `jobs` once, each under its lease (see runJob); one failing job does not stop the
 * others. Returns the names of the jobs that failed.
 */
export async function runJobs(scope: Scope, jobs: readonly Job[]): Promise<string[]> {
  const holder = crypto.randomUUID();
  const failed: string[] = [];
  for (const job of jobs) if ((await runJob(scope, job, { holder })) === 'failed') failed.push(job.name);
  return failed;
}

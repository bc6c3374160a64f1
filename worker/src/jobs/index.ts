/** Periodic jobs, run by edge Cron Triggers (`scheduled`) and by the Node host's in-app scheduler. */
import type { BridgeClient } from '../bridge/client.js';
import type { ConfigSnapshot } from '../config/index.js';
import { createLogger, type Logger } from '../http/logger.js';
import type { Db } from '../store/index.js';
import { acquireLease, releaseLease } from './lease.js';
import { blockInactiveAccounts, endSuperAccess, purgeLoginThrottle } from './security-jobs.js';
import { purgeAuditOutbox, shipAuditOutbox } from '../logs/jobs.js';
import { resealSecretsJob } from '../store/stored-secrets.js';

export interface JobContext {
  db: Db;
  config: ConfigSnapshot;
  now: number;
  logger: Logger;
  /** The on-prem bridge (log store, mail), when one is configured. */
  bridge?: BridgeClient;
}

export interface Job {
  name: string;
  /** How long a run may hold the job's lease (default 5 minutes); past it another run may start. */
  leaseMs?: number;
  /** Least time between two runs, whoever fires the schedule (default 5 minutes). */
  everyMs?: number;
  /** Runs once; may return counts for the log line of the run. */
  run(ctx: JobContext): Promise<void | Record<string, number>>;
}

/** The registered jobs; each capability adds its own. */
export const JOBS: Job[] = [shipAuditOutbox, blockInactiveAccounts, endSuperAccess, purgeLoginThrottle, purgeAuditOutbox, resealSecretsJob];

const DEFAULT_LEASE_MS = 5 * 60_000;
/** Slightly under the 5-minute schedule, so a firing a little early still runs the job. */
const DEFAULT_EVERY_MS = 4 * 60_000;

/**
 * Runs every job once, each under its lease (a job whose lease another run holds, or that ran
 * recently, is skipped), and logs each run with its duration and counts. One failing job does not stop
 * the others. Returns the names of the jobs that failed. Without a logger, jobs log JSON lines to the
 * console at INFO and above.
 */
export async function runScheduledJobs(
  o: Omit<JobContext, 'logger'> & { logger?: Logger },
  jobs: readonly Job[] = JOBS,
): Promise<string[]> {
  const ctx: JobContext = { ...o, logger: o.logger ?? createLogger({ threshold: () => 'INFO', now: () => o.now }) };
  const logger = ctx.logger;
  const holder = crypto.randomUUID();
  const failed: string[] = [];
  for (const job of jobs) {
    if (!(await acquireLease(ctx.db, job.name, holder, ctx.now, job.leaseMs ?? DEFAULT_LEASE_MS, job.everyMs ?? DEFAULT_EVERY_MS))) {
      logger.debug('job skipped: another run holds its lease, or it ran recently', { job: job.name });
      continue;
    }
    const started = Date.now();
    let result: string;
    try {
      const counts = (await job.run(ctx)) ?? {};
      result = JSON.stringify(counts);
      logger.info('job ran', { job: job.name, durationMs: Date.now() - started, ...counts });
    } catch (err) {
      failed.push(job.name);
      result = JSON.stringify({ error: String(err) });
      logger.error('job failed', { job: job.name, durationMs: Date.now() - started, err });
    }
    await releaseLease(ctx.db, job.name, holder, { at: ctx.now, durationMs: Date.now() - started, result });
  }
  return failed;
}

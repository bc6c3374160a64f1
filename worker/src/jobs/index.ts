/** Periodic jobs, run by edge Cron Triggers (`scheduled`) and by the Node host's in-app scheduler. */
import type { ConfigSnapshot } from '../config/index.js';
import type { Db } from '../store/index.js';
import { blockInactiveAccounts, endSuperAccess, purgeLoginThrottle } from './security-jobs.js';
import { resealSecretsJob } from '../store/stored-secrets.js';

export interface JobContext {
  db: Db;
  config: ConfigSnapshot;
  now: number;
}

export interface Job {
  name: string;
  run(ctx: JobContext): Promise<void>;
}

/** The registered jobs; each capability adds its own. */
export const JOBS: Job[] = [blockInactiveAccounts, endSuperAccess, purgeLoginThrottle, resealSecretsJob];

/** Runs every job once; one failing job does not stop the others. Returns the names that failed. */
export async function runScheduledJobs(ctx: JobContext, jobs: readonly Job[] = JOBS): Promise<string[]> {
  const failed: string[] = [];
  for (const job of jobs) {
    try {
      await job.run(ctx);
    } catch (err) {
      failed.push(job.name);
      console.error(JSON.stringify({ time: new Date(ctx.now).toISOString(), level: 'ERROR', msg: 'job failed', job: job.name, err: String(err) }));
    }
  }
  return failed;
}

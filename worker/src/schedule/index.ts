/**
 * The registered periodic jobs, run by edge Cron Triggers (`scheduled`) and by the Node host's in-app
 * scheduler. Each capability defines its own jobs with jobs/ (the shape, the runner); this list sits
 * above them all (architecture.md §2).
 */
import type { Scope } from '../http/scope.js';
import { runJobs, type Job } from '../jobs/index.js';
import { blockInactiveAccounts, endSuperAccess, purgeLoginThrottle } from '../users/security-jobs.js';
import { purgeAuditOutbox, purgeLocalAuditLog, shipAuditOutbox } from '../logs/jobs.js';
import { boundAuditStore } from '../logs/size-bound.js';
import { resealSecretsJob } from '../store/stored-secrets.js';
import { deliverWebhooksJob } from '../webhooks/sender.js';
import { fillLoginSkeletonsJob } from '../users/login-skeletons.js';
import { refreshLdapGroupsJob } from '../ldap/group-refresh.js';
import {
  deliverNotifications,
  handleNotificationEvents,
  passwordExpiryNotices,
  purgeNotifications,
  tokenExpiryNotices,
} from '../notifications/jobs.js';

/**
 * The registered jobs; each capability adds its own. The notifications come after the jobs that
 * write events (inactivity blocks), and delivery after the jobs that make mails.
 */
export const JOBS: Job[] = [
  shipAuditOutbox,
  blockInactiveAccounts,
  endSuperAccess,
  purgeLoginThrottle,
  purgeAuditOutbox,
  purgeLocalAuditLog,
  boundAuditStore,
  resealSecretsJob,
  handleNotificationEvents,
  passwordExpiryNotices,
  tokenExpiryNotices,
  deliverNotifications,
  purgeNotifications,
  fillLoginSkeletonsJob,
  refreshLdapGroupsJob,
  deliverWebhooksJob,
];

/** Runs every registered job once (jobs/index.ts runJobs); returns the names of the jobs that failed. */
export function runScheduledJobs(scope: Scope, jobs: readonly Job[] = JOBS): Promise<string[]> {
  return runJobs(scope, jobs);
}

/** Periodic security jobs: inactivity blocking (architecture.md §4) and throttle housekeeping. */
import { purgeThrottle } from '../accounts/throttle.js';
import { purgeUsedChallenges } from '../accounts/passkey-challenges.js';
import { endExpiredSuperAccess } from './admin-changes.js';
import { blockIdleAccounts } from '../accounts/login-rule.js';
import type { Job } from '../jobs/job.js';

/**
 * Blocks active accounts without a login for USER_INACTIVE_TIMEOUT_DAY days, with an audit event
 * each, by the account rule (accounts/login-rule.ts): never the last active administrator.
 */
export const blockInactiveAccounts: Job = {
  name: 'block-inactive-accounts',
  run: async (scope) => ({ blocked: await blockIdleAccounts(scope) }),
};

/** Clears ended super-access, with its audit event (the access itself ends on time regardless). */
export const endSuperAccess: Job = {
  name: 'end-super-access',
  run: async ({ db, now }) => void (await endExpiredSuperAccess(db, now())),
};

/** Forgets old login attempts and expired locks, and passkey challenges that can no longer be answered. */
export const purgeLoginThrottle: Job = {
  name: 'purge-login-throttle',
  run: async ({ db, now: clock }) => {
    const now = clock();
    await purgeThrottle(db, now);
    await purgeUsedChallenges(db, now);
  },
};

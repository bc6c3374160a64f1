/** Periodic security jobs: inactivity blocking (DESIGN.md §5) and throttle housekeeping. */
import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import { auditInsertWhen } from '../audit/events.js';
import { purgeThrottle } from '../auth/throttle.js';
import { DAY_MS } from '../users/model.js';
import { endExpiredSuperAccess } from '../users/accounts.js';
import { endSessionsStatement } from '../sessions/store.js';
import { users } from '../../../schema/index.js';
import type { Job } from './index.js';

/** Blocks active accounts without a login for USER_INACTIVE_TIMEOUT_DAY days, with an audit event each. */
export const blockInactiveAccounts: Job = {
  name: 'block-inactive-accounts',
  async run({ db, config, now }) {
    const cutoff = now - config.get('USER_INACTIVE_TIMEOUT_DAY') * DAY_MS;
    const inactive = and(eq(users.status, 'active'), isNull(users.deletedAt), lt(sql`coalesce(${users.lastActivityAt}, ${users.createdAt})`, cutoff));
    const stale = await db.select({ id: users.id, login: users.login }).from(users).where(inactive).limit(500);
    for (const u of stale) {
      // Audit first (conditioned on the account still being stale), then the block, in one batch.
      await db.batch([
        auditInsertWhen(db, now, { stream: 'user_activity', type: 'account.blocked', subject: u, data: { reason: 'inactivity', by: 'job' } }, sql`exists (select 1 from ${users} where ${and(eq(users.id, u.id), inactive)})`),
        db.update(users).set({ status: 'blocked', blockedReason: 'inactivity', updatedAt: now }).where(and(eq(users.id, u.id), inactive)),
        // A block ends the sessions for good, whoever blocks (README, "What ends what").
        endSessionsStatement(db, u.id, now, 'block', {
          when: sql`exists (select 1 from ${users} where id = ${u.id} and status = 'blocked' and updated_at = ${now})`,
        }),
      ]);
    }
  },
};

/** Clears ended super-access, with its audit event (the access itself ends on time regardless). */
export const endSuperAccess: Job = {
  name: 'end-super-access',
  run: async ({ db, now }) => void (await endExpiredSuperAccess(db, now)),
};

/** Forgets old login attempts and expired locks. */
export const purgeLoginThrottle: Job = {
  name: 'purge-login-throttle',
  run: ({ db, now }) => purgeThrottle(db, now),
};

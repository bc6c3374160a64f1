import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Leases of periodic jobs (architecture.md §4): a job runs only while its row names this run as the
 * holder and `until` lies ahead, so two hosts, two cron firings or a Node scheduler and an edge cron
 * firing at once do the work once. A crashed holder's lease simply expires.
 */
export const jobLeases = sqliteTable('job_leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  until: integer('until').notNull(),
  /** The last completed run: when, how long, what it did (JSON), or its error. */
  lastRunAt: integer('last_run_at'),
  lastDurationMs: integer('last_duration_ms'),
  lastResult: text('last_result'),
  /** Completed runs and failed runs, on any instance (the metrics' job counters, architecture.md §7). */
  runCount: integer('run_count').notNull().default(0),
  failureCount: integer('failure_count').notNull().default(0),
});

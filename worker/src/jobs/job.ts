/**
 * The shape of a periodic job. Capabilities declare their jobs against it; jobs/index.ts lists and
 * runs them (a module of its own, so that declaring a job never imports the runner: no cycle).
 */
import type { Scope } from '../http/scope.js';

/** A periodic job. */
export interface Job {
  name: string;
  /** How long a run may hold the job's lease (default 5 minutes); past it another run may start. */
  leaseMs?: number;
  /** Least time between two runs, whoever fires the schedule (default 5 minutes). */
  everyMs?: number;
  /** Runs once with the scope of the run (http/scope.ts: no request); may return counts for its log line. */
  run(scope: Scope): Promise<void | Record<string, number>>;
}

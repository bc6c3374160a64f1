/**
 * The shape of a periodic job. Capabilities declare their jobs against it; jobs/index.ts lists and
 * runs them (a module of its own, so that declaring a job never imports the runner: no cycle).
 */
import type { BridgeClient } from '../bridge/client.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { MailOutbox } from '../http/context.js';
import type { Logger } from '../http/logger.js';
import type { Db } from '../store/index.js';

/** What a job gets for one run. */
export interface JobContext {
  db: Db;
  config: ConfigSnapshot;
  now: number;
  logger: Logger;
  /** The on-prem bridge (log store, mail), when one is configured. */
  bridge?: BridgeClient;
  /** The development outbox (Node host), where mail goes while no mail server is configured. */
  mailOutbox?: MailOutbox;
}

/** A periodic job. */
export interface Job {
  name: string;
  /** How long a run may hold the job's lease (default 5 minutes); past it another run may start. */
  leaseMs?: number;
  /** Least time between two runs, whoever fires the schedule (default 5 minutes). */
  everyMs?: number;
  /** Runs once; may return counts for the log line of the run. */
  run(ctx: JobContext): Promise<void | Record<string, number>>;
}

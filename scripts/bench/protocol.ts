/**
 * What the orchestrator (load.ts) and the load process (load-worker.ts) exchange: the job, through
 * the BENCH_JOB environment variable; the MEASURING line when the warm-up is over; the result, as
 * one JSON line. Kept free of imports so the load process loads nothing of the service.
 */

/** Written on its own line when the measured part of a job starts. */
export const MEASURING = 'MEASURING';

/**
 * Closed-loop load with autocannon (each connection sends its next request on the answer): warm-up, then the measured
 * run.
 */
export interface LoadJob {
  kind: 'load';
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /**
   * A mix instead of one request: each connection sends these in turn, over and over (autocannon's
   * `requests`; `path` is the absolute path on the url's origin). The soak scenario's traffic.
   */
  requests?: Array<{ method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string }>;
  /** Connection i adds (or overrides) `perConnection[i % length]` to `headers`: a client of its own each. */
  perConnection?: Array<Record<string, string>>;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export interface LoadResult {
  /** responses per second over the measured run */
  requestsPerSec: number;
  /** responses received in the measured run */
  responses: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** connection errors and timeouts (no response at all) */
  errors: number;
  /** count per status code, e.g. { "200": 1234 } */
  statusCodes: Record<string, number>;
  /** CPU of the load process itself during the measured run, in percent of one core */
  clientCpuPercent: number;
}

/** Sequential requests on one keep-alive connection, alternating A and B as A B B A A B B A ... */
export interface TimingJob {
  kind: 'timing';
  url: string;
  method: 'GET' | 'POST';
  /** Authorization header of each A request, and of each B request (same length). */
  a: string[];
  b: string[];
  /** The first `warmupPairs` pairs are made but not reported. */
  warmupPairs: number;
}

export interface TimingSample {
  status: number;
  ms: number;
}

export interface TimingResult {
  a: TimingSample[];
  b: TimingSample[];
}

/**
 * Every header set once per round, `concurrency` requests in flight on keep-alive connections:
 * touches many distinct credentials (e.g. 10,000 sessions) to see what they cost in memory.
 */
export interface SweepJob {
  kind: 'sweep';
  url: string;
  headers: Record<string, string>[];
  concurrency: number;
  rounds: number;
}

export interface SweepResult {
  responses: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  seconds: number;
}

export type Job = LoadJob | TimingJob | SweepJob;

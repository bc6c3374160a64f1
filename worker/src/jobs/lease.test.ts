import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness/app.js';
import { parseEnvironment } from '../config/index.js';
import { jobLeases } from '../../../schema/index.js';
import { runJobs, type Job } from './index.js';
import { acquireLease, countUnleasedRun, releaseLease } from './lease.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('job leases', () => {
  it('of many racers for a free lease exactly one wins; the lease is taken over once it expires', async () => {
    const now = 1_000_000;
    const wins = await Promise.all(
      Array.from({ length: 8 }, (_, i) => acquireLease(t.db, 'race', `h${i}`, now, 60_000)),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
    // The holder crashed (never released): nobody gets it before it expires, the next run after.
    expect(await acquireLease(t.db, 'race', 'late', now + 59_999, 60_000)).toBe(false);
    expect(await acquireLease(t.db, 'race', 'late', now + 60_000, 60_000)).toBe(true);
    const [row] = await t.db.select().from(jobLeases).where(eq(jobLeases.name, 'race'));
    expect(row!.holder).toBe('late');
  });

  it('a release by a holder whose lease was taken over changes nothing', async () => {
    expect(await acquireLease(t.db, 'stale', 'a', 0, 10)).toBe(true);
    expect(await acquireLease(t.db, 'stale', 'b', 10, 1000)).toBe(true);
    await releaseLease(t.db, 'stale', 'a', { at: 10, durationMs: 1, result: '{}' });
    const [row] = await t.db.select().from(jobLeases).where(eq(jobLeases.name, 'stale'));
    expect(row).toMatchObject({ holder: 'b', until: 1010, lastRunAt: null });
  });

  it('two runs of the jobs fired at once (two hosts, one database) do each job once, and log it', async () => {
    let runs = 0;
    const job: Job = {
      name: 'counted',
      async run() {
        runs++;
        await new Promise((r) => setTimeout(r, 50));
        return { done: 1 };
      },
    };
    const lines: string[] = [];
    const { createLogger } = await import('../http/logger.js');
    const logger = createLogger({ threshold: () => 'DEBUG', write: (l) => lines.push(l) });
    const ctx = { db: t.db, config: parseEnvironment({}), now: () => 5_000_000, logger };
    await Promise.all([runJobs(ctx, [job]), runJobs(ctx, [job])]);
    expect(runs).toBe(1);
    const ran = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'job ran');
    expect(ran).toMatchObject({ level: 'DEBUG', job: 'counted', done: 1, durationMs: expect.any(Number) });
    // A later firing runs it again.
    await runJobs({ ...ctx, now: () => 5_000_000 + 5 * 60_000 }, [job]);
    expect(runs).toBe(2);
  });

  it('counts runs and failures in the lease row, which GET /metrics reads', async () => {
    const { createLogger } = await import('../http/logger.js');
    const { collectScrapeMetrics } = await import('../metrics-route/collect.js');
    const logger = createLogger({ threshold: () => 'CRITICAL', write: () => {} });
    const ctx = { db: t.db, config: parseEnvironment({}), now: () => 9_000_000, logger };
    let fail = false;
    const job: Job = {
      name: 'sometimes-fails',
      everyMs: 0,
      async run() {
        if (fail) throw new Error('boom');
      },
    };
    expect(await runJobs(ctx, [job])).toEqual([]);
    fail = true;
    expect(await runJobs({ ...ctx, now: () => 9_000_000 + 1000 }, [job])).toEqual(['sometimes-fails']);
    const [row] = await t.db.select().from(jobLeases).where(eq(jobLeases.name, 'sometimes-fails'));
    expect(row).toMatchObject({ runCount: 2, failureCount: 1 });
    // A run without the lease (the test-only trigger) is counted too, and leaves the lease alone.
    await countUnleasedRun(t.db, 'sometimes-fails', false);
    await countUnleasedRun(t.db, 'never-leased', true);
    const rendered = (await collectScrapeMetrics({ ...ctx, now: () => 9_000_000 + 2000 })).render();
    expect(rendered).toContain('auth_job_runs_total{job="sometimes-fails"} 3');
    expect(rendered).toContain('auth_job_failures_total{job="sometimes-fails"} 1');
    expect(rendered).toContain('auth_job_failures_total{job="never-leased"} 1');
    expect(await acquireLease(t.db, 'never-leased', 'h', ctx.now(), 1000)).toBe(true);
  });
});

/**
 * POST ROOT_PATH/__test__/jobs {names}: runs the named jobs once, now, with the service's (test)
 * clock, so the HTTP suites test time-dependent jobs (retention, expiry notices) on both hosts.
 * Registered only with AUTH_TEST_CLOCK_CONTROL, like the test clock; hidden from the OpenAPI docs.
 */
import { z } from 'zod';
import type { App } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { JOBS } from './index.js';
import { countUnleasedRun } from '../jobs/lease.js';

const Body = z.object({ names: z.array(z.string()).min(1) });

/** Registers the test-only job trigger. */
export function registerTestJobs(app: App): void {
  app.post('/__test__/jobs', async (c) => {
    const parsed = Body.safeParse(await c.req.json().catch(() => undefined));
    const unknown = parsed.success ? parsed.data.names.filter((n) => !JOBS.some((j) => j.name === n)) : [];
    if (!parsed.success || unknown.length > 0) {
      throw new ProblemError('VALIDATION', {
        detail: `expected {"names": [job names]}; known: ${JOBS.map((j) => j.name).join(', ')}`,
      });
    }
    const scope = c.var.scope;
    const results: Record<string, unknown> = {};
    // The jobs in their registered order, without leases: the test decides when they run.
    // Each run is counted (job runs and failures of GET /metrics), a failed one too before it throws.
    for (const job of JOBS.filter((j) => parsed.data.names.includes(j.name))) {
      try {
        results[job.name] = (await job.run(scope)) ?? {};
      } catch (err) {
        await countUnleasedRun(scope.db, job.name, true);
        throw err;
      }
      await countUnleasedRun(scope.db, job.name, false);
    }
    return c.json(results);
  });
}

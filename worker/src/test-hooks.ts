/**
 * Every route of ROOT_PATH/__test__/*, the hooks the HTTP suites drive a running host with (both
 * hosts), registered in one place and only when AUTH_TEST_CLOCK_CONTROL is true, which production
 * never sets; hidden from the OpenAPI docs (docs/testing.md, "Test hooks"):
 *
 * - POST /__test__/clock {offsetMs} moves the service clock (GET reads it), so time-dependent rules
 *   (lockout windows, inactivity, password expiry) are tested end to end;
 * - POST /__test__/jobs {names} runs the named jobs once, now, with that clock (retention, expiry
 *   notices);
 * - POST /__test__/audit-events {events} writes events into the audit outbox as they are (their own
 *   ids and times), so the suites give the embedded audit log the events they seed into the test log
 *   store (docs/audit-logs-embedded.md);
 * - GET /__test__/credential-lookups counts the token and session lookups that reached the database
 *   (store/credential-cache.ts).
 *
 * It sits beside app.ts, above every folder (architecture.md §2), since it reaches into several.
 */
import { inArray } from 'drizzle-orm';
import { z } from 'zod';
import { auditOutbox } from '../../schema/index.js';
import { sessionLookups } from './accounts/sessions.js';
import { tokenLookups } from './accounts/tokens.js';
import type { App } from './http/context.js';
import { ProblemError } from './http/problem.js';
import { countUnleasedRun } from './jobs/lease.js';
import { STREAMS } from './logs/streams.js';
import { JOBS } from './schedule/index.js';

export interface TestClock {
  now: () => number;
  offsetMs: number;
}

/** A clock `offsetMs` ahead of `base`. */
export function createTestClock(base: () => number): TestClock {
  const clock: TestClock = { offsetMs: 0, now: () => base() + clock.offsetMs };
  return clock;
}

const ClockBody = z.object({ offsetMs: z.number().int() });
const JobsBody = z.object({ names: z.array(z.string()).min(1) });
const StreamName = z.enum(Object.keys(STREAMS) as [keyof typeof STREAMS]);
const AuditEvent = z.object({
  id: z.string().min(1),
  at: z.number().int(),
  stream: StreamName,
  type: z.string().min(1),
  outcome: z.enum(['success', 'failure']).nullable().optional(),
  actorLogin: z.string().optional(),
  subjectLogin: z.string().optional(),
  sourceIp: z.string().optional(),
});
const AuditEventsBody = z.object({
  events: z.array(AuditEvent).min(1).max(5_000),
  /** Deletes the events of these streams first (the service's own), so a suite knows what is there. */
  replace: z.array(StreamName).optional(),
});

/** Registers every test hook on `app` (the routes below ROOT_PATH), moving `clock`. */
export function registerTestHooks(app: App, clock: TestClock): void {
  const clockAnswer = () => ({ offsetMs: clock.offsetMs, now: new Date(clock.now()).toISOString() });
  app.post('/__test__/clock', async (c) => {
    const parsed = ClockBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) throw new ProblemError('VALIDATION', { detail: 'expected {"offsetMs": integer}' });
    clock.offsetMs = parsed.data.offsetMs;
    return c.json(clockAnswer());
  });
  app.get('/__test__/clock', (c) => c.json(clockAnswer()));

  app.post('/__test__/jobs', async (c) => {
    const parsed = JobsBody.safeParse(await c.req.json().catch(() => undefined));
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

  app.post('/__test__/audit-events', async (c) => {
    const parsed = AuditEventsBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) throw new ProblemError('VALIDATION', { detail: 'expected {"events": [outbox events]}' });
    const db = c.var.scope.db;
    if (parsed.data.replace?.length)
      await db.delete(auditOutbox).where(inArray(auditOutbox.stream, parsed.data.replace));
    const rows = parsed.data.events.map((e) => ({ ...e, outcome: e.outcome ?? null, handledAt: e.at }));
    for (let i = 0; i < rows.length; i += 200) await db.insert(auditOutbox).values(rows.slice(i, i + 200));
    return c.json({ written: rows.length });
  });

  app.get('/__test__/credential-lookups', (c) => c.json({ tokens: tokenLookups(), sessions: sessionLookups() }));
}

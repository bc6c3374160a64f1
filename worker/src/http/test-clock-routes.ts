/**
 * A clock the test suites can move on a running host (both hosts, so time-dependent rules such as
 * lockout windows, inactivity and password expiry are tested end to end). Registered only when
 * AUTH_TEST_CLOCK_CONTROL is true, which production never sets; hidden from the OpenAPI docs.
 */
import { z } from 'zod';
import type { App } from './context.js';
import { ProblemError } from './problem.js';

export interface TestClock {
  now: () => number;
  offsetMs: number;
}

/** A clock `offsetMs` ahead of `base`. */
export function createTestClock(base: () => number): TestClock {
  const clock: TestClock = { offsetMs: 0, now: () => base() + clock.offsetMs };
  return clock;
}

const Body = z.object({ offsetMs: z.number().int() });

/** POST /__test__/clock {offsetMs}: sets the offset; GET returns it. */
export function registerTestClock(app: App, clock: TestClock): void {
  app.post('/__test__/clock', async (c) => {
    const parsed = Body.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) throw new ProblemError('VALIDATION', { detail: 'expected {"offsetMs": integer}' });
    clock.offsetMs = parsed.data.offsetMs;
    return c.json({ offsetMs: clock.offsetMs, now: new Date(clock.now()).toISOString() });
  });
  app.get('/__test__/clock', (c) => c.json({ offsetMs: clock.offsetMs, now: new Date(clock.now()).toISOString() }));
}

/**
 * POST ROOT_PATH/__test__/audit-events {events}: writes the given events into the audit outbox as
 * they are (their own ids and times), so the HTTP suites give the embedded audit log the same events
 * they seed into the test log store (docs/audit-logs-embedded.md). Registered only with
 * AUTH_TEST_CLOCK_CONTROL, like the test clock; hidden from the OpenAPI docs.
 */
import { inArray } from 'drizzle-orm';
import { z } from 'zod';
import { auditOutbox } from '../../../schema/index.js';
import type { App } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { STREAMS } from './streams.js';

const Event = z.object({
  id: z.string().min(1),
  at: z.number().int(),
  stream: z.enum(Object.keys(STREAMS) as [keyof typeof STREAMS]),
  type: z.string().min(1),
  outcome: z.enum(['success', 'failure']).nullable().optional(),
  actorLogin: z.string().optional(),
  subjectLogin: z.string().optional(),
  sourceIp: z.string().optional(),
});
const Body = z.object({
  events: z.array(Event).min(1).max(5_000),
  /** Deletes the events of these streams first (the service's own), so a suite knows what is there. */
  replace: z.array(z.enum(Object.keys(STREAMS) as [keyof typeof STREAMS])).optional(),
});

/** Registers the test-only audit event writer. */
export function registerTestAuditEvents(app: App): void {
  app.post('/__test__/audit-events', async (c) => {
    const parsed = Body.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) throw new ProblemError('VALIDATION', { detail: 'expected {"events": [outbox events]}' });
    if (parsed.data.replace?.length)
      await c.var.scope.db.delete(auditOutbox).where(inArray(auditOutbox.stream, parsed.data.replace));
    const rows = parsed.data.events.map((e) => ({ ...e, outcome: e.outcome ?? null, handledAt: e.at }));
    for (let i = 0; i < rows.length; i += 200) await c.var.scope.db.insert(auditOutbox).values(rows.slice(i, i + 200));
    return c.json({ written: rows.length });
  });
}

import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness/app.js';
import { auditOutbox, auditStoreSize } from '../../../schema/index.js';
import { parseEnvironment } from '../config/index.js';
import { createLogger } from '../http/logger.js';
import { auditStoreState, boundAuditStore, ROW_OVERHEAD_BYTES, TRIM_TO } from './size-bound.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const MB = 1024 * 1024;
const NOW = Date.parse('2026-11-27T00:00:00Z');
const lines: string[] = [];
const logger = createLogger({ threshold: () => 'DEBUG', write: (l) => lines.push(l) });
/** An event of about 10 KB (its User-Agent: the row's text counts, whatever the column). */
const big = (i: number, o: Partial<typeof auditOutbox.$inferInsert> = {}) => ({
  id: `big-${String(i).padStart(4, '0')}`,
  at: NOW - 1_000_000 + i,
  stream: 'user_activity',
  type: 'login.failure',
  userAgent: 'x'.repeat(10_000),
  handledAt: NOW - 1_000_000,
  ...o,
});
const rowBytes = 10_000 + 'big-0000'.length + 'user_activity'.length + 'login.failure'.length + ROW_OVERHEAD_BYTES;
const trimmed = () => t.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'outbox.trimmed'));

describe('the size bound of the audit outbox (AUDIT_LOCAL_MAX_MB, OUTBOX_DELIVERED_MAX_MB)', () => {
  it('without a log store: past AUDIT_LOCAL_MAX_MB the oldest go first, down to 90 %, and it says so', async () => {
    const rows = Array.from({ length: 150 }, (_, i) => big(i)); // about 1.5 MB
    for (let i = 0; i < rows.length; i += 50) await t.db.insert(auditOutbox).values(rows.slice(i, i + 50));
    await t.db.insert(auditOutbox).values(big(999, { id: 'unhandled', at: NOW - 2_000_000, handledAt: null }));
    const config = parseEnvironment({ AUTH_AUDIT_LOCAL_MAX_MB: '1' });
    const r = await boundAuditStore.run({ db: t.db, config, now: () => NOW, logger });
    const keep = Math.floor((TRIM_TO * MB) / rowBytes); // rows left under 90 % of 1 MB
    expect(r).toMatchObject({ trimmed: 150 - keep, maxBytes: MB });
    const left = (await t.db.select({ id: auditOutbox.id }).from(auditOutbox)).map((x) => x.id).sort();
    // The newest stay, and the event the notification handlers have not seen yet.
    expect(left.filter((id) => id.startsWith('big-'))).toEqual(rows.slice(150 - keep).map((x) => x.id));
    expect(left).toContain('unhandled');
    const [event] = await trimmed();
    expect(event).toMatchObject({ stream: 'data_lifecycle', outcome: null });
    expect(event!.data).toEqual({
      events: 150 - keep,
      bytes: (150 - keep) * rowBytes,
      maxMB: 1,
      store: 'local',
      from: new Date(rows[0]!.at).toISOString(),
      to: new Date(rows[149 - keep]!.at).toISOString(),
    });
    // The measure, for GET /metrics and the overview: under the bound, but over 80 % of it.
    const state = await auditStoreState(t.db, config);
    expect(state).toMatchObject({ store: 'local', maxBytes: MB, warning: true, measuredAt: NOW });
    expect(state!.bytes).toBeLessThanOrEqual(TRIM_TO * MB);
    expect(state!.bytes).toBeGreaterThan(0.8 * MB);
    expect(lines.some((l) => l.includes('audit store over its size bound'))).toBe(true);

    // Under the bound, a run deletes nothing and records nothing.
    const again = await boundAuditStore.run({ db: t.db, config, now: () => NOW + 1, logger });
    expect(again).toMatchObject({ trimmed: 0 });
    expect(await trimmed()).toHaveLength(1);
  });

  it('with a log store: only delivered events count and go; undelivered ones and dead letters never', async () => {
    await t.db.delete(auditOutbox);
    await t.db.delete(auditStoreSize);
    const delivered = Array.from({ length: 120 }, (_, i) => big(i, { shippedAt: NOW - 1_000 }));
    const waiting = Array.from({ length: 120 }, (_, i) => big(i + 1_000, { id: `wait-${i}`, at: NOW - 5_000_000 + i }));
    const dead = big(2_000, { id: 'dead', at: NOW - 9_000_000, deadAt: NOW - 1_000 });
    for (const list of [delivered, waiting])
      for (let i = 0; i < list.length; i += 50) await t.db.insert(auditOutbox).values(list.slice(i, i + 50));
    await t.db.insert(auditOutbox).values(dead);
    const config = parseEnvironment({
      LOGSTORE_URLS: 'https://store.example:9200',
      AUTH_OUTBOX_DELIVERED_MAX_MB: '1',
    });
    const r = (await boundAuditStore.run({ db: t.db, config, now: () => NOW, logger })) as Record<string, number>;
    expect(r.trimmed).toBeGreaterThan(0);
    const ids = (await t.db.select({ id: auditOutbox.id }).from(auditOutbox)).map((x) => x.id);
    for (const w of waiting) expect(ids).toContain(w.id);
    expect(ids).toContain('dead');
    // The oldest delivered went.
    expect(ids).not.toContain(delivered[0]!.id);
    expect(ids).toContain(delivered[119]!.id);
    const [event] = await trimmed();
    expect(event!.data).toMatchObject({ store: 'delivered', maxMB: 1, events: r.trimmed });
    const state = await auditStoreState(t.db, config);
    expect(state).toMatchObject({ store: 'delivered', maxBytes: MB });
    expect(state!.outboxBytes).toBeGreaterThan(state!.bytes + 100 * rowBytes);
  });

  it('the estimate follows what SQLite stores (within 25 %, dbstat of the table and its indexes)', async () => {
    await t.db.delete(auditOutbox);
    const rows = Array.from({ length: 400 }, (_, i) => ({
      id: crypto.randomUUID(),
      at: NOW + i,
      stream: 'user_activity',
      type: 'login.failure',
      actorLogin: `user-${i}`,
      requestId: crypto.randomUUID(),
      sourceIp: '203.0.113.9',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      host: 'node-1',
      data: { source: 'local', reason: 'x'.repeat(i % 300) },
      handledAt: NOW,
    }));
    for (let i = 0; i < rows.length; i += 100) await t.db.insert(auditOutbox).values(rows.slice(i, i + 100));
    const config = parseEnvironment({});
    await boundAuditStore.run({ db: t.db, config, now: () => NOW, logger });
    const state = await auditStoreState(t.db, config);
    const [stat] = await t.db.all<{ bytes: number }>(
      sql`select sum(pgsize - unused) as bytes from dbstat where name like 'audit_outbox%'`,
    );
    expect(state!.bytes / stat!.bytes).toBeGreaterThan(0.75);
    expect(state!.bytes / stat!.bytes).toBeLessThan(1.25);
  });
});

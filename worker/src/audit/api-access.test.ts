import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness/app.js';
import { auditOutbox } from '../../../schema/index.js';
import { batchEventIds, createApiAccessRecorder, outboxEvents, type ApiAccessEvent } from './api-access.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const event = (n: number, at = 1_000): ApiAccessEvent => ({
  at,
  user: { id: `u${n}`, login: `user${n}` },
  method: n % 2 ? 'basic' : 'bearer',
  httpMethod: 'GET',
  path: '/api/auth/v4/users/me',
  status: n === 3 ? 401 : 200,
  requestId: `r${n}`,
  sourceIp: '10.1.2.3',
  userAgent: 'curl/8',
  ...(n % 2 ? {} : { tokenId: `t${n}` }),
});
const apiRows = () => t.db.select().from(auditOutbox).where(eq(auditOutbox.stream, 'api_access'));
/** The events of the API-access rows, one per request (a row holds a batch). */
const apiEvents = async () => (await apiRows()).flatMap(outboxEvents);

describe('API-access recorder', () => {
  it('writes nothing per request: a batch is written as one row when it is full or old enough', async () => {
    const clock = { now: 0 };
    const started: Promise<unknown>[] = [];
    const rec = createApiAccessRecorder({
      db: () => t.db,
      host: 'node-1',
      maxEvents: 5,
      maxDelayMs: 1_000,
      clock: () => clock.now,
    });
    for (let n = 0; n < 4; n++) rec.record(event(n), (work) => started.push(work()));
    expect(started).toHaveLength(0);
    expect(rec.pending()).toBe(4);
    expect(await apiRows()).toHaveLength(0);
    rec.record(event(4), (work) => started.push(work()));
    expect(started).toHaveLength(1);
    await Promise.all(started);
    expect(await apiRows()).toMatchObject([{ events: 5, type: 'api.request', host: 'node-1', handledAt: 1_000 }]);
    const rows = await apiEvents();
    expect(rows).toHaveLength(5);
    expect(rows.find((r) => r.requestId === 'r3')).toMatchObject({
      outcome: 'failure',
      actorLogin: 'user3',
      sourceIp: '10.1.2.3',
      userAgent: 'curl/8',
      host: 'node-1',
      type: 'api.request',
    });
    expect(rows.find((r) => r.requestId === 'r0')!.data).toEqual({
      method: 'bearer',
      httpMethod: 'GET',
      path: '/api/auth/v4/users/me',
      status: 200,
      tokenId: 't0',
    });
    // Age: one event, then another a second later, flushes both.
    rec.record(event(10), (work) => started.push(work()));
    clock.now += 1_000;
    rec.record(event(11), (work) => started.push(work()));
    await Promise.all(started);
    expect(await apiRows()).toHaveLength(2);
    expect(await apiEvents()).toHaveLength(7);
    expect(rec.pending()).toBe(0);
  });

  it('flush() writes the rest (shutdown); a failed write is reported with what was lost', async () => {
    const rec = createApiAccessRecorder({ db: () => t.db, host: 'h', maxEvents: 10_000 });
    for (let n = 0; n < 1_200; n++) rec.record(event(n + 100), () => {});
    await rec.flush();
    expect((await apiEvents()).length).toBe(7 + 1_200);
    // 500 events per row at most: 500 + 500 + 200.
    expect((await apiRows()).slice(2).map((r) => r.events)).toEqual([500, 500, 200]);
    const lost: number[] = [];
    const broken = createApiAccessRecorder({
      db: () => {
        throw new Error('database gone');
      },
      host: 'h',
      onError: (_e, n) => lost.push(n),
    });
    broken.record(event(1), () => {});
    await broken.flush();
    expect(lost).toEqual([1]);
  });

  it('writes every event of a batch once, each with its own time-ordered UUID and its own values', async () => {
    const before = (await apiEvents()).length;
    const rec = createApiAccessRecorder({ db: () => t.db, host: 'h', maxEvents: 10_000 });
    for (let n = 0; n < 85; n++) rec.record({ ...event(n + 5_000), requestId: `odd${n}` }, () => {});
    await rec.flush();
    const rows = (await apiEvents()).filter((r) => r.requestId?.startsWith('odd'));
    expect(rows).toHaveLength(85);
    expect((await apiEvents()).length).toBe(before + 85);
    const ids = new Set([...rows.map((r) => r.id), ...(await apiRows()).map((r) => r.id)]);
    expect(ids.size).toBe(85 + (await apiRows()).length);
    for (const r of rows) expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (const r of rows) expect(r.actorLogin).toBe(`user${Number(r.requestId!.slice(3)) + 5_000}`);
    const byRequest = new Map(rows.map((r) => [r.requestId, r]));
    expect(byRequest.get('odd84')).toMatchObject({
      actorId: 'u5084',
      actorLogin: 'user5084',
      at: 1_000,
      handledAt: 1_000,
      stream: 'api_access',
      type: 'api.request',
      host: 'h',
      events: 1,
    });
  });

  it('outboxEvents: a row of one event is itself', async () => {
    const [row] = await apiRows();
    const single = { ...row!, stream: 'user_activity', data: { events: 3 }, events: 1 };
    expect(outboxEvents(single)).toEqual([single]);
    expect(outboxEvents(single)[0]).toBe(single);
  });

  it('event ids: ordered by time, then by sequence within a batch, and unique across batches', () => {
    const a = batchEventIds(1_764_000_000_000);
    const first = Array.from({ length: 20_000 }, () => a());
    expect([...first].sort()).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
    const b = batchEventIds(1_764_000_000_000);
    expect(b()).not.toBe(first[0]);
    const later = batchEventIds(1_764_000_000_001)();
    expect(later > first[first.length - 1]!).toBe(true);
  });
});

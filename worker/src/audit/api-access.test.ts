import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness/app.js';
import { auditOutbox } from '../../../schema/index.js';
import { createApiAccessRecorder, outboxEvents, type ApiAccessEvent } from './api-access.js';
import { batchEventIds, eventId } from './events.js';
import { toLogDocument } from '../logs/document.js';
import { localSearch } from '../logs/local-store.js';

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

describe('API-access recorder, one event per request (AUDIT_API_ACCESS_WINDOW_SEC=0)', () => {
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
    for (let n = 0; n < 4; n++) rec.record(event(n), (work) => started.push(work()), 0);
    expect(started).toHaveLength(0);
    expect(rec.pending()).toBe(4);
    expect(await apiRows()).toHaveLength(0);
    rec.record(event(4), (work) => started.push(work()), 0);
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
    rec.record(event(10), (work) => started.push(work()), 0);
    clock.now += 1_000;
    rec.record(event(11), (work) => started.push(work()), 0);
    await Promise.all(started);
    expect(await apiRows()).toHaveLength(2);
    expect(await apiEvents()).toHaveLength(7);
    expect(rec.pending()).toBe(0);
  });

  it('flush() writes the rest (shutdown); a failed write is reported with what was lost', async () => {
    const rec = createApiAccessRecorder({ db: () => t.db, host: 'h', maxEvents: 10_000 });
    for (let n = 0; n < 1_200; n++) rec.record(event(n + 100), () => {}, 0);
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
    broken.record(event(1), () => {}, 0);
    await broken.flush();
    expect(lost).toEqual([1]);
  });

  it('writes every event of a batch once, each with its own time-ordered UUID and its own values', async () => {
    const before = (await apiEvents()).length;
    const rec = createApiAccessRecorder({ db: () => t.db, host: 'h', maxEvents: 10_000 });
    for (let n = 0; n < 85; n++) rec.record({ ...event(n + 5_000), requestId: `odd${n}` }, () => {}, 0);
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

  it("one event's id: a UUIDv7 of its time, ordered by time, unique within a millisecond", () => {
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const same = Array.from({ length: 20_000 }, () => eventId(1_764_000_000_000));
    for (const id of same.slice(0, 100)) expect(id).toMatch(v7);
    expect(same[0]!.replaceAll('-', '').slice(0, 12)).toBe((1_764_000_000_000).toString(16).padStart(12, '0'));
    expect(new Set(same).size).toBe(same.length);
    const later = eventId(1_764_000_000_001);
    expect(same.every((id) => id < later)).toBe(true);
  });
});

describe('API-access recorder: successful reads aggregated per window', () => {
  const WINDOW = 60_000;
  const T0 = 1_764_000_000_000; // a minute's start
  const read = (at: number, o: Partial<ApiAccessEvent> = {}): ApiAccessEvent => ({
    at,
    user: { id: 'agg-u1', login: 'agg-user' },
    method: 'bearer',
    httpMethod: 'GET',
    path: '/api/auth/v4/users/me',
    status: 200,
    requestId: `agg-r${at}`,
    sourceIp: '10.9.8.7',
    userAgent: 'client/2',
    tokenId: 'agg-token',
    ...o,
  });
  const aggRows = async () => (await apiRows()).filter((r) => Array.isArray(r.data?.aggregates));
  const aggEvents = async () => (await aggRows()).flatMap(outboxEvents);

  it('a steady client is one event per window with count, first and last: at most 30 bytes per request', async () => {
    const clock = { now: T0 };
    const started: Promise<unknown>[] = [];
    const rec = createApiAccessRecorder({ db: () => t.db, host: 'node-1', clock: () => clock.now });
    const bg = (work: () => Promise<unknown>) => started.push(work());
    const N = 10_000;
    for (let i = 0; i < N; i++) {
      clock.now = T0 + Math.floor((i * WINDOW) / N);
      rec.record(read(clock.now), bg, WINDOW);
    }
    expect(rec.pending()).toBe(1);
    // Nothing is due while the window lasts: the timer's flushDue writes nothing.
    await rec.flushDue();
    await Promise.all(started);
    expect(await aggRows()).toHaveLength(0);
    // The first request of the next window writes the ended one, after the response.
    clock.now = T0 + WINDOW;
    rec.record(read(clock.now), bg, WINDOW);
    expect(started).toHaveLength(1);
    await Promise.all(started);
    const rows = await aggRows();
    expect(rows).toMatchObject([{ events: 1, type: 'api.request', stream: 'api_access', at: T0, handledAt: T0 }]);
    const [e] = await aggEvents();
    expect(e).toMatchObject({
      type: 'api.request',
      at: T0,
      actorId: 'agg-u1',
      actorLogin: 'agg-user',
      requestId: `agg-r${T0}`,
      sourceIp: '10.9.8.7',
      userAgent: 'client/2',
      outcome: 'success',
      host: 'node-1',
    });
    expect(e!.data).toEqual({
      method: 'bearer',
      httpMethod: 'GET',
      path: '/api/auth/v4/users/me',
      status: 200,
      tokenId: 'agg-token',
      count: N,
      first: new Date(T0).toISOString(),
      last: new Date(T0 + WINDOW - WINDOW / N).toISOString(),
    });
    // Bytes per request: the row as stored, and the document shipped to the log store.
    const row = rows[0]!;
    const stored = JSON.stringify(row.data).length + row.id.length + row.type.length + row.stream.length + 10;
    expect(stored / N).toBeLessThan(30);
    expect(JSON.stringify(toLogDocument(e!)).length / N).toBeLessThan(30);
    await rec.flush();
  });

  it('refusals and writes stay one event each; other keys are other aggregates', async () => {
    const before = (await apiEvents()).length;
    const clock = { now: T0 + 10 * WINDOW };
    const rec = createApiAccessRecorder({ db: () => t.db, host: 'h', clock: () => clock.now });
    const at = clock.now;
    const none = () => {};
    rec.record(read(at, { requestId: 'k-1' }), none, WINDOW);
    rec.record(read(at + 1, { requestId: 'k-2' }), none, WINDOW);
    rec.record(read(at + 2, { requestId: 'k-ip', sourceIp: '10.0.0.99' }), none, WINDOW);
    rec.record(read(at + 3, { requestId: 'k-token', tokenId: 'other-token' }), none, WINDOW);
    rec.record(read(at + 4, { requestId: 'k-path', path: '/api/auth/v4/users/u2' }), none, WINDOW);
    rec.record(read(at + 5, { requestId: 'k-304', status: 304 }), none, WINDOW);
    rec.record(read(at + 6, { requestId: 'k-refused', status: 403 }), none, WINDOW);
    rec.record(read(at + 7, { requestId: 'k-missing', status: 404 }), none, WINDOW);
    rec.record(read(at + 8, { requestId: 'k-write', httpMethod: 'POST', status: 201 }), none, WINDOW);
    rec.record(read(at + 9, { requestId: 'k-delete', httpMethod: 'DELETE', status: 204 }), none, WINDOW);
    await rec.flush();
    const events = (await apiEvents()).slice(before);
    const byRequest = new Map(events.map((e) => [e.requestId, e]));
    expect(events).toHaveLength(9);
    expect(byRequest.get('k-1')!.data).toMatchObject({ count: 2 });
    expect(byRequest.has('k-2')).toBe(false);
    for (const id of ['k-ip', 'k-token', 'k-path', 'k-304'])
      expect(byRequest.get(id)!.data).toMatchObject({ count: 1 });
    for (const id of ['k-refused', 'k-missing', 'k-write', 'k-delete']) {
      expect(byRequest.get(id)!.data).not.toHaveProperty('count');
      expect(byRequest.get(id)!.type).toBe('api.request');
    }
    expect(byRequest.get('k-refused')!.outcome).toBe('failure');
    expect(byRequest.get('k-write')!.data).toMatchObject({ httpMethod: 'POST', status: 201, tokenId: 'agg-token' });
  });

  it('memory is bounded: past maxAggregates keys, the aggregates are written before their window ends', async () => {
    const clock = { now: T0 + 20 * WINDOW };
    const started: Promise<unknown>[] = [];
    const rec = createApiAccessRecorder({ db: () => t.db, host: 'h', clock: () => clock.now, maxAggregates: 50 });
    const before = (await aggEvents()).length;
    for (let i = 0; i < 49; i++) rec.record(read(clock.now, { path: `/walk/${i}` }), (w) => started.push(w()), WINDOW);
    expect(started).toHaveLength(0);
    rec.record(read(clock.now, { path: '/walk/49' }), (w) => started.push(w()), WINDOW);
    expect(started).toHaveLength(1);
    await Promise.all(started);
    expect(rec.pending()).toBe(0);
    expect((await aggEvents()).length - before).toBe(50);
  });

  it('the embedded audit log answers "what did this token do, from where, when" from aggregates', async () => {
    const clock = { now: T0 + 30 * WINDOW };
    const rec = createApiAccessRecorder({ db: () => t.db, host: 'h', clock: () => clock.now });
    for (let i = 0; i < 7; i++) rec.record(read(clock.now + i, { tokenId: 'search-token' }), () => {}, WINDOW);
    await rec.flush();
    const answer = (await localSearch(
      t.db,
      'api_access',
      'svc-sec-api-access-*',
      {
        query: {
          bool: {
            filter: [
              { term: { 'data.tokenId': 'search-token' } },
              { term: { 'source.ip': '10.9.8.7' } },
              { term: { 'actor.login': 'agg-user' } },
              { range: { '@timestamp': { gte: T0 + 30 * WINDOW, lt: T0 + 31 * WINDOW } } },
            ],
          },
        },
      },
      clock.now,
    )) as { hits: { total: { value: number }; hits: Array<{ _source: Record<string, unknown> }> } };
    expect(answer.hits.total.value).toBe(1);
    expect(answer.hits.hits[0]!._source).toMatchObject({
      event: { type: 'api.request', stream: 'api_access', outcome: 'success' },
      source: { ip: '10.9.8.7' },
      data: { tokenId: 'search-token', count: 7, path: '/api/auth/v4/users/me' },
    });
  });
});

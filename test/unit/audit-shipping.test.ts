/**
 * Shipping the audit outbox to the log store, exactly once in effect: the real shipper, the real
 * bridge plugin (in-process, through Fastify's inject) and the real @opensearch-project/opensearch
 * client, against the test log store (test/harness/logstore: a protocol-level stand-in, since no
 * OpenSearch or Elasticsearch can be installed here).
 */
import { asc, eq, isNull } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildBridge } from '../../ldap-bridge/src/app.js';
import { auditOutbox } from '../../schema/index.js';
import { auditInsert, type AuditEventType, type AuditStream } from '../../worker/src/audit/events.js';
import { createBridgeClient, type BridgeClient, type BridgeFetch } from '../../worker/src/bridge/client.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { shipOutbox } from '../../worker/src/logs/shipper.js';
import { streamPipelines } from '../../worker/src/logs/pipeline.js';
import { createApiAccessRecorder, outboxEvents } from '../../worker/src/audit/api-access.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';

let t: TestApp;
let store: TestLogStore;
let bridgeApp: FastifyInstance;
/** Switches of the transport between worker and bridge. */
const link = { down: false, loseAnswers: 0 };

const transport: BridgeFetch = async (path, { timeoutMs: _t, ...init }) => {
  if (link.down) throw new TypeError('fetch failed: connect ECONNREFUSED');
  const res = await bridgeApp.inject({
    method: 'POST',
    url: path,
    payload: String(init.body),
    headers: { 'content-type': 'application/json' },
  });
  if (link.loseAnswers > 0) {
    // The store did the work; its answer is lost on the way back.
    link.loseAnswers--;
    throw new TypeError('fetch failed: socket hang up');
  }
  return new Response(res.body, {
    status: res.statusCode,
    headers: { 'content-type': String(res.headers['content-type']) },
  });
};
let bridge: BridgeClient;

const DAY = 86_400_000;
const T0 = Date.parse('2026-11-26T10:00:00.000Z');

beforeAll(async () => {
  t = await createTestApp();
  store = await startTestLogStore({ nodes: 2 });
  bridgeApp = buildBridge({ logstore: { ca: store.caPem } });
  await bridgeApp.ready();
  bridge = createBridgeClient(transport);
});
afterAll(async () => {
  await bridgeApp.close();
  await store.stop();
  t.close();
});
beforeEach(async () => {
  store.reset();
  link.down = false;
  link.loseAnswers = 0;
  await t.db.delete(auditOutbox);
});

const config = (env: Record<string, string> = {}) =>
  parseEnvironment({
    LOGSTORE_URLS: store.urls.join(';'),
    LOGSTORE_VERIFY_CERTS: 'True',
    LOGSTORE_TIMEOUT: '2',
    OUTBOX_BATCH_SIZE: '200',
    ...env,
  });
const ship = (now: number, env: Record<string, string> = {}) =>
  shipOutbox({ db: t.db, config: config(env), bridge, now: () => now, random: () => 0.5 });

async function record(stream: AuditStream, n: number, at: number, type: AuditEventType = 'login.success') {
  const inserts = Array.from({ length: n }, (_, i) =>
    auditInsert(t.db, at + i, {
      stream,
      type,
      subject: { id: `u${i}`, login: `user${i}` },
      request: { id: `req-${stream}-${i}`, ip: null, userAgent: null, host: 'test-host' },
      data: { i },
    }),
  );
  for (let i = 0; i < inserts.length; i += 500)
    await t.db.batch(inserts.slice(i, i + 500) as [(typeof inserts)[0], ...typeof inserts]);
}
const undelivered = async () => (await t.db.select().from(auditOutbox).where(isNull(auditOutbox.shippedAt))).length;

describe('shipping the audit outbox', () => {
  it('every stream lands in its dated index under its pattern, in the documented shape', async () => {
    const streams: AuditStream[] = [
      'user_activity',
      'crud_user',
      'crud_admin',
      'api_access',
      'ext_service_access',
      'data_lifecycle',
    ];
    for (const s of streams) await record(s, 2, T0);
    await record('user_activity', 1, T0 + DAY, 'login.failure');
    const r = await ship(T0 + DAY + 1000);
    expect(r).toMatchObject({ delivered: 13, retried: 0, dead: 0 });
    expect(store.indexNames()).toEqual([
      'svc-sec-api-access-2026.11.26',
      'svc-sec-crud-admin-logs-2026.11.26',
      'svc-sec-crud-user-logs-2026.11.26',
      'svc-sec-data-lifecycle-2026.11.26',
      'svc-sec-ext-service-access-2026.11.26',
      'svc-sec-user-activity-2026.11.26',
      'svc-sec-user-activity-2026.11.27',
    ]);
    const [failure] = store.documents('svc-sec-user-activity-2026.11.27');
    const row = (await t.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'login.failure')))[0]!;
    expect(failure!.id).toBe(row.id);
    expect(failure!.source).toEqual({
      '@timestamp': '2026-11-27T10:00:00.000Z',
      event: { id: row.id, type: 'login.failure', stream: 'user_activity', outcome: 'failure' },
      service: { name: 'auth-service' },
      subject: { id: 'u0', login: 'user0' },
      request: { id: 'req-user_activity-0' },
      host: { name: 'test-host' },
      data: { i: 0 },
    });
    expect(await undelivered()).toBe(0);
  });

  it(
    'a store outage while 5,000 events are recorded: they wait, then all arrive, none twice, in order ' + 'per stream',
    async () => {
      await store.nodes[0]!.set('refuse');
      await store.nodes[1]!.set('refuse');
      await record('api_access', 3000, T0);
      await record('user_activity', 2000, T0);
      const down = await ship(T0 + 10_000);
      expect(down).toMatchObject({ delivered: 0, unreachable: 2 });
      const waiting = await t.db
        .select()
        .from(auditOutbox)
        .where(eq(auditOutbox.stream, 'api_access'))
        .orderBy(asc(auditOutbox.at))
        .limit(1);
      expect(waiting[0]).toMatchObject({ attempts: 1, lastError: expect.stringContaining('502') });
      // Still down at the next try: nothing is lost, the backoff grows.
      await ship(waiting[0]!.nextAttemptAt!);
      await store.nodes[0]!.set('up');
      await store.nodes[1]!.set('up');
      // Hours later the store is back: the outbox drains.
      let now = T0 + 3 * 3_600_000;
      for (let i = 0; i < 5 && (await undelivered()) > 0; i++) await ship((now += 60_000));
      expect(await undelivered()).toBe(0);
      const api = store.documents('svc-sec-api-access-*');
      const activity = store.documents('svc-sec-user-activity-*');
      expect(api).toHaveLength(3000);
      expect(activity).toHaveLength(2000);
      expect(new Set([...api, ...activity].map((d) => d.id)).size).toBe(5000);
      // In order per stream: the store received each stream's events oldest first.
      const times = (docs: typeof api) => docs.map((d) => Date.parse(String(d.source['@timestamp'])));
      expect(times(api)).toEqual([...times(api)].sort((a, b) => a - b));
      expect(times(activity)).toEqual([...times(activity)].sort((a, b) => a - b));
    },
  );

  it('a retry after a lost answer duplicates nothing (create with the event id: 409 is delivered)', async () => {
    await record('crud_admin', 5, T0);
    link.loseAnswers = 1;
    const lost = await ship(T0 + 1000);
    expect(lost).toMatchObject({ delivered: 0, unreachable: 1 });
    expect(store.documents()).toHaveLength(5);
    const again = await ship(T0 + 3_600_000);
    expect(again.delivered).toBe(5);
    expect(store.documents()).toHaveLength(5);
    const bulk = store.requests.filter((r) => r.path === '/_bulk');
    expect(bulk).toHaveLength(2);
  });

  it(
    'an item the store refuses for good becomes a dead letter; the rest go on; a 429 item waits and ' +
      'holds back newer events of its stream',
    async () => {
      await record('crud_user', 6, T0);
      const rows = await t.db.select().from(auditOutbox).orderBy(asc(auditOutbox.at));
      const poisoned = rows[1]!.id;
      const busy = rows[3]!.id;
      let busyTimes = 1;
      store.itemStatus = ({ id }) => (id === poisoned ? 400 : id === busy && busyTimes-- > 0 ? 429 : undefined);
      const first = await ship(T0 + 1000);
      expect(first).toMatchObject({ delivered: 4, dead: 1, retried: 1 });
      const dead = (await t.db.select().from(auditOutbox).where(eq(auditOutbox.id, poisoned)))[0]!;
      expect(dead).toMatchObject({
        deadAt: T0 + 1000,
        lastError: expect.stringContaining('400 mapper_parsing_exception'),
      });
      // Newer events of the stream wait behind the busy one.
      await record('crud_user', 1, T0 + 500_000);
      const held = await ship(T0 + 2000);
      expect(held.delivered).toBe(0);
      const later = await ship(T0 + 3_600_000);
      expect(later).toMatchObject({ delivered: 2, dead: 0 });
      // The dead letter is never retried.
      expect(store.requests.filter((r) => r.path === '/_bulk' && r.body.includes(poisoned))).toHaveLength(1);
      expect(await undelivered()).toBe(1);
    },
  );

  it(
    'fails over to the next node; waits while the bridge is down; ships nothing with EVENT_HANDLING ' +
      'off or the store not configured',
    async () => {
      await record('user_activity', 3, T0);
      expect((await ship(T0, { AUTH_EVENT_HANDLING: 'False' })).delivered).toBe(0);
      expect((await ship(T0, { LOGSTORE_URLS: 'https://<logstore_host>:9200' })).delivered).toBe(0);
      expect(store.requests).toHaveLength(0);
      link.down = true;
      expect(await ship(T0)).toMatchObject({ delivered: 0, unreachable: 1 });
      link.down = false;
      await store.nodes[0]!.set('refuse');
      expect((await ship(T0 + 3_600_000)).delivered).toBe(3);
      expect(store.requests.every((r) => r.node === 1)).toBe(true);
    },
  );

  it(
    'a batch of API-access events (one row) ships as one document per event, in bulks of ' +
      'OUTBOX_BATCH_SIZE; a refused event becomes a dead letter of its own; a 429 holds the batch',
    async () => {
      const recorder = createApiAccessRecorder({ db: () => t.db, host: 'node-1', maxEvents: 10_000 });
      for (let i = 0; i < 450; i++)
        recorder.record(
          {
            at: T0 + i,
            user: { id: 'u1', login: 'alice' },
            method: 'bearer',
            httpMethod: 'GET',
            path: '/api/auth/v4/users/me',
            status: i === 7 ? 403 : 200,
            requestId: `req-${i}`,
            sourceIp: '203.0.113.9',
            userAgent: 'curl/8',
            tokenId: 'tok-1',
          },
          () => {},
          0, // one event per request (AUDIT_API_ACCESS_WINDOW_SEC=0): a row of 450 events
        );
      await recorder.flush();
      const [row] = await t.db.select().from(auditOutbox);
      expect(row).toMatchObject({ stream: 'api_access', events: 450 });
      const events = outboxEvents(row!);
      const poisoned = events[100]!.id;
      const busy = events[300]!.id;
      let busyTimes = 1;
      store.itemStatus = ({ id }) => (id === poisoned ? 400 : id === busy && busyTimes-- > 0 ? 429 : undefined);
      const pipeline = async () => (await streamPipelines(t.db, T0)).find((p) => p.stream === 'api_access');
      expect(await pipeline()).toMatchObject({ depth: 450, deadLetters: 0 });

      // One event asked to wait: the whole batch waits (the rest was accepted, and will be 409s).
      const first = await ship(T0 + 1000, { OUTBOX_BATCH_SIZE: '200' });
      expect(first).toMatchObject({ delivered: 0, dead: 0, retried: 450 });
      expect(store.requests.filter((r) => r.path === '/_bulk')).toHaveLength(3);
      expect((await t.db.select().from(auditOutbox))[0]).toMatchObject({ shippedAt: null, attempts: 1 });

      const later = await ship(T0 + 3_600_000, { OUTBOX_BATCH_SIZE: '200' });
      expect(later).toMatchObject({ delivered: 449, dead: 1, retried: 0 });
      const docs = store.documents('svc-sec-api-access-*');
      expect(docs).toHaveLength(449);
      expect(new Set(docs.map((d) => d.id))).toEqual(new Set(events.map((e) => e.id).filter((id) => id !== poisoned)));
      expect(docs.find((d) => d.id === events[7]!.id)!.source).toEqual({
        '@timestamp': new Date(T0 + 7).toISOString(),
        event: { id: events[7]!.id, type: 'api.request', stream: 'api_access', outcome: 'failure' },
        service: { name: 'auth-service' },
        actor: { id: 'u1', login: 'alice' },
        source: { ip: '203.0.113.9' },
        user_agent: { original: 'curl/8' },
        request: { id: 'req-7' },
        host: { name: 'node-1' },
        data: { method: 'bearer', httpMethod: 'GET', path: '/api/auth/v4/users/me', status: 403, tokenId: 'tok-1' },
      });
      // The batch is delivered; its refused event is kept as a dead letter of its own.
      const rows = await t.db.select().from(auditOutbox).orderBy(asc(auditOutbox.at));
      expect(rows.find((r) => r.id === row!.id)).toMatchObject({ shippedAt: T0 + 3_600_000, deadAt: null });
      expect(rows.find((r) => r.id === poisoned)).toMatchObject({
        stream: 'api_access',
        type: 'api.request',
        requestId: 'req-100',
        actorLogin: 'alice',
        events: 1,
        shippedAt: null,
        deadAt: T0 + 3_600_000,
        lastError: expect.stringContaining('400 mapper_parsing_exception'),
      });
      expect(await pipeline()).toMatchObject({ depth: 0, deadLetters: 1 });
      // Nothing more is sent: the dead letter is never retried.
      const sent = store.requests.length;
      expect(await ship(T0 + 7_200_000)).toMatchObject({ delivered: 0, dead: 0 });
      expect(store.requests).toHaveLength(sent);
    },
  );

  it('aggregates of successful reads ship as one document each, with their count, first and last time', async () => {
    const recorder = createApiAccessRecorder({ db: () => t.db, host: 'node-1', clock: () => T0 });
    const read = (i: number, tokenId: string) => ({
      at: T0 + i,
      user: { id: 'u1', login: 'alice' },
      method: 'bearer' as const,
      httpMethod: 'GET',
      path: '/api/auth/v4/users/me',
      status: 200,
      requestId: `agg-${tokenId}-${i}`,
      sourceIp: '203.0.113.9',
      userAgent: 'curl/8',
      tokenId,
    });
    for (let i = 0; i < 1_000; i++) recorder.record(read(i, i % 2 ? 'tok-a' : 'tok-b'), () => {}, 60_000);
    await recorder.flush();
    const rows = await t.db.select().from(auditOutbox);
    expect(rows).toMatchObject([{ stream: 'api_access', type: 'api.request', events: 2 }]);
    expect(await ship(T0 + 61_000)).toMatchObject({ delivered: 2, dead: 0, retried: 0 });
    const docs = store.documents('svc-sec-api-access-*');
    expect(docs).toHaveLength(2);
    const ofA = docs.find((d) => (d.source.data as { tokenId?: string }).tokenId === 'tok-a')!;
    expect(ofA.source).toMatchObject({
      '@timestamp': new Date(T0 + 1).toISOString(),
      event: { type: 'api.request', stream: 'api_access', outcome: 'success' },
      actor: { login: 'alice' },
      source: { ip: '203.0.113.9' },
      request: { id: 'agg-tok-a-1' },
      data: {
        method: 'bearer',
        httpMethod: 'GET',
        path: '/api/auth/v4/users/me',
        status: 200,
        tokenId: 'tok-a',
        count: 500,
        first: new Date(T0 + 1).toISOString(),
        last: new Date(T0 + 999).toISOString(),
      },
    });
  });
});

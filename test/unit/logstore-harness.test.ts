// The test log store (test/harness/logstore) answers as the store's REST API documents: these tests
// pin the behaviour the service's tests rely on, so a change to the stand-in cannot go unnoticed.
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';

let store: TestLogStore;
let agent: Agent;

beforeAll(async () => {
  store = await startTestLogStore({ nodes: 2, basic: { username: 'shipper', password: 's3cret' } });
  agent = new Agent({ connect: { ca: store.caPem }, connections: 4 });
});
afterAll(async () => {
  await agent.close();
  await store.stop();
});
beforeEach(() => store.reset());

const AUTH = `Basic ${Buffer.from('shipper:s3cret').toString('base64')}`;

async function call(
  path: string,
  body?: unknown,
  o: { node?: number; method?: string; auth?: string; ndjson?: boolean } = {},
) {
  const res = await fetch(`${store.urls[o.node ?? 0]}${path}`, {
    dispatcher: agent,
    method: o.method ?? (body === undefined ? 'GET' : 'POST'),
    headers: { authorization: o.auth ?? AUTH, 'content-type': o.ndjson ? 'application/x-ndjson' : 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const ndjson = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

describe('test log store', () => {
  it('_bulk: create is 201 then 409 for the same id, index overwrites, hook items fail alone', async () => {
    store.itemStatus = ({ source }) => (source.bad ? 400 : source.busy ? 429 : undefined);
    const first = await call(
      '/_bulk',
      ndjson([
        { create: { _index: 'svc-a-2026.11.26', _id: 'e1' } },
        { n: 1 },
        { create: { _index: 'svc-a-2026.11.26', _id: 'e2' } },
        { n: 2, bad: true },
        { create: { _index: 'svc-a-2026.11.26', _id: 'e3' } },
        { n: 3, busy: true },
      ]),
      { ndjson: true },
    );
    expect(first.status).toBe(200);
    expect(first.body.errors).toBe(true);
    expect(first.body.items.map((i: any) => i.create.status)).toEqual([201, 400, 429]);
    const again = await call('/_bulk', ndjson([{ create: { _index: 'svc-a-2026.11.26', _id: 'e1' } }, { n: 9 }]), {
      ndjson: true,
    });
    expect(again.body.items[0].create.status).toBe(409);
    expect(store.documents('svc-a-*').map((d) => d.source)).toEqual([{ n: 1 }]);
    const idx = await call('/_bulk', ndjson([{ index: { _index: 'svc-a-2026.11.26', _id: 'e1' } }, { n: 10 }]), {
      ndjson: true,
    });
    expect(idx.body.items[0].index.status).toBe(200);
    expect(store.documents('svc-a-*')[0]!.source).toEqual({ n: 10 });
    const badName = await call('/_bulk', ndjson([{ create: { _index: 'Bad*Name', _id: 'x' } }, {}]), { ndjson: true });
    expect(badName.body.items[0].create.status).toBe(400);
  });

  it(
    '_search: bool, term, terms, match, match_phrase, range with date math, exists, sort, paging, ' + '_source',
    async () => {
      const now = Date.now();
      store.seed('svc-act-2026.11.25', [
        {
          _id: 'a',
          '@timestamp': new Date(now - 2 * 86_400_000).toISOString(),
          type: 'login.failed',
          outcome: 'failure',
          actor: { login: 'alice' },
          message: 'wrong password given',
        },
        {
          _id: 'b',
          '@timestamp': new Date(now - 3_600_000).toISOString(),
          type: 'login.succeeded',
          outcome: 'success',
          actor: { login: 'alice' },
          source: { ip: '10.0.0.1' },
        },
      ]);
      store.seed('svc-act-2026.11.26', [
        {
          _id: 'c',
          '@timestamp': new Date(now - 60_000).toISOString(),
          type: 'login.failed',
          outcome: 'failure',
          actor: { login: 'bob' },
          message: 'password given was wrong',
        },
      ]);
      store.seed('other-2026.11.26', [{ _id: 'z', type: 'login.failed', outcome: 'failure' }]);
      const ids = (r: { body: Record<string, any> }) => r.body.hits.hits.map((h: any) => h._id);

      const failures = await call('/svc-act-*/_search', {
        query: { bool: { filter: [{ term: { outcome: 'failure' } }] } },
        sort: [{ '@timestamp': 'asc' }],
      });
      expect(ids(failures)).toEqual(['a', 'c']);
      expect(failures.body.hits.total).toEqual({ value: 2, relation: 'eq' });
      expect(ids(await call('/svc-act-*/_search', { query: { terms: { 'actor.login.keyword': ['bob'] } } }))).toEqual([
        'c',
      ]);
      expect(ids(await call('/svc-act-*/_search', { query: { match: { message: 'WRONG' } }, sort: ['_id'] }))).toEqual([
        'a',
        'c',
      ]);
      expect(ids(await call('/svc-act-*/_search', { query: { match_phrase: { message: 'wrong password' } } }))).toEqual(
        ['a'],
      );
      expect(
        ids(
          await call('/svc-act-*/_search', {
            query: { range: { '@timestamp': { gte: 'now-1d' } } },
            sort: [{ '@timestamp': 'desc' }],
          }),
        ),
      ).toEqual(['c', 'b']);
      expect(ids(await call('/svc-act-*/_search', { query: { exists: { field: 'source.ip' } } }))).toEqual(['b']);
      expect(
        ids(
          await call('/svc-act-*/_search', { query: { bool: { must_not: [{ term: { 'actor.login': 'alice' } }] } } }),
        ),
      ).toEqual(['c']);
      expect(
        ids(
          await call('/svc-act-*/_search', {
            query: { bool: { should: [{ term: { _x: 1 } }, { term: { type: 'login.succeeded' } }] } },
          }),
        ),
      ).toEqual(['b']);
      const page = await call('/svc-act-*/_search', {
        sort: [{ '@timestamp': 'asc' }],
        from: 1,
        size: 1,
        _source: ['type'],
        track_total_hits: true,
      });
      expect(page.body.hits.hits).toEqual([
        expect.objectContaining({ _id: 'b', _source: { type: 'login.succeeded' } }),
      ]);
      expect((await call('/svc-act-*/_search', { size: 10_000, from: 1 })).status).toBe(400);
      expect((await call('/svc-act-*/_search', { query: { script: { script: 'x' } } })).body.error.type).toBe(
        'parsing_exception',
      );
      expect((await call('/missing-index/_search', {})).status).toBe(404);
    },
  );

  it('search_after pages through a sorted result; terms and date_histogram aggregations', async () => {
    store.seed(
      'svc-x-1',
      Array.from({ length: 5 }, (_, i) => ({
        _id: `d${i}`,
        '@timestamp': `2026-11-2${i}T10:00:00.000Z`,
        type: i % 2 ? 'odd' : 'even',
      })),
    );
    const sort = [{ '@timestamp': 'asc' }, { _id: 'asc' }];
    const p1 = await call('/svc-x-*/_search', { sort, size: 2 });
    const last = p1.body.hits.hits.at(-1).sort;
    const p2 = await call('/svc-x-*/_search', { sort, size: 2, search_after: last });
    expect(p2.body.hits.hits.map((h: any) => h._id)).toEqual(['d2', 'd3']);
    const aggs = await call('/svc-x-*/_search', {
      size: 0,
      aggs: {
        types: { terms: { field: 'type.keyword' } },
        per_day: { date_histogram: { field: '@timestamp', calendar_interval: 'day' } },
      },
    });
    expect(aggs.body.aggregations.types.buckets).toEqual([
      { key: 'even', doc_count: 3 },
      { key: 'odd', doc_count: 2 },
    ]);
    expect(aggs.body.aggregations.per_day.buckets).toHaveLength(5);
  });

  it('_field_caps lists the fields of the matching indices with their types', async () => {
    store.seed('svc-y-1', [
      { '@timestamp': '2026-11-26T10:00:00.000Z', outcome: 'success', actor: { login: 'a' }, count: 2 },
    ]);
    const caps = await call('/svc-y-*/_field_caps?fields=*', undefined);
    expect(caps.body.indices).toEqual(['svc-y-1']);
    expect(caps.body.fields['@timestamp']).toHaveProperty('date');
    expect(caps.body.fields['actor.login.keyword']).toHaveProperty('keyword');
    expect(caps.body.fields.count).toHaveProperty('long');
  });

  it('records requests; asks for credentials; nodes fail on command (status, slow, refused) and recover', async () => {
    expect((await call('/', undefined, { auth: 'Basic bm9wZTpub3Bl' })).status).toBe(401);
    expect(store.requests.at(-1)).toMatchObject({ node: 0, method: 'GET', path: '/' });
    await store.nodes[0]!.set('status', { status: 503 });
    expect((await call('/', undefined)).status).toBe(503);
    expect((await call('/', undefined, { node: 1 })).status).toBe(200);
    await store.nodes[0]!.set('slow', { delayMs: 300 });
    const t0 = Date.now();
    expect((await call('/', undefined)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    await store.nodes[0]!.set('refuse');
    await expect(call('/', undefined)).rejects.toThrow();
    await store.nodes[0]!.set('up');
    expect((await call('/', undefined)).status).toBe(200);
  });
});

// The bridge's log-store plugin against the test log store (test/harness/logstore: a protocol-level
// stand-in, since no OpenSearch or Elasticsearch can be installed here), through the real
// @opensearch-project/opensearch client.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestLogStore, type TestLogStore } from '../../test/harness/logstore/server.js';
import { buildBridge } from './app.js';

let store: TestLogStore;
let app: FastifyInstance;

beforeAll(async () => {
  store = await startTestLogStore({ nodes: 2, basic: { username: 'bridge', password: 'St0re-pass' } });
  app = buildBridge({
    logstore: { ca: store.caPem, username: 'bridge', password: 'St0re-pass', allowedUrls: store.urls },
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await store.stop();
});
beforeEach(() => store.reset());

const target = (o: Partial<{ urls: string[]; timeoutMs: number; verifyCerts: boolean }> = {}) => ({
  urls: store.urls,
  timeoutMs: 2000,
  verifyCerts: true,
  ...o,
});
const item = (id: string, n = 1) => ({
  index: 'svc-sec-user-activity-2026.11.26',
  id,
  document: { '@timestamp': '2026-11-26T10:00:00.000Z', n },
});

async function post(path: string, payload: unknown) {
  const res = await app.inject({ method: 'POST', url: path, payload: payload as object });
  return { status: res.statusCode, body: res.json() as Record<string, any>, type: res.headers['content-type'] };
}

describe('POST /v1/logstore/bulk', () => {
  it('creates each item under its id; a retry answers 409 per item and stores nothing twice', async () => {
    const first = await post('/v1/logstore/bulk', { ...target(), items: [item('e1'), item('e2')] });
    expect(first.status).toBe(200);
    expect(first.body.items).toEqual([
      { id: 'e1', status: 201, error: null },
      { id: 'e2', status: 201, error: null },
    ]);
    const retry = await post('/v1/logstore/bulk', { ...target(), items: [item('e1'), item('e3')] });
    expect(retry.body.items.map((i: any) => i.status)).toEqual([409, 201]);
    expect(store.documents('svc-sec-user-activity-*').map((d) => d.id)).toEqual(['e1', 'e2', 'e3']);
    // The store's credentials come from the bridge, not from the request.
    const bulk = store.requests.find((r) => r.path === '/_bulk')!;
    expect(bulk.headers.authorization).toBe(`Basic ${Buffer.from('bridge:St0re-pass').toString('base64')}`);
    expect(bulk.body.split('\n')[0]).toBe(
      JSON.stringify({ create: { _index: 'svc-sec-user-activity-2026.11.26', _id: 'e1' } }),
    );
  });

  it('passes each item verdict: 400 (refused for good) and 429 (busy) apart from the rest', async () => {
    store.itemStatus = ({ id }) => (id === 'bad' ? 400 : id === 'busy' ? 429 : undefined);
    const res = await post('/v1/logstore/bulk', { ...target(), items: [item('ok'), item('bad'), item('busy')] });
    expect(res.body.items.map((i: any) => [i.id, i.status, i.error?.type ?? null])).toEqual([
      ['ok', 201, null],
      ['bad', 400, 'mapper_parsing_exception'],
      ['busy', 429, 'es_rejected_execution_exception'],
    ]);
  });

  it('fails over: a refused node or one answering 503 is skipped for the next', async () => {
    await store.nodes[0]!.set('refuse');
    expect((await post('/v1/logstore/bulk', { ...target(), items: [item('a')] })).body.items[0].status).toBe(201);
    await store.nodes[0]!.set('up');
    await store.nodes[1]!.set('status', { status: 503 });
    const res = await post('/v1/logstore/bulk', {
      ...target({ urls: [store.urls[1]!, store.urls[0]!] }),
      items: [item('b')],
    });
    expect(res.body.items[0].status).toBe(201);
    expect(store.documents().map((d) => d.id)).toEqual(['a', 'b']);
  });

  it(
    'every node down is 502 STORE_UNAVAILABLE; a slow store 504 STORE_TIMEOUT; an unverified ' +
      'certificate 502 STORE_TLS',
    async () => {
      await store.nodes[0]!.set('refuse');
      await store.nodes[1]!.set('refuse');
      const down = await post('/v1/logstore/bulk', { ...target(), items: [item('a')] });
      expect(down).toMatchObject({ status: 502, body: { code: 'STORE_UNAVAILABLE' } });
      expect(down.type).toContain('application/problem+json');
      await store.nodes[0]!.set('slow', { delayMs: 1500 });
      const slow = await post('/v1/logstore/bulk', {
        ...target({ urls: [store.urls[0]!], timeoutMs: 300 }),
        items: [item('a')],
      });
      expect(slow).toMatchObject({ status: 504, body: { code: 'STORE_TIMEOUT' } });
      await store.nodes[0]!.set('up');
      const plain = buildBridge({
        logstore: { username: 'bridge', password: 'St0re-pass', allowedUrls: store.urls },
      });
      try {
        const res = await plain.inject({
          method: 'POST',
          url: '/v1/logstore/bulk',
          payload: { ...target({ urls: [store.urls[0]!] }), items: [item('a')] },
        });
        expect(res.statusCode).toBe(502);
        expect(res.json()).toMatchObject({ code: 'STORE_TLS' });
        // LOGSTORE_VERIFY_CERTS=False (the specification's default) accepts the certificate.
        const unverified = await plain.inject({
          method: 'POST',
          url: '/v1/logstore/bulk',
          payload: { ...target({ urls: [store.urls[0]!], verifyCerts: false }), items: [item('c')] },
        });
        expect(unverified.json().items[0].status).toBe(201);
      } finally {
        await plain.close();
      }
    },
  );

  it('refuses a malformed body with a problem naming the fields (index names with wildcards among them)', async () => {
    const res = await post('/v1/logstore/bulk', { ...target(), items: [{ index: 'svc-*', id: 'x', document: {} }] });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('items.0.index');
    const malformed = await app.inject({
      method: 'POST',
      url: '/v1/logstore/bulk',
      headers: { 'content-type': 'application/json' },
      payload: '{"items": [',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.headers['content-type']).toContain('application/problem+json');
  });
});

describe('POST /v1/logstore/query', () => {
  it('runs _search on the pattern, passes the answer back, and sends the proxy-authentication headers', async () => {
    store.seed('svc-sec-user-activity-2026.11.26', [{ _id: 'x', type: 'login.succeeded' }]);
    const res = await post('/v1/logstore/query', {
      ...target(),
      operation: 'search',
      index: 'svc-sec-user-activity-*',
      body: { query: { term: { type: 'login.succeeded' } } },
      proxyUser: 'alice',
      proxyRoles: ['auditor'],
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(200);
    expect(res.body.body.hits.hits.map((h: any) => h._id)).toEqual(['x']);
    const sent = store.requests.at(-1)!;
    expect(sent.path).toBe('/svc-sec-user-activity-*/_search');
    expect(sent.headers['x-proxy-user']).toBe('alice');
    expect(sent.headers['x-proxy-roles']).toBe('auditor');
  });

  it("passes the store's own 4xx answers back as outcomes; runs _field_caps", async () => {
    const bad = await post('/v1/logstore/query', {
      ...target(),
      operation: 'search',
      index: 'svc-sec-*',
      body: { query: { nope: {} } },
      proxyUser: null,
      proxyRoles: [],
    });
    expect(bad.body.status).toBe(400);
    expect(bad.body.body.error.type).toBe('parsing_exception');
    store.seed('svc-sec-a-1', [{ outcome: 'success' }]);
    const caps = await post('/v1/logstore/query', {
      ...target(),
      operation: 'field_caps',
      index: 'svc-sec-a-*',
      fields: '*',
      body: {},
      proxyUser: null,
      proxyRoles: [],
    });
    expect(caps.body.body.fields.outcome).toHaveProperty('text');
  });

  it(
    "refuses patterns that could reach other indices (commas, _all, outside the service's svc-sec- " + 'prefix)',
    async () => {
      for (const index of ['svc-sec-*,secret-*', '_all', '../x', 'A*', 'o*', '*', 'svc*', 'svc-sec*', 'other-index']) {
        const res = await post('/v1/logstore/query', {
          ...target(),
          operation: 'search',
          index,
          body: {},
          proxyUser: null,
          proxyRoles: [],
        });
        expect(res.status, index).toBe(400);
      }
    },
  );
});

describe("the store's nodes: only those of the bridge's own LOGSTORE_ALLOWED_URLS", () => {
  const query = (urls: string[]) => ({
    ...target({ urls }),
    operation: 'search',
    index: 'svc-sec-user-activity-*',
    body: {},
    proxyUser: null,
    proxyRoles: [],
  });

  it('refuses, before any request, a node outside the list or over http://; bulk and query alike', async () => {
    const { createServer } = await import('node:http');
    const heard: Array<string | undefined> = [];
    const listener = createServer((req, res) => {
      heard.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as { port: number }).port;
    try {
      for (const urls of [
        [`http://127.0.0.1:${port}`],
        [`https://127.0.0.1:${port}`],
        [store.urls[0]!, `http://127.0.0.1:${port}`],
        [store.urls[0]!.replace('https:', 'http:')],
      ]) {
        const q = await post('/v1/logstore/query', query(urls));
        expect(q.status, urls.join(';')).toBe(503);
        expect(q.body.code).toBe('LOGSTORE_URL_NOT_ALLOWED');
        const b = await post('/v1/logstore/bulk', { ...target({ urls }), items: [item('x')] });
        expect(b).toMatchObject({ status: 503, body: { code: 'LOGSTORE_URL_NOT_ALLOWED' } });
      }
      expect(heard).toEqual([]);
      expect(store.requests).toEqual([]);
      // The list's own nodes, written with other case or a trailing slash, are the same origins.
      const ok = await post('/v1/logstore/query', query([`${store.urls[1]!.toUpperCase()}/`]));
      expect(ok.status).toBe(200);
    } finally {
      listener.close();
    }
  });

  it('with credentials and no list, no node at all; without credentials, any node', async () => {
    const unlisted = buildBridge({ logstore: { ca: store.caPem, username: 'bridge', password: 'St0re-pass' } });
    const keyOnly = buildBridge({ logstore: { ca: store.caPem, apiKey: 'k' } });
    const anonymous = buildBridge({ logstore: { ca: store.caPem } });
    try {
      for (const bridge of [unlisted, keyOnly]) {
        const res = await bridge.inject({ method: 'POST', url: '/v1/logstore/query', payload: query(store.urls) });
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({
          code: 'LOGSTORE_URL_NOT_ALLOWED',
          detail: expect.stringContaining('LOGSTORE_ALLOWED_URLS is not set'),
        });
      }
      expect(store.requests).toEqual([]);
      const res = await anonymous.inject({ method: 'POST', url: '/v1/logstore/query', payload: query(store.urls) });
      expect(res.json()).toMatchObject({ status: 401 });
    } finally {
      await Promise.all([unlisted.close(), keyOnly.close(), anonymous.close()]);
    }
  });

  it(
    'reads LOGSTORE_ALLOWED_URLS from the environment; refuses http:// entries while credentials are ' + 'set',
    async () => {
      const { logstoreCredentialsFromEnv } = await import('./logstore.js');
      const read = () => '';
      expect(
        logstoreCredentialsFromEnv({ LOGSTORE_ALLOWED_URLS: ' https://a:9200 ; https://b:9200 ' }, read).allowedUrls,
      ).toEqual(['https://a:9200', 'https://b:9200']);
      expect(logstoreCredentialsFromEnv({}, read).allowedUrls).toBeUndefined();
      expect(() =>
        logstoreCredentialsFromEnv({ LOGSTORE_USERNAME: 'u', LOGSTORE_ALLOWED_URLS: 'http://a:9200' }, read),
      ).toThrow(/http:\/\//);
      expect(() => logstoreCredentialsFromEnv({ LOGSTORE_ALLOWED_URLS: 'ftp://a' }, read)).toThrow(/not an http/);
    },
  );
});

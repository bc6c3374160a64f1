/**
 * The logs endpoints end to end, on both hosts: the worker (Node, or workerd through the mTLS
 * binding emulator) → the bridge over mutual TLS → the TEST LOG STORE (test/harness/logstore: a
 * protocol-level stand-in, two HTTPS nodes with their own test CA, since no OpenSearch or
 * Elasticsearch can be installed here). The bridge holds the store's CA and credentials (as
 * LOGSTORE_CA_FILE, LOGSTORE_USERNAME/PASSWORD and LOGSTORE_ALLOWED_URLS would give it), and the host verifies the
 * store's certificate (LOGSTORE_VERIFY_CERTS=True). Its own host, so settings changes touch no other suite.
 */
import { createServer, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';

let host: RunningHost;
/** A host without a log store: the embedded audit log (docs/audit-logs-embedded.md), seeded with the same events. */
let embedded: RunningHost;
let embeddedToken: string;
let bridge: TestBridge;
let bridgeStopped = false;
let store: TestLogStore;
const admin = basic(ADMIN.login, ADMIN.password);
const STORE_USER = { username: 'auth-bridge', password: 'St0re-pass' };
const PASSWORD = 'Str0ng$pass';
const logins = { auditor: uniqueLogin('aud'), user: uniqueLogin('usr') };
const auditor = basic(logins.auditor, PASSWORD);
const plainUser = basic(logins.user, PASSWORD);

type Json = Record<string, any>;
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const search = (type: string, json: unknown, auth = auditor) =>
  api(`/v3/logs/${type}/search`, { method: 'POST', auth, json });

async function settings(values: Record<string, unknown>) {
  const r = await api('/v3/settings', { method: 'PATCH', auth: admin, json: { values } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

/** The store's requests since `from` (an index into store.requests). */
const sentSince = (from: number) => store.requests.slice(from);

// Events of the user_activity stream, in two daily indices; pairs share a timestamp (the id breaks ties).
const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const TYPES = ['login.success', 'login.failure', 'logout'];
interface Ev {
  '@timestamp': string;
  event: { id: string; type: string; outcome?: string };
  actor?: { login: string };
  subject?: { login: string };
  source?: { ip: string };
}
const EVENTS: Ev[] = Array.from({ length: 1100 }, (_, i) => {
  const type = TYPES[i % 3]!;
  return {
    '@timestamp': new Date(T0 - Math.floor(i / 2) * 60_000).toISOString(),
    event: {
      id: `ev-${String(i).padStart(5, '0')}`,
      type,
      ...(type === 'logout' ? {} : { outcome: type === 'login.failure' ? 'failure' : 'success' }),
    },
    ...(i % 2 ? { actor: { login: `user${i % 7}` } } : { subject: { login: `user${i % 7}` } }),
    source: { ip: `10.0.${i % 5}.1` },
  };
});
const FORMULA: Ev = {
  '@timestamp': new Date(T0 + 60_000).toISOString(),
  event: { id: 'ev-formula', type: 'login.failure', outcome: 'failure' },
  subject: { login: '=HYPERLINK("http://evil.example/","x")' },
  source: { ip: '10.9.9.9' },
};
const ALL = [...EVENTS, FORMULA];
/** Newest first, then by event id descending: the order of the simple form. */
const ORDERED = [...ALL]
  .sort((a, b) => b['@timestamp'].localeCompare(a['@timestamp']) || b.event.id.localeCompare(a.event.id))
  .map((e) => e.event.id);

beforeAll(async () => {
  store = await startTestLogStore({ nodes: 2, basic: STORE_USER });
  bridge = await startTestBridge({ logstore: { ca: store.caPem, ...STORE_USER, allowedUrls: store.urls } });
  // The store holds only the seeded events here: the service's own events are not shipped to it
  // (test/http/audit-trail.test.ts covers shipping).
  const noShipping = { OUTBOX_CONTEXT_DETACH: 'False', IN_APP_SCHEDULER_ENABLED: 'False' };
  // One after the other: two hosts starting at once can take longer than the harness waits on a loaded machine.
  host = await startTestHost(inject('hostKind'), { ...bridge.env, LOGSTORE_VERIFY_CERTS: 'True', ...noShipping });
  embedded = await startTestHost(inject('hostKind'), noShipping);
  for (const on of [host, embedded]) {
    for (const [role, login] of [
      ['auditor', logins.auditor],
      ['user', logins.user],
    ] as const) {
      const r = await callJson('/v4/users', {
        base: on.url,
        method: 'POST',
        auth: admin,
        json: { login, password: PASSWORD, role },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
  }
  // The embedded audit log reads the outbox: the same events, written there as the service writes them.
  const rows = ALL.map((e) => ({
    id: e.event.id,
    at: Date.parse(e['@timestamp']),
    stream: 'user_activity',
    type: e.event.type,
    outcome: e.event.outcome ?? null,
    ...(e.actor ? { actorLogin: e.actor.login } : {}),
    ...(e.subject ? { subjectLogin: e.subject.login } : {}),
    ...(e.source ? { sourceIp: e.source.ip } : {}),
  }));
  // The auditor's first requests record user activity of their own: made first, then replaced by
  // the seeded events. In parts: a request body is at most AUTH_MAX_BODY_SIZE.
  const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
    base: embedded.url,
    method: 'POST',
    auth: auditor,
    json: { name: 'logs' },
  });
  expect(issued.status).toBe(201);
  embeddedToken = issued.body.token;
  for (let i = 0; i < rows.length; i += 250) {
    const json = { events: rows.slice(i, i + 250), ...(i === 0 ? { replace: ['user_activity'] } : {}) };
    const seeded = await callJson('/__test__/audit-events', { base: embedded.url, method: 'POST', json });
    expect(seeded.status, JSON.stringify(seeded.body)).toBe(200);
  }
  const byDay = (e: Ev) => `svc-sec-user-activity-${e['@timestamp'].slice(0, 10).replaceAll('-', '.')}`;
  for (const index of new Set(ALL.map(byDay)))
    store.seed(
      index,
      ALL.filter((e) => byDay(e) === index).map((e) => ({ _id: e.event.id, ...e })),
    );
  store.seed('svc-sec-crud-admin-logs-2026.11.26', [
    { _id: 'adm-1', '@timestamp': '2026-11-26T10:00:00.000Z', event: { id: 'adm-1', type: 'user.created' } },
  ]);
  store.seed('other-secret-2026.11.26', [
    { _id: 'secret', '@timestamp': '2026-11-26T10:00:00.000Z', event: { id: 'secret', type: 'x' } },
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([host?.stop(), embedded?.stop()]);
  await Promise.all([bridgeStopped ? undefined : bridge?.stop(), store?.stop()]);
});

describe('before LOGSTORE_URLS is set', () => {
  it('lists the types and answers queries from the embedded audit log, without reaching the bridge', async () => {
    const types = await api<{ items: Json[]; logstoreConfigured: boolean }>('/v3/logs/audit_log_types', {
      auth: auditor,
    });
    expect(types.status).toBe(200);
    expect(types.body).toMatchObject({ logstoreConfigured: false, storage: 'embedded', localRetentionDays: 30 });
    expect(types.body.items.map((t) => t.name).sort()).toEqual([
      'api_access',
      'crud_admin',
      'crud_user',
      'data_lifecycle',
      'ext_service_access',
      'user_activity',
    ]);
    expect(types.body.items.find((t) => t.name === 'user_activity')).toEqual({
      name: 'user_activity',
      variable: 'AUDIT_USER_ACTIVITY_PATTERN',
      pattern: 'svc-sec-user-activity-*',
      description: expect.stringContaining('logins'),
      // The stream's event types, from the catalogue (audit-trail.test.ts checks them all).
      eventTypes: expect.arrayContaining([expect.objectContaining({ type: 'login.failure', outcomes: ['failure'] })]),
    });
    const before = store.requests.length;
    // The service's own events (the two accounts created) are in the embedded audit log.
    const search_ = await search('crud_admin', { query: { term: { 'event.type': 'user.created' } } });
    expect(search_.status, JSON.stringify(search_.body)).toBe(200);
    expect(search_.body.hits.hits.map((h: Json) => h._source.subject.login)).toEqual(
      expect.arrayContaining([logins.auditor, logins.user]),
    );
    const fieldCaps = await api('/v3/logs/user_activity/field_caps', { method: 'POST', auth: auditor, json: {} });
    expect(fieldCaps.status).toBe(200);
    const events = await api('/v3/logs/crud_admin/events', { auth: auditor });
    expect(events.status).toBe(200);
    expect(events.body.items.length).toBeGreaterThanOrEqual(2);
    const exported = await fetch(`${host.url}/v3/logs/crud_admin/export`, { headers: { authorization: auditor } });
    expect(exported.status).toBe(200);
    expect((await exported.text()).split('\n').length).toBeGreaterThanOrEqual(3);
    expect(store.requests.length).toBe(before);
    // An unconfigured store is a configuration state: no ERROR or WARNING line for these queries.
    expect(host.output()).not.toMatch(/"level":"(ERROR|WARNING)".*log store not configured/);
    await settings({ LOGSTORE_URLS: store.urls.join(';'), LOGSTORE_TIMEOUT: 5 });
    expect((await api<Json>('/v3/logs/audit_log_types', { auth: auditor })).body).toMatchObject({
      logstoreConfigured: true,
      storage: 'logstore',
      localRetentionDays: null,
    });
  });
});

describe('roles', () => {
  it('auditor and admin read; user 403; anonymous 401; the pipeline is admin only', async () => {
    const calls: Array<[string, Call]> = [
      ['/v3/logs/audit_log_types', {}],
      ['/v3/logs/user_activity/search', { method: 'POST', json: { size: 1 } }],
      ['/v3/logs/user_activity/field_caps', { method: 'POST', json: { fields: ['event.*'] } }],
      ['/v3/logs/user_activity/events?size=1', {}],
      ['/v3/logs/crud_admin/export', {}],
    ];
    for (const [path, o] of calls) {
      for (const auth of [admin, auditor]) expect((await api(path, { ...o, auth })).status, `${path}`).toBe(200);
      expect((await api(path, { ...o, auth: plainUser })).status, path).toBe(403);
      const anonymous = await api(path, o);
      expect(anonymous.status, path).toBe(401);
      expect(anonymous.res.headers.get('www-authenticate')).toBeTruthy();
    }
    expect((await api('/v3/logs/pipeline', { auth: admin })).status).toBe(200);
    expect((await api('/v3/logs/pipeline', { auth: auditor })).status).toBe(403);
    expect((await api('/v3/logs/pipeline')).status).toBe(401);
  });
});

describe('POST /v3/logs/{type}/search and /field_caps', () => {
  it("runs on exactly the type's pattern, as the caller, with the bridge's credentials and a timeout", async () => {
    const from = store.requests.length;
    const r = await search('user_activity', {
      query: { term: { 'event.id.keyword': 'ev-00007' } },
      _source: ['event'],
    });
    expect(r.status).toBe(200);
    expect(r.body.hits.hits).toEqual([
      expect.objectContaining({
        _id: 'ev-00007',
        _index: 'svc-sec-user-activity-2026.11.26',
        _source: { event: EVENTS[7]!.event },
      }),
    ]);
    const [sent, ...more] = sentSince(from);
    expect(more).toEqual([]);
    expect(sent!.method).toBe('POST');
    expect(sent!.path).toBe('/svc-sec-user-activity-*/_search');
    expect([...sent!.query.keys()]).toEqual([]);
    expect(JSON.parse(sent!.body)).toEqual({
      query: { term: { 'event.id.keyword': 'ev-00007' } },
      _source: ['event'],
      timeout: '4000ms',
    });
    expect(sent!.headers['x-proxy-user']).toBe(logins.auditor);
    expect(sent!.headers['x-proxy-roles']).toBe('auditor');
    // The store sees the bridge's own credentials, never the caller's.
    expect(sent!.headers.authorization).toBe(
      `Basic ${Buffer.from(`${STORE_USER.username}:${STORE_USER.password}`).toString('base64')}`,
    );

    await search('crud_admin', { size: 1 }, admin);
    expect(store.requests.at(-1)).toMatchObject({ path: '/svc-sec-crud-admin-logs-*/_search' });
    expect(store.requests.at(-1)!.headers['x-proxy-roles']).toBe('admin');
  });

  it('follows a changed AUDIT_*_PATTERN (UI-editable); no other index is ever reached', async () => {
    await settings({ AUDIT_CRUD_ADMIN_LOGS_PATTERN: 'svc-sec-crud-admin-logs-2026.11.*' });
    try {
      const r = await search('crud_admin', { query: { match_all: {} } });
      expect(r.body.hits.hits.map((h: Json) => h._id)).toEqual(['adm-1']);
      expect(store.requests.at(-1)!.path).toBe('/svc-sec-crud-admin-logs-2026.11.*/_search');
    } finally {
      const reset = await api('/v3/settings/AUDIT_CRUD_ADMIN_LOGS_PATTERN', { method: 'DELETE', auth: admin });
      expect(reset.status).toBe(200);
    }
    const everything = await search('user_activity', { query: { ids: { values: ['secret', 'adm-1'] } } });
    expect(everything.body.hits.hits).toEqual([]);
  });

  it("never sends the bridge's store credentials outside its LOGSTORE_ALLOWED_URLS (503, nothing sent)", async () => {
    // An administrator points LOGSTORE_URLS at a listener of their own: it must hear nothing.
    const heard: Array<string | undefined> = [];
    const listener = createServer((req, res) => {
      heard.push(req.headers.authorization);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"hits":{"hits":[]}}');
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as { port: number }).port;
    try {
      for (const urls of [
        `http://127.0.0.1:${port}`,
        `https://127.0.0.1:${port}`,
        `${store.urls[0]};http://127.0.0.1:${port}`,
      ]) {
        await settings({ LOGSTORE_URLS: urls });
        for (const r of [
          await search('user_activity', { query: { match_all: {} } }),
          await api('/v3/logs/user_activity/events', { auth: auditor }),
        ]) {
          expect(r.status, urls).toBe(503);
          expect(r.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', cause: 'LOGSTORE_URL_NOT_ALLOWED' });
        }
      }
      expect(heard).toEqual([]);
    } finally {
      listener.close();
      await settings({ LOGSTORE_URLS: store.urls.join(';') });
    }
    expect((await search('user_activity', { size: 1 })).status).toBe(200);
  });

  it('refuses (422) an AUDIT_*_PATTERN outside the svc-sec- prefix; other indices stay unread', async () => {
    for (const pattern of ['o*', '*', 'other-secret-*', 'svc*', 'svc-sec*', 'svc-sec-x-*,other-secret-*']) {
      const r = await api('/v3/settings', {
        method: 'PATCH',
        auth: admin,
        json: { values: { AUDIT_DATA_LIFECYCLE_PATTERN: pattern } },
      });
      expect(r.status, pattern).toBe(422);
      expect(r.body.code).toBe('VALIDATION');
      expect(r.body.detail).toContain('AUDIT_DATA_LIFECYCLE_PATTERN');
      expect(r.body.detail).toContain('svc-sec-');
    }
    const types = await api<{ items: Json[] }>('/v3/logs/audit_log_types', { auth: auditor });
    expect(types.body.items.find((t) => t.name === 'data_lifecycle')!.pattern).toBe('svc-sec-data-lifecycle-*');
    const r = await search('data_lifecycle', { query: { match_all: {} } });
    expect(JSON.stringify(r.body)).not.toContain('secret');
  });

  it('field_caps: fields from the body, on the pattern', async () => {
    const from = store.requests.length;
    const r = await api('/v3/logs/user_activity/field_caps', {
      method: 'POST',
      auth: auditor,
      json: { fields: ['event.*', 'source.ip'] },
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.fields).sort()).toEqual([
      'event.id',
      'event.id.keyword',
      'event.outcome',
      'event.outcome.keyword',
      'event.type',
      'event.type.keyword',
      'source.ip',
    ]);
    const [sent] = sentSince(from);
    expect(sent!.path).toBe('/svc-sec-user-activity-*/_field_caps');
    expect(Object.fromEntries(sent!.query)).toEqual({ fields: 'event.*,source.ip' });
    const bad = await api('/v3/logs/user_activity/field_caps', {
      method: 'POST',
      auth: auditor,
      json: { fields: ['a b'], index_filter: { script: { script: 'x' } }, include_unmapped: true },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: Json) => e.path)).toEqual([expect.stringMatching(/^fields/)]);
    const refusedKeys = await api('/v3/logs/user_activity/field_caps', {
      method: 'POST',
      auth: auditor,
      json: { index_filter: { script: { script: 'x' } }, include_unmapped: true },
    });
    expect(refusedKeys.status).toBe(422);
    expect(refusedKeys.body.errors.map((e: Json) => e.path).sort()).toEqual([
      'include_unmapped',
      'index_filter.script',
    ]);
  });

  it('refuses keys outside the allow-list with 422 naming each; nothing reaches the store', async () => {
    const cases: Array<[Json, string[]]> = [
      [{ script_fields: { x: { script: { source: '1' } } } }, ['script_fields']],
      [{ runtime_mappings: { x: { type: 'keyword', script: 'emit(1)' } } }, ['runtime_mappings']],
      [{ query: { script: { script: 'true' } } }, ['query.script']],
      [{ query: { terms: { 'actor.login': { index: 'users', id: '1', path: 'x' } } } }, ['query.terms.actor.login']],
      [{ query: { more_like_this: { like: [{ _index: 'other', _id: '1' }] } } }, ['query.more_like_this']],
      [{ pit: { id: 'x' } }, ['pit']],
      [{ size: 10_001 }, ['size']],
      [{ from: 9_990, size: 20 }, ['from']],
      [{ timeout: '1h' }, ['timeout']],
      [{ indices_boost: [{ 'other-*': 2 }] }, ['indices_boost']],
      [{ aggs: { x: { scripted_metric: {} } } }, ['aggs.x.scripted_metric']],
      [{ sort: [{ _script: { script: 'x' } }] }, ['sort.0._script']],
      [{ query: { wrapper: { query: 'eyJtYXRjaF9hbGwiOnt9fQ==' } } }, ['query.wrapper']],
      // Every value is looked into: both spellings of sub-aggregations, a composite source's second
      // type, a range's script, an order by script, extra keys beside `filters`, anything in `meta`.
      [{ aggs: { x: { terms: { field: 'a' }, aggs: {}, aggregations: { c: { scripted_metric: {} } } } } }, ['aggs.x']],
      [{ aggs: { x: { min: { field: 'a' } } }, aggregations: { y: { scripted_metric: {} } } }, ['aggregations']],
      [
        { aggs: { c: { composite: { sources: [{ s: { terms: { field: 'a' }, histogram: { script: 'x' } } }] } } } },
        ['aggs.c.composite.sources.0.s'],
      ],
      [
        { aggs: { r: { range: { field: 'n', ranges: [{ from: 1, script: 'x' }] } } } },
        ['aggs.r.range.ranges.0.script'],
      ],
      [{ aggs: { t: { terms: { field: 'a', order: { _script: 'asc' } } } } }, ['aggs.t.terms.order._script']],
      [{ aggs: { f: { filters: { filters: { a: { match_all: {} } }, script: 'x' } } } }, ['aggs.f.filters.script']],
      [{ aggs: { m: { min: { field: 'n' }, meta: { a: { script: 'x' } } } } }, ['aggs.m.meta.a']],
      [
        { aggs: { h: { histogram: { field: 'n', interval: 1, extended_bounds: { script: 'x' } } } } },
        ['aggs.h.histogram.extended_bounds.script'],
      ],
      [{ query: { match: { 'event.type': { query: { script: 'x' } } } } }, ['query.match.event.type.query']],
    ];
    // Reasons are looked up among own properties: no prototype member answers for a key.
    for (const key of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const r = await search('user_activity', JSON.parse(`{"query":{"${key}":{}}}`));
      expect(r.status, key).toBe(422);
      expect(r.body.errors.map((e: Json) => e.path)).toEqual([`query.${key}`]);
      expect(r.body.detail).toContain(`query type "${key}" is not allowed`);
      expect(JSON.stringify(r.body)).not.toContain('native code');
    }
    const top = await search('user_activity', { constructor: 1, toString: 1 });
    expect(top.body.errors.map((e: Json) => [e.path, e.message])).toEqual([
      ['constructor', 'search option "constructor" is not allowed'],
      ['toString', 'search option "toString" is not allowed'],
    ]);
    const before = store.requests.length;
    for (const [body, paths] of cases) {
      const r = await search('user_activity', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('VALIDATION');
      expect(
        r.body.errors.map((e: Json) => e.path),
        JSON.stringify(body),
      ).toEqual(paths);
      for (const p of paths) expect(r.body.detail).toContain(p);
    }
    const both = await search('user_activity', { script_fields: {}, pit: {}, query: { match_all: {} } });
    expect(both.body.errors.map((e: Json) => e.path)).toEqual(['script_fields', 'pit']);
    expect(store.requests.length).toBe(before);
  });

  it(
    'refuses JSON nested deeper than 64 levels with 422 naming the limit, on every endpoint (never a ' + '503)',
    async () => {
      const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
      const raw = (path: string, method: string, body: string) =>
        fetch(`${host.url}${path}`, {
          method,
          headers: { Authorization: admin, 'Content-Type': 'application/json' },
          body,
        });
      const before = store.requests.length;
      for (const [path, method, body] of [
        [
          '/v3/logs/user_activity/search',
          'POST',
          `{"aggs":{"m":{"min":{"field":"n"},"meta":{"x":${nested(20_000)}}}}}`,
        ],
        ['/v3/logs/user_activity/search', 'POST', `{"query":{"ids":{"values":${nested(30_000)}}}}`],
        ['/v3/logs/user_activity/field_caps', 'POST', `{"index_filter":${nested(65)}}`],
        ['/v3/settings', 'PATCH', `{"values":{"LOGSTORE_TIMEOUT":${nested(20_000)}}}`],
        ['/v4/users', 'POST', `{"login":"deep","password":${nested(20_000)}}`],
      ] as const) {
        const r = await raw(path, method, body);
        const problem = (await r.json()) as Json;
        expect(r.status, `${path} ${body.slice(0, 40)}`).toBe(422);
        expect(problem).toMatchObject({ code: 'VALIDATION', errors: [{ location: 'json', path: '' }] });
        expect(problem.detail).toContain('64');
      }
      expect(store.requests.length).toBe(before);
      // Exactly 64 levels pass the depth check and reach the allow-list (which refuses nested sort values).
      const ok = await raw('/v3/logs/user_activity/search', 'POST', `{"search_after":${nested(63)}}`);
      expect(ok.status).toBe(422);
      expect(((await ok.json()) as Json).errors).toEqual([expect.objectContaining({ path: 'search_after' })]);
    },
  );

  it('refuses every query-string parameter by name (the store is queried with the body only)', async () => {
    const before = store.requests.length;
    for (const name of [
      'expand_wildcards',
      'ignore_unavailable',
      'allow_no_indices',
      'routing',
      'preference',
      'scroll',
      'search_type',
      'request_cache',
      'fields',
      'index',
    ]) {
      const r = await api(`/v3/logs/user_activity/search?${name}=x`, { method: 'POST', auth: auditor, json: {} });
      expect(r.status, name).toBe(422);
      expect(r.body.errors).toEqual([
        { location: 'query', path: name, message: expect.stringContaining('no query parameters') },
      ]);
      const caps = await api(`/v3/logs/user_activity/field_caps?${name}=x`, {
        method: 'POST',
        auth: auditor,
        json: {},
      });
      expect(caps.status, name).toBe(422);
    }
    const many = await api('/v3/logs/user_activity/search?routing=a&preference=_local&routing=b', {
      method: 'POST',
      auth: auditor,
      json: {},
    });
    expect(many.body.errors.map((e: Json) => e.path)).toEqual(['routing', 'preference']);
    const events = await api('/v3/logs/user_activity/events?user=x&expand_wildcards=all', { auth: auditor });
    expect(events.status).toBe(422);
    expect(events.body.errors.map((e: Json) => e.path)).toEqual(['expand_wildcards']);
    expect(store.requests.length).toBe(before);
  });

  it('unknown types are 404 (wildcards, lists, _all, dot segments, encoded slashes, very long)', async () => {
    const before = store.requests.length;
    const types = [
      '*',
      '%2A',
      '_all',
      'user_activity,crud_admin',
      'user_activity%2Ccrud_admin',
      'svc-sec-user-activity-*',
      'USER_ACTIVITY',
      '__proto__',
      'toString',
      '%2E%2E',
      'user_activity%2F..%2Fcrud_admin',
      '%2Fuser_activity',
      'user_activity%00',
      'x'.repeat(4000),
    ];
    for (const type of types) {
      for (const [op, method] of [
        ['search', 'POST'],
        ['field_caps', 'POST'],
        ['events', 'GET'],
        ['export', 'GET'],
      ] as const) {
        const r = await api(`/v3/logs/${type}/${op}`, {
          method,
          auth: auditor,
          ...(method === 'POST' ? { json: {} } : {}),
        });
        expect(r.status, `${type.slice(0, 40)} ${op}`).toBe(404);
      }
    }
    // A literal dot segment, as a client that does not normalise paths sends it.
    const raw = await new Promise<number>((resolve, reject) => {
      const u = new URL(host.url);
      const req = httpRequest(
        {
          host: u.hostname,
          port: u.port,
          method: 'POST',
          path: `${u.pathname}/v3/logs/../search`,
          headers: { authorization: auditor, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(raw).toBe(404);
    expect(store.requests.length).toBe(before);
  });

  it('bodies over 64 KiB are 413 before they are buffered (announced or chunked)', async () => {
    const before = store.requests.length;
    const big = JSON.stringify({ query: { match_all: {} }, _source: ['x'.repeat(70 * 1024)] });
    const announced = await api('/v3/logs/user_activity/search', {
      method: 'POST',
      auth: auditor,
      json: JSON.parse(big),
    });
    expect(announced.status).toBe(413);
    expect(announced.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', maxBytes: 65536 });
    // Announced far over the limit: not read at all. The 413 may race the upload, and a proxy in front
    // (wrangler dev's) may then cut the connection instead: either way nothing is buffered or sent on.
    // wrangler dev's local proxy reports the worker cutting the body off as its own 503 (Cloudflare has no
    // such proxy): the edge host's 413 in disguise, recognised by its text.
    const statusOf = async (r: Response) => {
      const text = await r.text();
      return r.status === 503 && inject('hostKind') === 'edge' && text.includes('restarted mid-request')
        ? 413
        : r.status;
    };
    const huge = await fetch(`${host.url}/v3/logs/user_activity/search`, {
      method: 'POST',
      headers: { authorization: auditor, 'content-type': 'application/json' },
      body: 'x'.repeat(4 * 1024 * 1024),
    })
      .then(statusOf)
      // The connection cut while uploading: the fetch fails (its error names differ between Node versions).
      .catch(() => 'connection cut');
    expect([413, 'connection cut']).toContain(huge);
    const chunks = [
      new TextEncoder().encode('{"_source":["'),
      new TextEncoder().encode('y'.repeat(80 * 1024)),
      new TextEncoder().encode('"]}'),
    ];
    const chunked = await fetch(`${host.url}/v3/logs/user_activity/search`, {
      method: 'POST',
      headers: { authorization: auditor, 'content-type': 'application/json' },
      body: new ReadableStream({
        pull(c) {
          const next = chunks.shift();
          if (next) c.enqueue(next);
          else c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit)
      .then(statusOf)
      // The same race as above when the 413 comes before the last chunk is sent: a 503 or a cut.
      .catch(() => 'connection cut');
    expect([413, 'connection cut']).toContain(chunked);
    expect(store.requests.length).toBe(before);
    // Just under the limit is fine.
    const fits = await search('user_activity', { size: 0, _source: ['z'.repeat(60 * 1024)] });
    expect(fits.status).toBe(200);
  });

  it("the store's own refusal is 400 QUERY_REJECTED with its reason; its 403 and 5xx map to 403 and 502", async () => {
    // match_phrase_prefix passes the allow-list; the test store, like a store without it, refuses it.
    const rejected = await search('user_activity', { query: { match_phrase_prefix: { 'event.type': 'log' } } });
    expect(rejected.status).toBe(400);
    expect(rejected.body).toMatchObject({
      code: 'QUERY_REJECTED',
      upstreamStatus: 400,
      storeError: { type: 'parsing_exception' },
    });
    try {
      for (const n of store.nodes) await n.set('status', { status: 403 });
      const forbidden = await search('user_activity', { size: 1 });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toMatchObject({ code: 'FORBIDDEN', upstreamStatus: 403 });
      for (const n of store.nodes) await n.set('status', { status: 500 });
      const failed = await search('user_activity', { size: 1 });
      expect(failed.status).toBe(502);
      expect(failed.body).toMatchObject({ code: 'BAD_GATEWAY', upstreamStatus: 500 });
      expect(failed.body.storeError).toBeUndefined();
    } finally {
      for (const n of store.nodes) await n.set('up');
    }
  });
});

/**
 * The same tests on both backends of the logs endpoints: the test log store (through the bridge),
 * and the embedded audit log (no log store configured: the events of the outbox in libSQL,
 * docs/audit-logs-embedded.md), seeded with the same events.
 */
const BACKENDS = ['log store', 'embedded'] as const;
describe.each(BACKENDS)('the same queries on the %s', (backend) => {
  const target = () => (backend === 'log store' ? host : embedded);
  // On the embedded audit log, a Basic login would record user activity of its own amid the seeded
  // events: the auditor reads with an API token there.
  const reader = () => (backend === 'log store' ? auditor : `Bearer ${embeddedToken}`);
  const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: target().url, ...o });
  const search = (type: string, json: unknown, auth = reader()) =>
    api(`/v3/logs/${type}/search`, { method: 'POST', auth, json });

  describe('the simple form: GET /v3/logs/{type}/events', () => {
    it('pages through every event newest first with an opaque cursor, never skipping or repeating', async () => {
      const from = store.requests.length;
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const r: { status: number; body: Json } = await api(
          `/v3/logs/user_activity/events?size=500${cursor ? `&cursor=${cursor}` : ''}`,
          { auth: reader() },
        );
        expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
        seen.push(...r.body.items.map((e: Ev) => e.event.id));
        cursor = r.body.nextCursor;
        if (pages === 0) expect(r.body.total).toEqual({ value: ALL.length, relation: 'eq' });
        pages += 1;
      } while (cursor && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual(ORDERED);
      if (backend === 'log store') {
        const sent = sentSince(from).map((s) => JSON.parse(s.body) as Json);
        expect(sent.map((b) => b.search_after === undefined)).toEqual([true, false, false]);
        expect(sent.every((b) => b.size === 501 && b.timeout === '4000ms')).toBe(true);
      } else expect(sentSince(from)).toEqual([]);
    });

    it('filters by user (actor or subject), ip, outcome, types and time range', async () => {
      const ids = async (query: string) => {
        const r = await api(`/v3/logs/user_activity/events?size=500&${query}`, { auth: reader() });
        expect(r.status, query).toBe(200);
        return r.body.items.map((e: Ev) => e.event.id) as string[];
      };
      const expected = (f: (e: Ev) => boolean) =>
        ORDERED.filter((id) => f(ALL.find((e) => e.event.id === id)!)).slice(0, 500);
      expect(await ids('user=user3')).toEqual(
        expected((e) => e.actor?.login === 'user3' || e.subject?.login === 'user3'),
      );
      expect(await ids('ip=10.0.2.1&outcome=failure')).toEqual(
        expected((e) => e.source?.ip === '10.0.2.1' && e.event.outcome === 'failure'),
      );
      expect(await ids('type=logout,login.failure&user=user1')).toEqual(
        expected(
          (e) =>
            ['logout', 'login.failure'].includes(e.event.type) &&
            (e.actor?.login === 'user1' || e.subject?.login === 'user1'),
        ),
      );
      const lo = '2026-11-26T08:00:00.000Z';
      const hi = '2026-11-26T09:00:00Z';
      expect(await ids(`from=${lo}&to=${hi}`)).toEqual(
        expected((e) => e['@timestamp'] >= lo && Date.parse(e['@timestamp']) < Date.parse(hi)),
      );
    });

    it('refuses bad filters and forged cursors with 422 naming them', async () => {
      const forged = Buffer.from(JSON.stringify([{ script: 'x' }, 'y'])).toString('base64url');
      for (const [query, path] of [
        ['outcome=maybe', 'outcome'],
        ['from=yesterday', 'from'],
        ['from=2026-11-27T00:00:00Z&to=2026-11-26T00:00:00Z', 'from'],
        ['size=501', 'size'],
        ['size=0', 'size'],
        ['ip=not-an-ip', 'ip'],
        ['type=a%20b', 'type'],
        [`cursor=${forged}`, 'cursor'],
        ['cursor=%2F%2F', 'cursor'],
      ] as const) {
        const r = await api(`/v3/logs/user_activity/events?${query}`, { auth: reader() });
        expect(r.status, query).toBe(422);
        expect(
          r.body.errors.map((e: Json) => e.path),
          query,
        ).toContain(path);
      }
    });
  });

  describe('GET /v3/logs/{type}/export', () => {
    const download = async (query: string) => {
      const res = await fetch(`${target().url}/v3/logs/user_activity/export?${query}`, {
        headers: { authorization: reader() },
      });
      return { res, text: await res.text() };
    };

    it('NDJSON: every event, newest first, streamed in pages of 500 through the store, as an attachment', async () => {
      const from = store.requests.length;
      const { res, text } = await download('format=ndjson');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      expect(res.headers.get('content-disposition')).toMatch(
        /^attachment; filename="audit-user_activity-\d{8}T\d{6}Z\.ndjson"$/,
      );
      const lines = text.split('\n');
      expect(lines.pop()).toBe('');
      const events = lines.map((l) => JSON.parse(l) as Ev);
      expect(events.map((e) => e.event.id)).toEqual(ORDERED);
      if (backend === 'log store') {
        expect(events.find((e) => e.event.id === 'ev-00010')).toEqual(EVENTS[10]);
        const sent = sentSince(from).map((s) => JSON.parse(s.body) as Json);
        expect(sent).toHaveLength(3);
        expect(sent.map((b) => Boolean(b.search_after))).toEqual([false, true, true]);
      } else {
        // The event document of the outbox row (worker/src/logs/document.ts): the seeded fields and more.
        expect(events.find((e) => e.event.id === 'ev-00010')).toMatchObject(EVENTS[10]!);
        expect(sentSince(from)).toEqual([]);
      }
    });

    it('CSV: the documented columns, formula cells neutralised, filters applied', async () => {
      const { res, text } = await download('format=csv');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toMatch(
        /^attachment; filename="audit-user_activity-\d{8}T\d{6}Z\.csv"$/,
      );
      const rows = text.split('\r\n');
      expect(rows.pop()).toBe('');
      expect(rows[0]).toBe('timestamp,event.id,event.type,event.outcome,actor.login,subject.login,source.ip,document');
      expect(rows).toHaveLength(ALL.length + 1);
      // The newest event is the one with a formula as its login: the cell starts with an apostrophe.
      expect(
        rows[1]!.startsWith(
          `${FORMULA['@timestamp']},ev-formula,login.failure,failure,,` +
            `"'=HYPERLINK(""http://evil.example/"",""x"")",10.9.9.9,"{`,
        ),
      ).toBe(true);
      expect(rows.slice(1).map((r) => r.split(',')[1])).toEqual(ORDERED);
      const filtered = await download('format=csv&outcome=failure&ip=10.0.1.1');
      const ids = filtered.text
        .split('\r\n')
        .slice(1, -1)
        .map((r) => r.split(',')[1]);
      expect(ids).toEqual(
        ORDERED.filter((id) => {
          const e = ALL.find((x) => x.event.id === id)!;
          return e.event.outcome === 'failure' && e.source?.ip === '10.0.1.1';
        }),
      );
    });
  });

  describe('POST /v3/logs/{type}/search and /field_caps: the subset the embedded audit log runs', () => {
    it('term, terms, range, bool, ids, sort, size, from, search_after and _source mean the same', async () => {
      const from = store.requests.length;
      const ids = async (body: Json) => {
        const r = await search('user_activity', body);
        expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
        return r.body.hits.hits.map((h: Json) => h._id) as string[];
      };
      const sort = [{ '@timestamp': { order: 'desc' } }, { 'event.id.keyword': { order: 'desc' } }];
      const byId = (id: string) => ALL.find((e) => e.event.id === id)!;
      expect(await ids({ query: { term: { 'event.id.keyword': 'ev-00007' } } })).toEqual(['ev-00007']);
      const failures = {
        bool: {
          filter: [
            { term: { 'event.outcome.keyword': 'failure' } },
            { range: { '@timestamp': { gte: '2026-11-26T10:00:00Z', lt: '2026-11-26T11:00:00Z' } } },
          ],
          must_not: [{ terms: { 'source.ip.keyword': ['10.0.1.1', '10.0.2.1'] } }],
        },
      };
      const expected = ORDERED.filter((id) => {
        const e = byId(id);
        const t = Date.parse(e['@timestamp']);
        return (
          e.event.outcome === 'failure' &&
          t >= Date.parse('2026-11-26T10:00:00Z') &&
          t < Date.parse('2026-11-26T11:00:00Z') &&
          !['10.0.1.1', '10.0.2.1'].includes(e.source?.ip ?? '')
        );
      });
      expect(expected.length).toBeGreaterThan(10);
      expect(await ids({ query: failures, sort, size: 100 })).toEqual(expected);
      expect(await ids({ query: failures, sort, size: 5, from: 3 })).toEqual(expected.slice(3, 8));
      const page = await search('user_activity', { query: failures, sort, size: 4 });
      expect(page.body.hits.total).toEqual({ value: expected.length, relation: 'eq' });
      const last = page.body.hits.hits.at(-1);
      expect(last.sort).toEqual([Date.parse(byId(expected[3]!)['@timestamp']), expected[3]]);
      expect(await ids({ query: failures, sort, size: 4, search_after: last.sort })).toEqual(expected.slice(4, 8));
      const only = await search('user_activity', { query: { ids: { values: ['ev-00003'] } }, _source: ['event.type'] });
      expect(only.body.hits.hits[0]._source).toEqual({ event: { type: 'login.success' } });
      if (backend === 'embedded') expect(sentSince(from)).toEqual([]);
    });

    it('field_caps lists the event fields, wildcards in the body', async () => {
      const r = await api('/v3/logs/user_activity/field_caps', {
        method: 'POST',
        auth: reader(),
        json: { fields: ['event.*', 'source.ip'] },
      });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body.fields)).toEqual(
        expect.arrayContaining(['event.id', 'event.id.keyword', 'event.outcome', 'event.type.keyword', 'source.ip']),
      );
      expect(Object.keys(r.body.fields).every((f) => f.startsWith('event.') || f === 'source.ip')).toBe(true);
    });

    it('what only the store runs: answered by the store, else 422 LOGSTORE_REQUIRED naming each key', async () => {
      const body = {
        query: { bool: { must: [{ match: { 'event.type': 'login' } }], filter: [{ term: { 'event.type': 'x' } }] } },
        aggs: { types: { terms: { field: 'event.type.keyword' } } },
      };
      const r = await search('user_activity', body);
      if (backend === 'log store') {
        expect(r.status).toBe(200);
        return;
      }
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ code: 'VALIDATION', cause: 'LOGSTORE_REQUIRED' });
      expect(r.body.errors.map((e: Json) => e.path).sort()).toEqual(['aggs', 'query.bool.must.0.match']);
      expect(r.body.detail).toContain('needs the log store (LOGSTORE_URLS)');
      const fieldCaps = await api('/v3/logs/user_activity/field_caps', {
        method: 'POST',
        auth: reader(),
        json: { index_filter: { match_all: {} } },
      });
      expect(fieldCaps.status).toBe(422);
      expect(fieldCaps.body.errors.map((e: Json) => e.path)).toEqual(['index_filter']);
    });
  });
});

describe('GET /v3/logs/{type}/export (log store)', () => {
  it('refuses, before sending anything, a form matching more than 100,000 events', async () => {
    const many = Array.from({ length: 100_001 }, (_, i) => ({
      _id: `m${i}`,
      '@timestamp': '2026-11-26T10:00:00.000Z',
      event: { id: `m${i}`, type: 'purge' },
    }));
    store.seed('svc-sec-data-lifecycle-2026.11.26', many);
    await settings({ LOGSTORE_TIMEOUT: 60 });
    try {
      const r = await api('/v3/logs/data_lifecycle/export?format=csv', { auth: auditor });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({
        code: 'VALIDATION',
        maxEvents: 100_000,
        detail: expect.stringContaining('more than 100000 events'),
      });
      const narrowed = await fetch(`${host.url}/v3/logs/data_lifecycle/export?to=2026-11-26T09:00:00Z`, {
        headers: { authorization: auditor },
      });
      expect(narrowed.status).toBe(200);
      expect(await narrowed.text()).toBe('');
    } finally {
      await settings({ LOGSTORE_TIMEOUT: 5 });
    }
  }, 120_000);
});

describe('GET /v3/logs/pipeline', () => {
  it("reports the outbox per stream (the service's own events wait there), and /health/ready sums it", async () => {
    const before = await api<{ streams: Json[]; shippingJob: unknown }>('/v3/logs/pipeline', { auth: admin });
    expect(before.status).toBe(200);
    const depth = (body: { streams: Json[] }, s: string) => body.streams.find((x) => x.stream === s)!.depth as number;
    expect(before.body.streams).toHaveLength(6);
    expect(depth(before.body, 'crud_admin')).toBeGreaterThanOrEqual(2); // two accounts created, settings changed
    const created = await api('/v4/users', {
      method: 'POST',
      auth: admin,
      json: { login: uniqueLogin('pipe'), password: PASSWORD },
    });
    expect(created.status).toBe(201);
    const after = await api<{ streams: Json[] }>('/v3/logs/pipeline', { auth: admin });
    expect(depth(after.body, 'crud_admin')).toBe(depth(before.body, 'crud_admin') + 1);
    const crudAdmin = after.body.streams.find((x) => x.stream === 'crud_admin')!;
    expect(crudAdmin).toMatchObject({
      pattern: 'svc-sec-crud-admin-logs-*',
      deadLetters: 0,
      lastError: null,
      oldestUndeliveredAt: expect.any(String),
    });
    expect(crudAdmin.oldestUndeliveredAgeSeconds).toBeGreaterThanOrEqual(0);
    const ready = await api<{ auditPipeline: { depth: number; oldestUndeliveredAgeSeconds: number } }>('/health/ready');
    expect(ready.status).toBe(200);
    const total = after.body.streams.reduce((n, s) => n + (s.depth as number), 0);
    expect(ready.body.auditPipeline.depth).toBeGreaterThanOrEqual(total);
    expect(ready.body.auditPipeline.oldestUndeliveredAgeSeconds).toBeGreaterThanOrEqual(
      crudAdmin.oldestUndeliveredAgeSeconds,
    );
  });
});

describe('failures of the store and the bridge', () => {
  it('one node down: the other answers; both refused: 502; both slow: 504 (LOGSTORE_TIMEOUT per node)', async () => {
    try {
      await store.nodes[0]!.set('refuse');
      expect((await search('user_activity', { size: 1 })).status).toBe(200);
      await store.nodes[1]!.set('refuse');
      const down = await search('user_activity', { size: 1 });
      expect(down.status).toBe(502);
      expect(down.body).toMatchObject({ code: 'BAD_GATEWAY', cause: 'STORE_UNAVAILABLE' });
      expect(JSON.stringify(down.body)).not.toContain('127.0.0.1');
      const events = await api('/v3/logs/user_activity/events', { auth: auditor });
      expect(events.status).toBe(502);
      await Promise.all(store.nodes.map((n) => n.set('slow', { delayMs: 4000 })));
      await settings({ LOGSTORE_TIMEOUT: 1 });
      const started = Date.now();
      const slow = await search('user_activity', { size: 1 });
      expect(slow.status).toBe(504);
      expect(slow.body).toMatchObject({ code: 'GATEWAY_TIMEOUT', cause: 'STORE_TIMEOUT' });
      expect(Date.now() - started).toBeLessThan(4000 * 2);
    } finally {
      await Promise.all(store.nodes.map((n) => n.set('up')));
      await settings({ LOGSTORE_TIMEOUT: 5 });
    }
  }, 60_000);

  it('the bridge down: 503', async () => {
    await bridge.stop();
    bridgeStopped = true;
    for (const r of [
      await search('user_activity', { size: 1 }),
      await api('/v3/logs/user_activity/events', { auth: auditor }),
    ]) {
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    }
    expect((await api('/v3/logs/audit_log_types', { auth: auditor })).status).toBe(200);
  });
});

/**
 * The audit trail end to end, on both hosts: what users and administrators do is recorded in the
 * outbox and shipped (kicked after the response: OUTBOX_CONTEXT_DETACH) through the bridge over
 * mutual TLS into the TEST LOG STORE (test/harness/logstore: a protocol-level stand-in for
 * OpenSearch/Elasticsearch, which cannot be installed here), each event in the dated index of its
 * stream, in the documented shape; then the auditor finds them through /v3/logs.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';
import type { StoredDoc } from '../harness/logstore/query.js';

let host: RunningHost;
let bridge: TestBridge;
let store: TestLogStore;
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Str0ng$pass';

type Json = Record<string, any>;
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

/** Waits until the store holds a document matching `match` (shipping runs after the responses). */
async function shipped(match: (d: StoredDoc) => boolean, timeoutMs = 30_000): Promise<StoredDoc> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = store.documents('*').find(match);
    if (found) return found;
    if (Date.now() > until) throw new Error(`not shipped within ${timeoutMs} ms; the store has ${store.documents('*').map((d) => `${d.index}:${(d.source.event as Json)?.type}`).join(', ')}`);
    // A request that may write events kicks the shipping again (at most once a second).
    await api('/v3/logout', { method: 'POST' });
    await new Promise((r) => setTimeout(r, 300));
  }
}
const typeIs = (type: string, login?: string) => (d: StoredDoc) => {
  const s = d.source as Json;
  return s.event?.type === type && (login === undefined || s.subject?.login === login || s.actor?.login === login);
};
const today = () => new Date().toISOString().slice(0, 10).replaceAll('-', '.');

beforeAll(async () => {
  store = await startTestLogStore({ nodes: 2 });
  bridge = await startTestBridge({ logstore: { ca: store.caPem } });
  host = await startTestHost(inject('hostKind'), { ...bridge.env, LOGSTORE_VERIFY_CERTS: 'True' });
  const r = await api('/v3/settings', { method: 'PATCH', auth: admin, json: { values: { LOGSTORE_URLS: store.urls.join(';') } } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}, 180_000);

afterAll(async () => {
  await host?.stop();
  await Promise.all([bridge?.stop(), store?.stop()]);
});

describe('the audit trail in the log store', () => {
  it("users' and administrators' actions land in their streams' dated indices, in the documented shape", async () => {
    const login = uniqueLogin('trail');
    expect((await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD } })).status).toBe(201);
    expect((await api('/v3/login_without_session', { method: 'POST', auth: basic(login, 'Wr0ng$pass') })).status).toBe(401);
    expect((await api('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(200);
    const token = await api<{ id: string }>('/v4/users/me/tokens', { method: 'POST', auth: basic(login, PASSWORD), json: { name: 'ci' } });
    expect(token.status).toBe(201);

    const created = await shipped(typeIs('user.created', login));
    expect(created.index).toBe(`svc-sec-crud-admin-logs-${today()}`);
    expect(created.source).toMatchObject({
      event: { id: created.id, type: 'user.created', stream: 'crud_admin' },
      actor: { login: ADMIN.login },
      subject: { login },
      request: { id: expect.any(String) },
      service: { name: 'auth-service' },
    });
    expect(Date.parse(String(created.source['@timestamp']))).toBeGreaterThan(Date.now() - 600_000);

    const failure = await shipped(typeIs('login.failure', login));
    expect(failure.index).toBe(`svc-sec-user-activity-${today()}`);
    expect(failure.source).toMatchObject({ event: { stream: 'user_activity', outcome: 'failure' }, subject: { login } });
    expect((await shipped(typeIs('login.success', login))).source).toMatchObject({ event: { outcome: 'success' } });
    const issued = await shipped(typeIs('token.issued', login));
    expect(issued.index).toBe(`svc-sec-crud-user-logs-${today()}`);
    // No secret in any document.
    expect(JSON.stringify(store.documents('*'))).not.toContain(PASSWORD);
  });

  it('each event is delivered once: the store holds every id at most once, and the outbox empties', async () => {
    const ids = store.documents('*').map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    const pipeline = await api<{ streams: Array<{ stream: string; depth: number; deadLetters: number }> }>('/v3/logs/pipeline', { auth: admin });
    expect(pipeline.status).toBe(200);
    for (const s of pipeline.body.streams) expect(s.deadLetters, s.stream).toBe(0);
  });

  it('an auditor finds the events just made through /v3/logs', async () => {
    const login = uniqueLogin('aud');
    expect((await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD, role: 'auditor' } })).status).toBe(201);
    await shipped(typeIs('user.created', login));
    const found = await api<{ items: Json[] }>(`/v3/logs/crud_admin/events?user=${encodeURIComponent(login)}`, { auth: basic(login, PASSWORD) });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.items.map((i) => i.event.type)).toContain('user.created');
  });
});

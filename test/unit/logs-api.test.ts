/**
 * The logs endpoints in-process (Node): the pipeline health read from outbox rows inserted directly,
 * and what only the environment can change (LOGSTORE_VERIFY_CERTS, LOGSTORE_USER_ROLE_ATTRIBUTE),
 * through a real bridge (in-process, inject) to the test log store. The HTTP behaviour on both hosts
 * is in test/http/logs.test.ts.
 */
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildBridge } from '../../ldap-bridge/src/app.js';
import { auditOutbox, jobLeases } from '../../schema/index.js';
import { createBridgeClient, type BridgeClient } from '../../worker/src/bridge/client.js';
import { ProblemError } from '../../worker/src/http/problem.js';
import { csvCell, csvLine } from '../../worker/src/logs/export.js';
import { decodeCursor, encodeCursor } from '../../worker/src/logs/events.js';
import { headerSafe } from '../../worker/src/logs/proxy-identity.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { ADMIN, basic } from '../harness/client.js';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';

const admin = basic(ADMIN.login, ADMIN.password);
let store: TestLogStore;
let bridgeWithCa: FastifyInstance;
let bridgeWithoutCa: FastifyInstance;
const apps: TestApp[] = [];

/** A bridge client over Fastify's inject: the real bridge, without sockets. */
function injectClient(bridge: FastifyInstance): BridgeClient {
  return createBridgeClient(async (path, { timeoutMs: _t, ...init }) => {
    const res = await bridge.inject({
      method: (init.method ?? 'GET') as 'GET' | 'POST',
      url: path,
      headers: { 'content-type': 'application/json' },
      payload: init.body as string | undefined,
    });
    return new Response(res.body, {
      status: res.statusCode,
      headers: { 'content-type': String(res.headers['content-type'] ?? 'application/json') },
    });
  });
}

async function appWith(env: Record<string, string>, bridge?: FastifyInstance): Promise<TestApp> {
  // No shipping of the app's own events into the store: it holds only what a test seeds.
  const t = await createTestApp(
    { OUTBOX_CONTEXT_DETACH: 'False', ...env },
    bridge ? { bridge: injectClient(bridge) } : {},
  );
  apps.push(t);
  await settings(t, { LOGSTORE_URLS: store.urls.join(';'), LOGSTORE_TIMEOUT: 2 });
  return t;
}

async function settings(t: TestApp, values: Record<string, unknown>) {
  const res = await t.app.request('/api/auth/v3/settings', {
    method: 'PATCH',
    headers: { Authorization: admin, 'Content-Type': 'application/json' },
    body: JSON.stringify({ values }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

const search = (t: TestApp, auth = admin) =>
  t.app.request('/api/auth/v3/logs/user_activity/search', {
    method: 'POST',
    headers: { Authorization: auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: { match_all: {} } }),
  });

beforeAll(async () => {
  store = await startTestLogStore({ nodes: 1 });
  bridgeWithCa = buildBridge({ logstore: { ca: store.caPem } });
  bridgeWithoutCa = buildBridge({});
  await Promise.all([bridgeWithCa.ready(), bridgeWithoutCa.ready()]);
});
afterAll(async () => {
  for (const t of apps) t.close();
  await Promise.all([bridgeWithCa.close(), bridgeWithoutCa.close()]);
  await store.stop();
});
beforeEach(() => {
  store.requests.length = 0;
});

describe('LOGSTORE_VERIFY_CERTS', () => {
  it("False (the specification's default) accepts a certificate no CA of the bridge vouches for", async () => {
    const t = await appWith({}, bridgeWithoutCa);
    const res = await search(t);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(store.requests).toHaveLength(1);
  });

  it('True refuses it (502 STORE_TLS, nothing sent), and accepts it with LOGSTORE_CA_FILE on the bridge', async () => {
    const refused = await search(await appWith({ LOGSTORE_VERIFY_CERTS: 'True' }, bridgeWithoutCa));
    expect(refused.status).toBe(502);
    expect(await refused.json()).toMatchObject({ code: 'BAD_GATEWAY', cause: 'STORE_TLS' });
    expect(store.requests).toHaveLength(0);
    const verified = await search(await appWith({ LOGSTORE_VERIFY_CERTS: 'True' }, bridgeWithCa));
    expect(verified.status).toBe(200);
    expect(store.requests).toHaveLength(1);
  });
});

describe('LOGSTORE_USER_ROLE_ATTRIBUTE', () => {
  it('role (default): the effective role; other attributes by name; unknown names fail closed with 503', async () => {
    const t = await appWith({}, bridgeWithCa);
    await search(t);
    expect(store.requests.at(-1)!.headers).toMatchObject({ 'x-proxy-user': ADMIN.login, 'x-proxy-roles': 'admin' });

    for (const [attribute, expected] of [
      ['login', ADMIN.login],
      ['source', 'local'],
    ] as const) {
      const other = await appWith({ LOGSTORE_USER_ROLE_ATTRIBUTE: attribute }, bridgeWithCa);
      expect((await search(other)).status).toBe(200);
      expect(store.requests.at(-1)!.headers['x-proxy-roles']).toBe(expected);
    }
    const before = store.requests.length;
    const unknown = await search(await appWith({ LOGSTORE_USER_ROLE_ATTRIBUTE: 'memberOf' }, bridgeWithCa));
    expect(unknown.status).toBe(503);
    expect(await unknown.json()).toMatchObject({
      cause: 'LOGSTORE_MISCONFIGURED',
      detail: expect.stringContaining('LOGSTORE_USER_ROLE_ATTRIBUTE'),
    });
    expect(store.requests.length).toBe(before);
  });

  it('header values: non-ASCII, % and , are percent-encoded (UTF-8)', () => {
    expect(headerSafe('alice@example.com')).toBe('alice@example.com');
    expect(headerSafe('Иван')).toBe('%D0%98%D0%B2%D0%B0%D0%BD');
    expect(headerSafe('a,b%')).toBe('a%2Cb%25');
    expect(headerSafe('x\r\ny')).toBe('x%0D%0Ay');
  });
});

describe('AUDIT_*_PATTERN that could reach other indices', () => {
  it('is refused when saved (422 naming the variable); a value saved before the rule is skipped', async () => {
    const t = await appWith({}, bridgeWithCa);
    for (const pattern of ['svc-sec-user-activity-*,secret-*', 'o*', '*', 'svc*', 'other-secret-index']) {
      const res = await t.app.request('/api/auth/v3/settings', {
        method: 'PATCH',
        headers: { Authorization: admin, 'Content-Type': 'application/json' },
        body: JSON.stringify({ values: { AUDIT_USER_ACTIVITY_PATTERN: pattern } }),
      });
      expect(res.status, pattern).toBe(422);
      expect(await res.text()).toContain('svc-sec-');
    }
    // A row written before the rule (or by hand) is reported and skipped: the default pattern runs.
    await t.db.run(sql`INSERT INTO settings (name, value, updated_at) VALUES ('AUDIT_USER_ACTIVITY_PATTERN', 'o*', 0)`);
    const res = await search(t);
    expect(res.status).not.toBe(503);
    expect(store.requests.map((r) => r.path)).toEqual(['/svc-sec-user-activity-*/_search']);
  });
});

describe('export', () => {
  it('a page failing after the first aborts the transfer (never a complete-looking partial file)', async () => {
    store.seed(
      'svc-sec-user-activity-2026.11.26',
      Array.from({ length: 1200 }, (_, i) => ({
        _id: `x${i}`,
        '@timestamp': new Date(Date.UTC(2026, 10, 26, 10, 0, i)).toISOString(),
        event: { id: `x-${String(i).padStart(4, '0')}`, type: 't' },
      })),
    );
    const real = injectClient(bridgeWithCa);
    let calls = 0;
    const failing: BridgeClient = {
      status: () => real.status(),
      call: (path, body, schema, timeoutMs) => {
        calls += 1;
        if (calls === 3) return Promise.reject(new ProblemError('BAD_GATEWAY', { detail: 'every node failed' }));
        return real.call(path, body, schema, timeoutMs);
      },
    };
    const t = await createTestApp({ OUTBOX_CONTEXT_DETACH: 'False' }, { bridge: failing });
    apps.push(t);
    await settings(t, { LOGSTORE_URLS: store.urls.join(';') });
    const res = await t.app.request('/api/auth/v3/logs/user_activity/export', { headers: { Authorization: admin } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let lines = 0;
    const read = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        lines += new TextDecoder().decode(value).split('\n').length - 1;
      }
    };
    await expect(read()).rejects.toThrow('every node failed');
    expect(lines).toBe(1000);
    expect(calls).toBe(3);
  });
});

describe('CSV cells and cursors', () => {
  it('neutralises formula cells and quotes per RFC 4180', () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`);
    for (const lead of ['+', '-', '@', '\t', '\r'])
      expect(csvCell(`${lead}1`).replace(/^"/, '').startsWith(`'${lead}`)).toBe(true);
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell(null)).toBe('');
    expect(csvLine({ '@timestamp': 't', event: { id: 'e', type: 'x' }, actor: { login: '@evil' } })).toBe(
      `t,e,x,,'@evil,,,"{""@timestamp"":""t"",""event"":{""id"":""e"",""type"":""x""},` +
        `""actor"":{""login"":""@evil""}}"\r\n`,
    );
  });

  it('cursors round-trip; anything else is refused', () => {
    expect(decodeCursor(encodeCursor([1_797_948_800_000, 'e1']))).toEqual([1_797_948_800_000, 'e1']);
    expect(decodeCursor(encodeCursor([5, null]))).toEqual([5, null]);
    const forged = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const bad of [
      '',
      'not base64!',
      forged({ a: 1 }),
      forged([1]),
      forged(['x', 'y']),
      forged([1.5, 'e']),
      forged([1, { script: 1 }]),
      'A'.repeat(2000),
    ]) {
      expect(() => decodeCursor(bad), bad).toThrow(/cursor/);
    }
  });
});

describe('GET /v3/logs/pipeline and /health/ready', () => {
  it('counts waiting events, dead letters, oldest age and last error per stream; the shipping job', async () => {
    const t = await appWith({});
    const now = t.clock.now;
    const row = (id: string, stream: string, at: number, o: Partial<typeof auditOutbox.$inferInsert> = {}) => ({
      id,
      stream,
      type: 'x',
      at,
      ...o,
    });
    // Events the app itself writes (the settings change, each Basic login) go to other streams;
    // start from a known state.
    await t.db.delete(auditOutbox);
    await t.db.insert(auditOutbox).values([
      row('a1', 'crud_user', now - 120_000),
      row('a2', 'crud_user', now - 60_000, {
        attempts: 2,
        lastError: 'the log store answered 503',
        nextAttemptAt: now + 5_000,
      }),
      row('a3', 'crud_user', now - 30_000, { attempts: 1, lastError: 'older failure', nextAttemptAt: now - 1_000 }),
      row('a4', 'crud_user', now - 500_000, { shippedAt: now - 400_000 }),
      row('d1', 'crud_user', now - 90_000, {
        deadAt: now - 80_000,
        lastError: 'mapper_parsing_exception: failed to parse',
      }),
      row('c1', 'crud_admin', now - 10_000, { deadAt: now - 9_000, lastError: 'refused' }),
      row('c2', 'crud_admin', now - 3_000, { shippedAt: now - 2_000, lastError: 'was retried, then shipped' }),
    ]);
    await t.db.insert(jobLeases).values({
      name: 'ship-audit-outbox',
      holder: 'h',
      until: now - 59_000,
      lastRunAt: now - 60_000,
      lastDurationMs: 1_000,
      lastResult: '{"shipped":4}',
    });

    const res = await t.app.request('/api/auth/v3/logs/pipeline', { headers: { Authorization: admin } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      streams: Array<Record<string, unknown>>;
      shippingJob: Record<string, unknown>;
    };
    expect(body.streams.map((s) => s.stream).sort()).toEqual([
      'api_access',
      'crud_admin',
      'crud_user',
      'data_lifecycle',
      'ext_service_access',
      'user_activity',
    ]);
    const of = (name: string) => body.streams.find((s) => s.stream === name)!;
    expect(of('crud_user')).toEqual({
      stream: 'crud_user',
      pattern: 'svc-sec-crud-user-logs-*',
      depth: 3,
      oldestUndeliveredAt: new Date(now - 120_000).toISOString(),
      oldestUndeliveredAgeSeconds: 120,
      deadLetters: 1,
      lastError: 'the log store answered 503',
    });
    expect(of('crud_admin')).toMatchObject({
      depth: 0,
      oldestUndeliveredAt: null,
      oldestUndeliveredAgeSeconds: null,
      deadLetters: 1,
      lastError: 'refused',
    });
    expect(of('api_access')).toMatchObject({ depth: 0, deadLetters: 0, lastError: null });
    expect(body.shippingJob).toEqual({
      name: 'ship-audit-outbox',
      lastRunAt: new Date(now - 60_000).toISOString(),
      lastDurationMs: 1000,
      lastResult: { shipped: 4 },
      running: false,
    });

    await t.db.delete(auditOutbox).where(eq(auditOutbox.stream, 'user_activity')); // the Basic login's event
    const ready = (await (await t.app.request('/api/auth/health/ready')).json()) as { auditPipeline: unknown };
    expect(ready.auditPipeline).toEqual({ depth: 3, oldestUndeliveredAgeSeconds: 120 });

    // A run holding the lease shows as running.
    await t.db.update(jobLeases).set({ until: now + 30_000 });
    const running = (await (
      await t.app.request('/api/auth/v3/logs/pipeline', { headers: { Authorization: admin } })
    ).json()) as { shippingJob: { running: boolean } };
    expect(running.shippingJob.running).toBe(true);
  });

  it('readiness never fails because of the pipeline: an unreadable outbox is reported as null', async () => {
    const t = await appWith({});
    await t.db.run(sql.raw('alter table audit_outbox rename to audit_outbox_gone'));
    try {
      const res = await t.app.request('/api/auth/health/ready');
      expect(res.status).toBe(200);
      expect(((await res.json()) as { auditPipeline: unknown }).auditPipeline).toBeNull();
    } finally {
      await t.db.run(sql.raw('alter table audit_outbox_gone rename to audit_outbox'));
    }
  });
});

/**
 * Fault drills (docs/operations.md, "Fault drills"), on both hosts: the bridge killed (SIGKILL of its process) while
 * LDAP logins and an audit shipping batch are in flight, and the database locked by another connection
 * (`BEGIN EXCLUSIVE` on the same file; on the edge, the file behind the libSQL dev server). Each
 * answer must be a clean problem+json 503 (the database: with Retry-After), never a 500 or a hang;
 * nothing half-written, nothing counted as a wrong password, the outbox intact and drained without
 * duplicates afterwards. The Node host killed during logins: test/unit/faults-sigkill.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from '@libsql/client';
import Database from 'libsql';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startBridgeProcess, type BridgeProcess } from '../harness/bridge-process.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { farDatabase, remoteDatabase, type FarDatabase } from '../harness/far-database.js';
import { freePort, startEdgeTestHost, startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';
import { startSilentServer, startSlapd, type SilentServer, type Slapd } from '../harness/slapd.js';

let host: RunningHost;
let bridge: BridgeProcess;
let store: TestLogStore;
let slapd: Slapd;
let silent: SilentServer;
let db: Client;
let dir: string;
let dbPath: string;
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Str0ng$pass';
/** Fewer than the drills' failed attempts: a failure counted by mistake would lock the login. */
const FAILED_COUNT = 3;

type Json = Record<string, any>;
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rows = async (sqlText: string, args: Array<string | number> = []) =>
  (await db.execute({ sql: sqlText, args })).rows;

/** A clean problem+json answer of `status` with `code` (never a 500, never an HTML or empty body). */
function expectProblem(r: { status: number; body: Json; res: Response }, status: number, code: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.res.headers.get('content-type')).toContain('application/problem+json');
  expect(r.body).toMatchObject({ status, code });
}

async function settings(values: Record<string, unknown>) {
  const r = await api('/v3/settings', { method: 'PATCH', auth: admin, json: { values } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function addLdapServer(name: string, urls: string[]) {
  const r = await api('/v3/settings/ldap-servers', {
    method: 'POST',
    auth: admin,
    json: {
      name,
      urls,
      startTls: false,
      bindDn: slapd.serviceDn,
      bindPassword: slapd.servicePassword,
      baseDn: slapd.baseDn,
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

const shipNow = () => api<Json>('/__test__/jobs', { method: 'POST', json: { names: ['ship-audit-outbox'] } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'faults-'));
  dbPath = join(dir, 'auth.db');
  [store, slapd, silent] = await Promise.all([startTestLogStore({ nodes: 1 }), startSlapd(), startSilentServer()]);
  bridge = await startBridgeProcess({ ca: store.caPem });
  // Shipping runs only when a test asks (/__test__/jobs), so the drill decides what is in flight.
  host = await startTestHost(
    inject('hostKind'),
    {
      ...bridge.env,
      LOGSTORE_VERIFY_CERTS: 'True',
      OUTBOX_CONTEXT_DETACH: 'False',
      IN_APP_SCHEDULER_ENABLED: 'False',
      AUTH_FAILED_COUNT: String(FAILED_COUNT),
      AUTH_SESSIONS_DEFAULT_COUNT: '50',
      AUTH_SESSIONS_MAX_COUNT: '100',
    },
    { database: dbPath },
  );
  db = createClient({ url: host.libsqlUrl });
  await addLdapServer('corp', [slapd.ldapUrl]);
  // A directory that accepts the connection and never answers: its logins stay in flight at the bridge.
  await addLdapServer('hang', [silent.url]);
  await settings({
    LDAP_SERVER_CONNECT_TIMEOUT: 60,
    LDAP_SERVER_SEARCHING_TIMEOUT: 60,
    LOGSTORE_URLS: store.urls[0],
    LOGSTORE_TIMEOUT: 20,
  });
}, 180_000);

afterAll(async () => {
  db?.close();
  await host?.stop();
  await Promise.all([bridge?.stop(), store?.stop(), slapd?.stop(), silent?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the bridge killed (SIGKILL) mid-flight', () => {
  // A failed drill must not leave the next one without a bridge or with a slow store.
  afterEach(async () => {
    await bridge.start();
    await store.nodes[0]!.set('up');
  });

  it('LDAP logins in flight: clean 503s, nothing counted or half-written; successes keep their sessions', async () => {
    const others = ['alice', 'carol', 'jose'].map((k) => slapd.user(k));
    const bob = slapd.user('bob');
    const started = Date.now();
    const bobLogin = () =>
      api('/v3/login', { method: 'POST', json: { login: bob.login, password: bob.password, ldapServer: 'hang' } });
    // Bob's logins wait at the bridge for a directory that never answers (as many as the lockout lets
    // be in flight at once); the others' reach slapd, before and after the kill.
    const hung = Array.from({ length: FAILED_COUNT }, bobLogin);
    const steady: Promise<{ status: number; body: Json; res: Response }>[] = [];
    // The kill comes once some have succeeded (whatever the machine's load), and more follow it.
    let succeeded = 0;
    let killedAt = -1;
    for (let i = 0; i < 80 && (killedAt < 0 || i < killedAt + 4); i++) {
      const u = others[i % others.length]!;
      const login = api('/v3/login', {
        method: 'POST',
        json: { login: u.login, password: u.password, ldapServer: 'corp' },
      });
      void login.then((r) => (succeeded += r.status === 200 ? 1 : 0)).catch(() => undefined);
      steady.push(login);
      // Kept: pacing, not a wait: a steady flow of logins before and after the kill.
      await sleep(150);
      if (killedAt < 0 && i >= 5 && succeeded > 0) {
        await bridge.kill();
        killedAt = i;
      }
    }
    expect(killedAt).toBeGreaterThan(0);
    const answers = await Promise.all([...hung, ...steady]);
    // The kill ends the wait at once: far sooner than the 60 s directory timeouts.
    expect(Date.now() - started).toBeLessThan(30_000);
    for (const r of answers.slice(0, hung.length)) expectProblem(r, 503, 'SERVICE_UNAVAILABLE');
    const ok = answers.slice(hung.length).filter((r) => r.status === 200);
    for (const r of answers.slice(hung.length)) if (r.status !== 200) expectProblem(r, 503, 'SERVICE_UNAVAILABLE');
    expect(ok.length).toBeGreaterThan(0);
    expect(ok.length).toBeLessThan(steady.length);
    // While it is down: as many again, each a 503 at once (twice AUTH_FAILED_COUNT in all).
    for (let i = 0; i < FAILED_COUNT; i++) expectProblem(await bobLogin(), 503, 'SERVICE_UNAVAILABLE');

    // Nothing half-written: no attempt left counted, no lock, no account for Bob (never judged).
    expect(await rows(`select throttle_key from login_attempts where throttle_key like 'ldap:%'`)).toEqual([]);
    expect(await rows(`select throttle_key from login_locks`)).toEqual([]);
    expect(await rows(`select id from users where login_key = ?`, [bob.login.toLowerCase()])).toEqual([]);

    await bridge.start();
    // Each acknowledged login has its session: its cookie works.
    for (const r of ok) {
      const cookie = r.res.headers
        .getSetCookie()
        .find((c) => c.startsWith('auth_session='))!
        .split(';')[0]!;
      const me = await api('/v4/users/me', { headers: { Cookie: cookie } });
      expect(me.status, JSON.stringify(me.body)).toBe(200);
    }
    // The 503s were not counted: twice AUTH_FAILED_COUNT of them, and Bob is not locked.
    const patched = await api('/v3/settings/ldap-servers/hang', {
      method: 'PATCH',
      auth: admin,
      json: { urls: [slapd.ldapUrl], bindPassword: slapd.servicePassword },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const after = await bobLogin();
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  }, 90_000);

  it('a shipping batch in flight: the run reports the bridge unreachable, the outbox keeps every event; ' +
    'it drains after, once each', async () => {
    const login = uniqueLogin('ship');
    expect((await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD } })).status).toBe(
      201,
    );
    // The ids of the events waiting: a row's, or for a batch of API-access events or aggregates (one
    // row, worker/src/audit/api-access.ts), each one's, as the store gets them.
    const pending = async () =>
      (await rows('select id, stream, data from audit_outbox where shipped_at is null and dead_at is null')).flatMap(
        (r) => {
          const batch =
            r.stream === 'api_access'
              ? (JSON.parse(String(r.data)) as { events?: unknown[][]; aggregates?: unknown[][] })
              : {};
          const listed = batch.events ?? batch.aggregates;
          return listed ? listed.map((e) => String(e[0])) : [String(r.id)];
        },
      );
    const before = await pending();
    expect(before.length).toBeGreaterThan(0);

    // The store answers after 3 s: the batch is at the bridge when it dies. The store still takes it
    // (the answer is what is lost), so the retry meets 409s: "already delivered".
    await store.nodes[0]!.set('slow', { delayMs: 3000 });
    const from = store.requests.length;
    const run = shipNow();
    const bulk = await eventually(() => store.requests.slice(from).find((q) => q.path.endsWith('/_bulk')), {
      timeoutMs: 5_000,
      what: 'the batch at the store',
    });
    await bridge.kill();
    const result = await run;
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body['ship-audit-outbox']).toMatchObject({ delivered: 0, dead: 0 });
    expect(result.body['ship-audit-outbox'].unreachable).toBeGreaterThan(0);
    // Nothing lost, nothing marked delivered or dead.
    // (API-access events of the requests above may join the outbox meanwhile: written each second.)
    expect(await pending()).toEqual(expect.arrayContaining(before));

    // The slow store takes the batch once its delay is over: every document of the bulk stored.
    const sent = bulk.body
      .split('\n')
      .filter((line) => line.includes('"create"'))
      .map((line) => (JSON.parse(line) as { create: { _id: string } }).create._id);
    expect(sent.length).toBeGreaterThan(0);
    await eventually(
      () => {
        const stored = new Set(store.documents('*').map((d) => d.id));
        return sent.every((id) => stored.has(id));
      },
      { what: 'the slow batch stored' },
    );
    await store.nodes[0]!.set('up');
    await bridge.start();
    // Past the backoff (5 s for a first retry).
    expect((await api('/__test__/clock', { method: 'POST', json: { offsetMs: 60_000 } })).status).toBe(200);
    try {
      for (let i = 0; i < 5 && (await pending()).length > 0; i++) {
        const again = await shipNow();
        expect(again.status, JSON.stringify(again.body)).toBe(200);
      }
    } finally {
      await api('/__test__/clock', { method: 'POST', json: { offsetMs: 0 } });
    }
    expect(await pending()).toEqual([]);
    const ids = store.documents('*').map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of before) expect(ids).toContain(id);
  }, 90_000);
});

/** Holds the database's write lock from another connection, as another process would. */
async function lockDatabase(): Promise<{ release(): void }> {
  const other = new Database(dbPath);
  // Waits its turn without blocking this process (the edge's libSQL dev server runs in it).
  for (let i = 0; ; i++) {
    try {
      other.exec('BEGIN EXCLUSIVE');
      break;
    } catch (e) {
      if (i > 200) throw e;
      await sleep(25);
    }
  }
  return {
    release() {
      other.exec('ROLLBACK');
      other.close();
    },
  };
}

describe('the database locked by another connection', () => {
  it('a short lock: requests wait for it and succeed', async () => {
    const login = uniqueLogin('short');
    const lock = await lockDatabase();
    const created = api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD } });
    // Kept: the lock is held for a second on purpose (what is tested is a lock of that length).
    await sleep(1000);
    lock.release();
    expect((await created).status).toBe(201);
    expect((await api('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(200);
  }, 60_000);

  it('a long lock: 503 with Retry-After, never a 500; nothing counted; the host stays responsive', async () => {
    const login = uniqueLogin('lock');
    expect((await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD } })).status).toBe(
      201,
    );
    const lock = await lockDatabase();
    let answers: Array<{ status: number; body: Json; res: Response }>;
    try {
      const started = Date.now();
      const calls = [
        api('/v4/users', { method: 'POST', auth: admin, json: { login: uniqueLogin('new'), password: PASSWORD } }),
        api('/v3/login', { method: 'POST', json: { login, password: PASSWORD } }),
        ...Array.from({ length: FAILED_COUNT + 1 }, () =>
          api('/v3/login_without_session', { method: 'POST', auth: basic(login, 'Wr0ng$pass') }),
        ),
      ];
      // Meanwhile the host answers what needs no write at once (Node: the event loop is not blocked).
      // Kept: the calls reach the host and wait on the lock; nothing the host shows tells when.
      await sleep(500);
      const t = Date.now();
      expect((await api('/health/live')).status).toBe(200);
      expect(Date.now() - t).toBeLessThan(1000);
      answers = await Promise.all(calls);
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      lock.release();
    }
    for (const r of answers) {
      expectProblem(r, 503, 'SERVICE_UNAVAILABLE');
      expect(Number(r.res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // No failure was counted for the wrong passwords refused with 503, and nothing else was written.
    expect(
      await rows('select id from login_attempts where throttle_key = ?', [`local:${login.toLowerCase()}`]),
    ).toEqual([]);
    expect(await rows('select throttle_key from login_locks')).toEqual([]);
    // Once released, all is as before: the right password logs in.
    const after = await api('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) });
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  }, 90_000);
});

describe('a remote database out of reach', () => {
  let dir: string;
  let database: { url: string; close(): Promise<void> };
  let proxy: FarDatabase;
  let far: RunningHost;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'auth-unreachable-'));
    database = await remoteDatabase(dir);
    proxy = await farDatabase(database.url, 0);
    far = await startTestHost(inject('hostKind'), {}, { libsqlUrl: proxy.url, workerLogs: true });
    // The first request creates the bootstrap administrator.
    expect((await callJson('/health/ready', { base: far.url })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await far?.stop();
    await proxy?.close();
    await database?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('503 with Retry-After and one WARNING line naming it, never a 500; served again once it is back', async () => {
    const login = uniqueLogin('reach');
    const created = await callJson('/v4/users', {
      base: far.url,
      method: 'POST',
      auth: admin,
      json: { login, password: PASSWORD },
    });
    expect(created.status).toBe(201);
    proxy.cut(true);
    try {
      for (const o of [
        { path: '/v3/login_without_session', method: 'POST', auth: basic(login, PASSWORD) },
        { path: '/v4/users', method: 'GET', auth: admin },
      ]) {
        const r = await callJson(o.path, { base: far.url, method: o.method, auth: o.auth });
        expectProblem(r, 503, 'SERVICE_UNAVAILABLE');
        expect((r.body as { detail?: string }).detail).toBe('the database cannot be reached: try again shortly');
        expect(Number(r.res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    } finally {
      proxy.cut(false);
    }
    // The Node host writes its log lines in batches (every 10 ms at most): waited for, not read at once.
    await expect
      .poll(() => far.output(), { timeout: 10_000 })
      .toMatch(/"level":"WARNING".*"msg":"the database cannot be reached".*"cause":"DATABASE_UNREACHABLE"/);
    expect(far.output()).not.toContain('unhandled error');
    const again = await callJson('/v3/login_without_session', {
      base: far.url,
      method: 'POST',
      auth: basic(login, PASSWORD),
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  }, 90_000);
});

describe('the OpenAPI document', () => {
  it('documents the 503 of a busy database on every operation', async () => {
    const doc = await api<{
      paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>>;
    }>('/openapi.json');
    expect(doc.status).toBe(200);
    for (const [path, ops] of Object.entries(doc.body.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.responses['503']?.description, `${method} ${path}`).toContain('the database is busy');
      }
    }
  });
});

describe('a restart with another DB_SCHEMA', () => {
  it('is refused: Node exits 1 before serving; the edge answers 503 (liveness excepted) and logs why', async () => {
    if (inject('hostKind') === 'node') {
      // `npm start` on this host's database, under another DB_SCHEMA.
      const child = spawn(process.execPath, ['--import', 'tsx', 'worker/node/main.ts'], {
        cwd: join(import.meta.dirname, '../..'),
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          AUTH_BRIDGE_EMBEDDED: 'False',
          LIBSQL_URL: `file:${dbPath}`,
          AUTH_DB_SCHEMA: 'another_tenant',
          AUTH_BIND_HOST: '127.0.0.1',
          AUTH_BIND_PORT: String(await freePort()),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.stderr.on('data', (d: Buffer) => (out += d));
      const code = await new Promise<number | null>((res) => child.on('exit', res));
      expect(code).toBe(1);
      expect(out).toMatch(/"level":"CRITICAL".*stamped with DB_SCHEMA \\"auth\\".*another_tenant/);
      expect(out).not.toContain('serving');
    } else {
      // The edge has no start: a deployment whose DB_SCHEMA differs from the database's stamp.
      const edge = await startEdgeTestHost({}, { workerLogs: true });
      try {
        const other = createClient({ url: edge.libsqlUrl });
        await other.execute(`update service_meta set value = 'another_tenant' where key = 'db_schema'`);
        other.close();
        // Liveness reads nothing (the isolate answers; docs/architecture.md §6, "A far database"); readiness
        // and everything else are refused.
        expect((await callJson<Json>('/health/live', { base: edge.url })).status).toBe(200);
        for (const path of ['/health/ready', '/v3/login']) {
          const r = await callJson<Json>(path, {
            base: edge.url,
            method: path === '/v3/login' ? 'POST' : 'GET',
            json: path === '/v3/login' ? { login: ADMIN.login, password: ADMIN.password } : undefined,
          });
          expectProblem(r, 503, 'SERVICE_UNAVAILABLE');
          expect(r.body.detail).toContain('DB_SCHEMA');
        }
        // wrangler dev passes the worker's log lines on a moment after the answer.
        await expect
          .poll(() => edge.output(), { timeout: 10_000 })
          .toMatch(/refusing the database: the database is stamped with DB_SCHEMA \\?"another_tenant\\?"/);
        // Nothing was written: no first administrator in the refused database.
        const check = createClient({ url: edge.libsqlUrl });
        expect((await check.execute('select count(*) as c from users')).rows[0]!.c).toBe(0);
        check.close();
      } finally {
        await edge.stop();
      }
    }
  }, 180_000);
});

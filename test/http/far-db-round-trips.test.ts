/**
 * Round trips to a far database on the hot paths (docs/architecture.md §6, "A far database"; docs/performance.md):
 * a host (edge: workerd; Node: a remote libSQL URL) reaches its database through a delaying proxy that
 * counts every libSQL HTTP request. A warm session or token makes none within AUTH_REVOCATION_CHECK_SEC;
 * a tampered, expired or foreign-key cookie is refused without one; a logout makes one, a login and a
 * settings change at most two. On both hosts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, call, callJson, testClock, uniqueLogin } from '../harness/client.js';
import { farDatabase, remoteDatabase, type FarDatabase } from '../harness/far-database.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
/** Each round trip to the far database takes this long. */
const DELAY = 150;
const KEY = 'far-db-session-key-0123456789abcdefghij';
const PASSWORD = 'F4r$dbpass';
const admin = basic(ADMIN.login, ADMIN.password);

let dir: string;
let database: { url: string; close(): Promise<void> } | undefined;
let near: RunningHost;
let far: RunningHost;
let proxy: FarDatabase;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'auth-far-db-'));
  const env = { SESSION_SECRET_KEY: KEY, AUTH_SESSIONS_DEFAULT_COUNT: '5', AUTH_REVOCATION_CHECK_SEC: '30' };
  if (kind === 'node') {
    database = await remoteDatabase(dir);
    near = await startTestHost('node', env, { libsqlUrl: database.url });
  } else {
    near = await startTestHost('edge', env);
  }
  // Its first request creates the bootstrap administrator: the database is then as in production.
  expect((await call('/health/ready', { base: near.url })).status).toBe(200);
  proxy = await farDatabase(near.libsqlUrl, DELAY);
  // Without the Node host's scheduled jobs: a job's reads are no request's round trips, and one that falls
  // within a request's window would be counted as its own.
  far = await startTestHost(kind, { ...env, IN_APP_SCHEDULER_ENABLED: 'False' }, { libsqlUrl: proxy.url });
  expect((await call('/health/ready', { base: far.url })).status).toBe(200);
});

afterAll(async () => {
  await far?.stop();
  await proxy?.close();
  await near?.stop();
  await database?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Init = Parameters<typeof call>[1];
const SETTINGS_REFRESH =
  /^\{"requests":\[\{"type":"execute","stmt":\{"sql":"select \\"name\\", \\"value\\" from \\"settings\\""/;

/** Sends a request to the far host once earlier work settled; its status and the round trips its answer waited for. */
async function measured(path: string, o: Init = {}) {
  await proxy.settle();
  const since = performance.now();
  const res = await call(path, { ...o, base: far.url });
  await res.arrayBuffer();
  // The settings refresh a request may start, and a batch of earlier requests' API-access events (Node: a
  // timer), run in the background (nothing waits for them) but can finish before a slower answer: they are
  // not the answer's round trips.
  const trips = proxy.between(since, performance.now()).filter((t) => !SETTINGS_REFRESH.test(t.sql) && !t.apiAccess);
  return { status: res.status, res, trips: trips.length, sql: trips.map((t) => t.sql).join('\n') };
}

async function newUser(): Promise<string> {
  const login = uniqueLogin('far');
  const r = await callJson('/v4/users', {
    base: near.url,
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD },
  });
  expect(r.status).toBe(201);
  return login;
}

const sessionCookieOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('auth_session='))!;

const deviceCookieOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => /^(__Host-)?auth_device=/.test(c))!;

describe(`a ${kind} host on a far database`, () => {
  const clock = testClock(() => near?.url);
  it('a warm session or token makes no round trip, also after the old one-second cache life', async () => {
    const login = await newUser();
    const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
      base: near.url,
      method: 'POST',
      auth: basic(login, PASSWORD),
      json: { name: 'far' },
    });
    const cookie = sessionCookieOf(
      await call('/v3/login', { base: near.url, method: 'POST', json: { login, password: PASSWORD } }),
    );
    const bearer = `Bearer ${issued.body.token}`;
    // The first use reads the credential (and may refresh the settings).
    expect((await measured('/v4/users/me', { headers: { Cookie: cookie } })).status).toBe(200);
    expect((await measured('/v4/users/me', { auth: bearer })).status).toBe(200);
    for (let i = 1; i <= 2; i++) {
      // The service's clock, which the credential caches go by, a second and a half later each time.
      await clock.move(i * 1500);
      const byCookie = await measured('/v4/users/me', { headers: { Cookie: cookie } });
      expect(byCookie.status).toBe(200);
      expect(byCookie.trips, byCookie.sql).toBe(0);
      const byToken = await measured('/v4/users/me', { auth: bearer });
      expect(byToken.status).toBe(200);
      expect(byToken.trips, byToken.sql).toBe(0);
    }
  });

  it('a tampered, expired or foreign-key cookie is refused without a round trip', async () => {
    const login = await newUser();
    const cookie = sessionCookieOf(
      await call('/v3/login', { base: near.url, method: 'POST', json: { login, password: PASSWORD } }),
    );
    const token = cookie.slice('auth_session='.length);
    const claims = decodeJwt(token);
    const sign = (key: string, c: Record<string, unknown>) =>
      new SignJWT(c).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(key));
    const [head, , signature] = token.split('.');
    const otherSid = Buffer.from(JSON.stringify({ ...claims, sid: 'another-session' })).toString('base64url');
    const cases = {
      tampered: `${head}.${otherSid}.${signature}`,
      expired: await sign(KEY, { ...claims, exp: Math.floor(Date.now() / 1000) - 60 }),
      foreign: await sign('another-key-0123456789abcdefghijklmnopq', claims),
    };
    for (const [name, value] of Object.entries(cases)) {
      const r = await measured('/v4/users/me', { headers: { Cookie: `auth_session=${value}` } });
      expect(r.status, name).toBe(401);
      expect(r.res.headers.get('content-type'), name).toMatch(/^application\/problem\+json/);
      expect(r.trips, `${name}: ${r.sql}`).toBe(0);
    }
  });

  it('a Basic login makes at most two round trips, and so does a login with a device cookie', async () => {
    const login = await newUser();
    for (let i = 0; i < 3; i++) {
      const r = await measured('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) });
      expect(r.status, r.sql).toBe(200);
      expect(r.trips, r.sql).toBeLessThanOrEqual(2);
    }
    // A browser that logged in before presents its device cookie: its own budget. Its address is idle, so
    // the priority lane would gain it nothing and the row is read in the attempt's batch only
    // (architecture.md §6, "A login with a device cookie"), the first time too.
    const first = await measured('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
    expect(first.status).toBe(200);
    let device = deviceCookieOf(first.res);
    for (let i = 0; i < 3; i++) {
      const r = await measured('/v3/login', {
        method: 'POST',
        headers: { Cookie: device },
        json: { login, password: PASSWORD },
      });
      expect(r.status, r.sql).toBe(200);
      expect(r.trips, r.sql).toBeLessThanOrEqual(2);
      device = deviceCookieOf(r.res);
    }
  });

  it('a logout makes one round trip, a login at most two, a settings change at most two', async () => {
    const login = await newUser();
    const loggedIn = await measured('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
    expect(loggedIn.status).toBe(200);
    expect(loggedIn.trips, loggedIn.sql).toBeLessThanOrEqual(2);
    const cookie = sessionCookieOf(loggedIn.res);
    const out = await measured('/v3/logout', { method: 'POST', headers: { Cookie: cookie, Origin: far.origin } });
    expect(out.status).toBe(204);
    expect(out.trips, out.sql).toBe(1);
    // The session has ended: on this instance at once.
    expect((await measured('/v4/users/me', { headers: { Cookie: cookie } })).status).toBe(401);

    const adminCookie = sessionCookieOf((await measured('/v3/login', { method: 'POST', json: ADMIN })).res);
    // A warm session (as an administrator's console is): the change's own round trips, its step-up read included.
    expect((await measured('/v3/settings', { headers: { Cookie: adminCookie } })).status).toBe(200);
    const patch = await measured('/v3/settings', {
      method: 'PATCH',
      headers: { Cookie: adminCookie, Origin: far.origin },
      json: { values: { AUTH_FAILED_COUNT: 4 } },
    });
    expect(patch.status, patch.sql).toBe(200);
    expect(patch.trips, patch.sql).toBeLessThanOrEqual(2);
  });
});

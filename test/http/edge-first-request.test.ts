/**
 * An edge isolate's first requests against a far database (docs/architecture.md §6, "A far
 * database"): every libSQL HTTP request is a round trip, counted here by a proxy in front of the
 * libSQL dev server. Liveness reads nothing; any other first request makes one round trip (the
 * DB_SCHEMA stamp, whether an administrator exists and the saved settings, in one batch) before the
 * app runs; the next request within the settings' freshness makes none of its own. A first request
 * with an API token or a session cookie makes one too: its token's or session's lookup rides in that
 * batch, and is never used on a database of another DB_SCHEMA (every request refused, as without one).
 * The Node host reads all that once at start, so this suite runs on the edge host only.
 */
import { createClient } from '@libsql/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, call, callJson, uniqueLogin } from '../harness/client.js';
import { farDatabase, type FarDatabase } from '../harness/far-database.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const edge = inject('hostKind') === 'edge';

/** Each round trip to the far database (test/harness/far-database.ts) takes this long. */
const DELAY = 400;

/** Sends a request and returns its status and the round trips its answer waited for. */
async function roundTrips(path: string, o: Parameters<typeof call>[1] = {}, host = second) {
  const since = performance.now();
  const res = await call(path, { ...o, base: host.url });
  await res.arrayBuffer();
  const trips = proxy.between(since, performance.now());
  return { status: res.status, trips: trips.length, sql: trips.map((t) => t.sql) };
}

let first: RunningHost;
let second: RunningHost;
let third: RunningHost | undefined;
let proxy: FarDatabase;

describe.runIf(edge)('an edge isolate on a far database', () => {
  beforeAll(async () => {
    first = await startTestHost('edge');
    // Its first request creates the bootstrap administrator: the database is then as in production.
    expect((await call('/health/ready', { base: first.url })).status).toBe(200);
    proxy = await farDatabase(first.libsqlUrl, DELAY);
    second = await startTestHost('edge', {}, { libsqlUrl: proxy.url });
  });

  afterAll(async () => {
    await third?.stop();
    await second?.stop();
    await proxy?.close();
    await first?.stop();
  });

  it('liveness reads nothing; the first other request waits for one round trip; the next one for none', async () => {
    expect(await roundTrips('/health/live')).toMatchObject({ status: 200, trips: 0 });
    const anonymous = await roundTrips('/v4/users/me');
    expect(anonymous.status).toBe(401);
    expect(anonymous.trips, anonymous.sql.join('\n')).toBe(1);
    expect(await roundTrips('/v4/users/me')).toMatchObject({ status: 401, trips: 0 });
  });

  /** A new account, made through the first host (whose isolate has checked its stamp). */
  async function newAccount(): Promise<{ login: string; password: string }> {
    const login = uniqueLogin('first');
    const password = 'F4r$dbpass';
    const made = await callJson('/v4/users', {
      base: first.url,
      method: 'POST',
      auth: basic(ADMIN.login, ADMIN.password),
      json: { login, password },
    });
    expect(made.status).toBe(201);
    return { login, password };
  }

  /** A new account's API token, made through the first host. */
  async function bearerOfNewAccount(): Promise<string> {
    const { login, password } = await newAccount();
    const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
      base: first.url,
      method: 'POST',
      auth: basic(login, password),
      json: { name: 'first request' },
    });
    expect(issued.status).toBe(201);
    return `Bearer ${issued.body.token}`;
  }

  it('a first request with an API token waits for one round trip (its lookup in the start-up batch)', async () => {
    const auth = await bearerOfNewAccount();
    // A fresh isolate: its first request is this one.
    third = await startTestHost('edge', {}, { libsqlUrl: proxy.url });
    const firstUse = await roundTrips('/v4/users/me', { auth }, third);
    expect(firstUse.status).toBe(200);
    expect(firstUse.trips, firstUse.sql.join('\n')).toBe(1);
    const again = await roundTrips('/v4/users/me', { auth }, third);
    expect(again).toMatchObject({ status: 200, trips: 0 });
  });

  it('a first request with a session cookie waits for one round trip (its session in the start-up batch)', async () => {
    const { login, password } = await newAccount();
    const loggedIn = await call('/v3/login', { base: first.url, method: 'POST', json: { login, password } });
    expect(loggedIn.status).toBe(200);
    const cookie = loggedIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => c.startsWith('auth_session='))!;
    let fresh: RunningHost | undefined;
    try {
      fresh = await startTestHost('edge', {}, { libsqlUrl: proxy.url });
      const firstUse = await roundTrips('/v4/users/me', { headers: { Cookie: cookie } }, fresh);
      expect(firstUse.status).toBe(200);
      expect(firstUse.trips, firstUse.sql.join('\n')).toBe(1);
      expect(await roundTrips('/v4/users/me', { headers: { Cookie: cookie } }, fresh)).toMatchObject({
        status: 200,
        trips: 0,
      });
    } finally {
      await fresh?.stop();
    }
  });

  it('on a database of another DB_SCHEMA, a first request with a live API token is refused all the same', async () => {
    const auth = await bearerOfNewAccount();
    const db = createClient({ url: first.libsqlUrl });
    await db.execute(`update service_meta set value = 'another_tenant' where key = 'db_schema'`);
    let refused: RunningHost | undefined;
    try {
      refused = await startTestHost('edge', {}, { libsqlUrl: proxy.url });
      for (let i = 0; i < 2; i++) {
        const r = await callJson<{ code: string; detail: string }>('/v4/users/me', { auth, base: refused.url });
        expect(r.status).toBe(503);
        expect(r.body.detail).toContain('DB_SCHEMA');
      }
    } finally {
      await refused?.stop();
      await db.execute(`update service_meta set value = 'auth' where key = 'db_schema'`);
      db.close();
    }
  });
});

/**
 * The audit outbox as each host writes it (read from the host's database): a security event
 * carries the request that caused it (our request id, the client's address, its User-Agent, the
 * instance) and its outcome; requests authenticated with Basic or Bearer are recorded as api_access
 * events after a flush, cookie requests are not, and AUTH_AUDIT_API_ACCESS=False turns them off.
 */
import { hostname } from 'node:os';
import { createClient, type Client } from '@libsql/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, testClock } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
const UA = 'audit-trail-test/1.0';

interface Row {
  type: string;
  stream: string;
  outcome: string | null;
  source_ip: string | null;
  user_agent: string | null;
  host: string | null;
  request_id: string | null;
  actor_login: string | null;
  subject_login: string | null;
  data: string | null;
}

async function rows(db: Client, where: string, args: string[]): Promise<Row[]> {
  const rs = await db.execute({ sql: `select * from audit_outbox where ${where} order by at`, args });
  return rs.rows as unknown as Row[];
}

/**
 * The API-access events of the given requests (an aggregate by its first request). They are stored a
 * batch per row, each event a list of values in `data.events`, each aggregate of successful reads in
 * `data.aggregates` (worker/src/audit/api-access.ts); each is read back here with its row's stream,
 * type and host, as the shipper sends it.
 */
async function apiAccessEvents(db: Client, requestIds?: string[]): Promise<Row[]> {
  const events: Row[] = [];
  for (const row of await rows(db, `stream = 'api_access'`, [])) {
    const batch = JSON.parse(row.data!) as { events?: unknown[][]; aggregates?: unknown[][] };
    const listed = batch.events ?? batch.aggregates ?? [];
    expect(Number((row as unknown as { events: number }).events)).toBe(listed.length);
    for (const [
      ,
      at,
      ,
      actorLogin,
      requestId,
      sourceIp,
      userAgent,
      method,
      httpMethod,
      path,
      status,
      ...rest
    ] of listed) {
      const [count, last, tokenId] = batch.aggregates ? rest : [undefined, undefined, rest[0]];
      events.push({
        ...row,
        outcome: (status as number) < 400 ? 'success' : 'failure',
        source_ip: sourceIp as string | null,
        user_agent: userAgent as string | null,
        request_id: requestId as string,
        actor_login: actorLogin as string,
        data: JSON.stringify({
          method,
          httpMethod,
          path,
          status,
          ...(tokenId ? { tokenId } : {}),
          ...(batch.aggregates
            ? { count, first: new Date(at as number).toISOString(), last: new Date(last as number).toISOString() }
            : {}),
        }),
      });
    }
  }
  return requestIds ? events.filter((e) => requestIds.includes(e.request_id!)) : events;
}

/** Sends a request and answers its status and our request id. */
async function send(host: RunningHost, path: string, init: RequestInit = {}): Promise<{ status: number; id: string }> {
  const headers = new Headers(init.headers);
  headers.set('User-Agent', UA);
  const res = await fetch(`${host.url}${path}`, { ...init, headers });
  await res.arrayBuffer();
  return { status: res.status, id: res.headers.get('X-Request-Id') ?? '' };
}

/**
 * Polls until `check` passes. API-access events are written within about a second on Node (a
 * timer); on the edge by the next Basic or Bearer request that finds the batch aged, so each try
 * that finds them missing sends one (its own event is not among those checked).
 */
async function written<T>(host: RunningHost, read: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  return eventually(
    async () => {
      const value = await read();
      if (check(value)) return value;
      await send(host, '/v4/users/me', { headers: { Authorization: admin } });
    },
    { timeoutMs: 15_000, intervalMs: 100, what: 'the api_access events' },
  );
}

/**
 * Bearer, Basic and cookie requests to GET /v4/users/me; then one more Basic in the next aggregation
 * window of the service's clock (moved by `clock`).
 */
async function apiTraffic(host: RunningHost, clock: ReturnType<typeof testClock>) {
  const issued = await fetch(`${host.url}/v4/users/me/tokens`, {
    method: 'POST',
    headers: { Authorization: admin, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'audit-trail' }),
  });
  const { token, id: tokenId } = (await issued.json()) as { token: string; id: string };
  const login = await fetch(`${host.url}/v3/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ login: ADMIN.login, password: ADMIN.password }),
  });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const bearer = await send(host, '/v4/users/me', { headers: { Authorization: `Bearer ${token}` } });
  const basicCall = await send(host, '/v4/users/me', { headers: { Authorization: admin } });
  const cookieCall = await send(host, '/v4/users/me', { headers: { Cookie: cookie } });
  const refused = await send(host, '/v3/settings', {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: '{"values":{"NOPE":1}}',
  });
  // A window of AUTH_AUDIT_API_ACCESS_WINDOW_SEC (1 s) later: an aggregate of its own.
  await clock.move(1_100);
  const last = await send(host, '/v4/users/me', { headers: { Authorization: admin } });
  for (const r of [bearer, basicCall, cookieCall, last]) expect(r.status).toBe(200);
  return { tokenId, bearer, basicCall, cookieCall, refused, last };
}

describe(`audit trail (${kind} host)`, () => {
  let host: RunningHost;
  let db: Client;
  const clock = testClock(() => host?.url);

  beforeAll(async () => {
    // Windows of a second, so that aggregates of successful reads are written within the test.
    host = await startTestHost(kind, { AUTH_AUDIT_API_ACCESS_WINDOW_SEC: '1' });
    db = createClient({ url: host.libsqlUrl });
  }, 120_000);
  afterAll(async () => {
    db?.close();
    await host?.stop();
  });

  it('a security event carries the request: id, client address, User-Agent, instance, outcome', async () => {
    const ok = await send(host, '/v3/login_without_session', { method: 'POST', headers: { Authorization: admin } });
    const wrong = basic(ADMIN.login, 'wrong');
    const bad = await send(host, '/v3/login_without_session', { method: 'POST', headers: { Authorization: wrong } });
    expect([ok.status, bad.status]).toEqual([200, 401]);
    const [success] = await rows(db, `type = 'login.success' and request_id = ?`, [ok.id]);
    expect(success).toMatchObject({
      stream: 'user_activity',
      outcome: 'success',
      user_agent: UA,
      subject_login: ADMIN.login,
    });
    // The test's own connection: the socket's peer (Node) or CF-Connecting-IP set by wrangler (edge).
    expect(success!.source_ip).toMatch(/^(::ffff:)?127\.0\.0\.1$|^::1$/);
    // The instance: the Node host's name (the test runs on the same machine), "edge" in workerd.
    expect(success!.host).toBe(kind === 'edge' ? 'edge' : hostname());
    const [failure] = await rows(db, `type = 'login.failure' and request_id = ?`, [bad.id]);
    const same = { source_ip: success!.source_ip, host: success!.host };
    expect(failure).toMatchObject({ outcome: 'failure', user_agent: UA, ...same });
  });

  it('Basic and Bearer requests are api_access events after a flush; cookie requests are not', async () => {
    const t = await apiTraffic(host, clock);
    const ids = [t.bearer.id, t.basicCall.id, t.refused.id, t.last.id];
    const read = () => apiAccessEvents(db, [...ids, t.cookieCall.id]);
    const events = await written(host, read, (r) => r.length >= 4);
    const named = {
      bearer: t.bearer.id,
      basic: t.basicCall.id,
      refused: t.refused.id,
      last: t.last.id,
      cookie: t.cookieCall.id,
    };
    const recorded = Object.entries(named)
      .filter(([, id]) => events.some((e) => e.request_id === id))
      .map(([n]) => n);
    expect(recorded, host.output().slice(-3000)).toEqual(['bearer', 'basic', 'refused', 'last']);
    const bearer = events.find((e) => e.request_id === t.bearer.id)!;
    expect(bearer).toMatchObject({ type: 'api.request', outcome: 'success', actor_login: ADMIN.login, user_agent: UA });
    expect(bearer.source_ip).toBeTruthy();
    const path = new URL(`${host.url}/v4/users/me`).pathname;
    // A successful read is an aggregate of its window (here: this one request).
    expect(JSON.parse(bearer.data!)).toEqual({
      method: 'bearer',
      httpMethod: 'GET',
      path,
      status: 200,
      tokenId: t.tokenId,
      count: 1,
      first: expect.any(String),
      last: expect.any(String),
    });
    const basicEvent = events.find((e) => e.request_id === t.basicCall.id)!;
    expect(JSON.parse(basicEvent.data!)).toMatchObject({ method: 'basic', status: 200 });
    // A request refused after authentication is recorded too, as an event of its own, with its status.
    const refused = events.find((e) => e.request_id === t.refused.id)!;
    expect(refused.outcome).toBe('failure');
    expect(JSON.parse(refused.data!)).toEqual({
      method: 'bearer',
      httpMethod: 'PATCH',
      path: new URL(`${host.url}/v3/settings`).pathname,
      status: t.refused.status,
      tokenId: t.tokenId,
    });
  });

  it('successful Bearer reads are counted in aggregates; every refusal and write is an event of its own', async () => {
    const issued = await fetch(`${host.url}/v4/users/me/tokens`, {
      method: 'POST',
      headers: { Authorization: admin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'aggregates' }),
    });
    const { token, id: tokenId } = (await issued.json()) as { token: string; id: string };
    const auth = { Authorization: `Bearer ${token}` };
    const reads = 20;
    for (let i = 0; i < reads; i++) expect((await send(host, '/v4/users/me', { headers: auth })).status).toBe(200);
    const missing = await send(host, '/v4/users/00000000-0000-4000-8000-00000000dead', { headers: auth });
    const write = await send(host, '/v3/settings', {
      method: 'PATCH',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ values: { AUDIT_LOCAL_RETENTION_DAYS: 30 } }),
    });
    expect([missing.status, write.status]).toEqual([404, 200]);
    const ofToken = async () => (await apiAccessEvents(db)).filter((e) => JSON.parse(e.data!).tokenId === tokenId);
    const counted = (events: Row[]) => events.reduce((n, e) => n + (JSON.parse(e.data!).count ?? 0), 0);
    const events = await written(host, ofToken, (e) => counted(e) >= reads && e.length >= 3);
    const aggregates = events.filter((e) => JSON.parse(e.data!).count !== undefined);
    expect(counted(events)).toBe(reads);
    // The reads took well under the test's timeout: a few one-second windows, far fewer events than requests.
    expect(aggregates.length).toBeLessThan(reads / 2);
    for (const e of aggregates) expect(e).toMatchObject({ type: 'api.request', outcome: 'success', user_agent: UA });
    const single = events.filter((e) => JSON.parse(e.data!).count === undefined);
    expect(single.map((e) => e.request_id).sort()).toEqual([missing.id, write.id].sort());
    expect(single.find((e) => e.request_id === missing.id)).toMatchObject({ outcome: 'failure' });
    expect(JSON.parse(single.find((e) => e.request_id === write.id)!.data!)).toMatchObject({
      httpMethod: 'PATCH',
      status: 200,
    });
  });
});

describe(`AUTH_AUDIT_API_ACCESS=False (${kind} host)`, () => {
  let host: RunningHost;
  let db: Client;
  const clock = testClock(() => host?.url);

  beforeAll(async () => {
    host = await startTestHost(kind, { AUTH_AUDIT_API_ACCESS: 'False' });
    db = createClient({ url: host.libsqlUrl });
  }, 120_000);
  afterAll(async () => {
    db?.close();
    await host?.stop();
  });

  it('records no api_access event, and still every security event', async () => {
    const t = await apiTraffic(host, clock);
    // Kept: no event would show the flush that writes nothing (a real-time timer, not the test clock).
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await rows(db, `stream = 'api_access'`, [])).toEqual([]);
    expect((await rows(db, `type = 'token.issued'`, [])).length).toBe(1);
    expect(t.bearer.status).toBe(200);
  });
});

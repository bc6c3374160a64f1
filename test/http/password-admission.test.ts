/**
 * Password checks are admitted per client address before anything is hashed (docs/security.md, "Password
 * checks under load"), on each host: several clients are played from loopback addresses 127.0.0.x
 * (Node: the socket's peer; edge: the CF-Connecting-IP that `wrangler dev` sets from the socket).
 * A flood from one address gets 429 PASSWORD_CHECKS_THROTTLED with Retry-After, never 503, while
 * another address logs in; unknown and known logins spend an address's budget alike; every login
 * variant (Basic, /v3/login JSON and form, /v3/oauth_login, LDAP) is admitted. Counts and statuses
 * only (no timing): a token bucket of 1 per minute does not refill during the test.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, call, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { parseExposition, sampleValue } from '../harness/prometheus.js';

const BURST = 10;
const IN_FLIGHT = 2;
const TOKEN = 'metrics-scrape-token-admission-0123456789';
const PASSWORD = 'Adm1ssion$pass';
let host: RunningHost;

beforeAll(async () => {
  host = await startTestHost(inject('hostKind'), {
    AUTH_PASSWORD_HASH_CONCURRENCY: '1',
    AUTH_PASSWORD_HASH_QUEUE: '4',
    AUTH_PASSWORD_ADDRESS_IN_FLIGHT: String(IN_FLIGHT),
    AUTH_PASSWORD_ADDRESS_BURST: String(BURST),
    AUTH_PASSWORD_ADDRESS_RATE: '1',
    // The account lockout stays out of the way: only admission is under test.
    AUTH_FAILED_COUNT: '100',
    AUTH_METRICS_TOKEN: TOKEN,
  });
});
afterAll(async () => {
  await host?.stop();
});

const api = (path: string, o: Call = {}) => callJson(path, { base: host.url, ...o });
const basicLogin = (from: string, login: string, password: string, headers: Record<string, string> = {}) =>
  api('/v3/login_without_session', { method: 'POST', auth: basic(login, password), from, headers });

async function createAccount(): Promise<string> {
  const login = uniqueLogin('adm');
  const r = await api('/v4/users', {
    method: 'POST',
    auth: basic(ADMIN.login, ADMIN.password),
    json: { login, password: PASSWORD },
    from: '127.0.0.1',
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return login;
}

async function refusedTotal(): Promise<number> {
  const res = await call('/metrics', { base: host.url, auth: `Bearer ${TOKEN}` });
  const families = parseExposition(await res.text());
  return ['rate', 'in_flight', 'queue'].reduce(
    (sum, reason) => sum + (sampleValue(families, 'auth_password_admissions_refused_total', { reason }) ?? 0),
    0,
  );
}

type Answer = Awaited<ReturnType<typeof api>>;

/** The 429 of an address beyond its bound: the problem, its type and Retry-After. */
function expectThrottled(a: Answer) {
  expect(a.status, JSON.stringify(a.body)).toBe(429);
  expect(a.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(a.body).toMatchObject({
    type: 'urn:auth-service:problem:password-checks-throttled',
    code: 'PASSWORD_CHECKS_THROTTLED',
    status: 429,
    reason: expect.stringMatching(/^address-(rate|in-flight|queue)$/),
  });
  expect(Number(a.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('password admission per client address', () => {
  it('a flood from one address gets 429 (never 503) while another address logs in', async () => {
    const login = await createAccount();
    const flooder = '127.0.0.2';
    let legitDone = false;
    const flood: Answer[] = [];
    // Well beyond capacity: 12 connections sending bogus logins back to back until the user is done.
    const connections = Array.from({ length: 12 }, async () => {
      for (let i = 0; i < 40 && !legitDone; i++) flood.push(await basicLogin(flooder, uniqueLogin('x'), 'Bogus$1'));
    });
    const legit: number[] = [];
    for (let i = 0; i < 5; i++) legit.push((await basicLogin('127.0.0.3', login, PASSWORD)).status);
    legitDone = true;
    await Promise.all(connections);

    expect(legit).toEqual([200, 200, 200, 200, 200]);
    const statuses = flood.map((a) => a.status);
    expect(
      statuses.filter((s) => s !== 401 && s !== 429),
      JSON.stringify(statuses),
    ).toEqual([]);
    // The address's burst at most was checked; the rest was refused unchecked.
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(BURST);
    const throttled = flood.filter((a) => a.status === 429);
    expect(throttled.length).toBeGreaterThan(0);
    for (const a of throttled) expectThrottled(a);
  });

  it('unknown and known logins spend the budget alike: the same answers, the same 429', async () => {
    const login = await createAccount();
    const before = await refusedTotal();
    const run = async (from: string, who: string) => {
      const out: Answer[] = [];
      for (let i = 0; i < BURST + 2; i++) out.push(await basicLogin(from, who, 'Wrong$pass1'));
      return out;
    };
    const unknown = await run('127.0.0.4', uniqueLogin('nobody'));
    const known = await run('127.0.0.5', login);
    const expected = [...Array<number>(BURST).fill(401), 429, 429];
    expect(unknown.map((a) => a.status)).toEqual(expected);
    expect(known.map((a) => a.status)).toEqual(expected);
    const shape = (a: Answer) => {
      const { instance: _i, requestId: _r, ...rest } = a.body;
      return { ...rest, retryAfter: a.res.headers.get('retry-after') !== null };
    };
    expect(shape(known[BURST]!)).toEqual(shape(unknown[BURST]!));
    for (const a of [...unknown.slice(BURST), ...known.slice(BURST)]) expectThrottled(a);
    expect(unknown[BURST]!.body.reason).toBe('address-rate');
    // The right password from a throttled address is refused unchecked too: the 429 tells nothing.
    expectThrottled(await basicLogin('127.0.0.5', login, PASSWORD));
    // Another address is not affected.
    expect((await basicLogin('127.0.0.6', login, PASSWORD)).status).toBe(200);
    expect((await refusedTotal()) - before).toBe(5);
  });

  it(
    'every login variant is admitted: /v3/login (JSON, form), /v3/oauth_login, LDAP, the password ' + 'change',
    async () => {
      const login = await createAccount();
      const from = '127.0.0.7';
      // The address's budget, spent on wrong passwords.
      for (let i = 0; i < BURST; i++) expect((await basicLogin(from, login, 'Wrong$pass1')).status).toBe(401);
      expectThrottled(await api('/v3/login', { method: 'POST', json: { login, password: PASSWORD }, from }));
      // A form post is sent to the front end with the code.
      const form = await call('/v3/login', {
        base: host.url,
        method: 'POST',
        form: { login, password: PASSWORD },
        from,
        redirect: 'manual',
      });
      expect(form.status).toBe(303);
      expect(form.headers.get('location')).toContain('auth_error=password_checks_throttled');
      const grant = { grant_type: 'password', username: login, password: PASSWORD };
      expectThrottled(await api('/v3/oauth_login', { method: 'POST', form: grant, from }));
      expectThrottled(await basicLogin(from, login, PASSWORD, { 'X-LDAP-Name': 'no-such-server' }));
      expectThrottled(
        await api('/v4/users/me/password', {
          method: 'PUT',
          auth: basic(login, PASSWORD),
          json: { oldPassword: PASSWORD, newPassword: 'N3w$password-x' },
          from,
        }),
      );
    },
  );
});

describe('the OpenAPI description', () => {
  it('documents the 429 on every operation that checks a password', async () => {
    type Op = { responses: Record<string, { description: string }> };
    const doc = (await (await fetch(`${host.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Op>>;
    };
    const ops = [
      ['/v3/login', 'post'],
      ['/v3/login/union', 'post'],
      ['/v3/oauth_login', 'post'],
      ['/v3/login_without_session', 'post'],
      ['/v4/users/me/password', 'put'],
    ] as const;
    for (const [path, method] of ops) {
      const throttled = doc.paths[path]![method]!.responses['429'];
      expect(throttled?.description, path).toContain('AUTH_PASSWORD_ADDRESS_RATE');
    }
  });
});

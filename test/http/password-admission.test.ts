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
import { Browser } from '../harness/browser.js';
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

let admins = 0;
async function createAccount(base = host.url): Promise<string> {
  const login = uniqueLogin('adm');
  // Each from its own address: the administrator's Basic check and the new hash spend its budget too.
  const r = await callJson('/v4/users', {
    base,
    method: 'POST',
    auth: basic(ADMIN.login, ADMIN.password),
    json: { login, password: PASSWORD },
    from: `127.0.2.${++admins}`,
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
    reason: expect.stringMatching(/^(address-(rate|in-flight|queue)|capacity)$/),
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

  // With the address's rate budget spent, not under a flood: a flood's places in flight come free for
  // moments, which a loaded test client (CI runs both HTTP projects at once) cannot keep taken, so an
  // attempt admitted as anonymous there may be let in, rightly (twenty 200s in a row, in CI).
  it("a device cookie gives priority only for its own login: for another, the address's 429", async () => {
    const login = await createAccount();
    const other = await createAccount();
    const from = '127.0.0.8';
    const owner = new Browser(new URL(host.url).origin, from);
    const first = await owner.postJson(`${host.url}/v3/login`, { login, password: PASSWORD });
    expect(first.status, await first.text()).toBe(200);
    // The rest of the address's burst, spent on wrong passwords: its bucket is empty (1 a minute).
    for (let i = 1; i < BURST; i++) expect((await basicLogin(from, login, 'Wrong$pass1')).status).toBe(401);
    // Without a cookie, the address's bound refuses the right password of either account.
    expectThrottled(await basicLogin(from, other, PASSWORD));
    // The cookie of `login` takes the priority lane, outside the address's bound, for `login` only.
    const own = await owner.postJson(`${host.url}/v3/login`, { login, password: PASSWORD });
    expect(own.status, await own.text()).toBe(200);
    const res = await owner.postJson(`${host.url}/v3/login`, { login: other, password: PASSWORD });
    const foreign = { status: res.status, body: (await res.json()) as Record<string, unknown>, res };
    expectThrottled(foreign);
    expect(foreign.body.reason).toBe('address-rate');
  });
});

/**
 * Bogus Basic logins (unknown logins) to `base` from each of `addresses`, `perAddress` connections
 * each, back to back (10 ms after a refusal), until `done()` or 30 s; every answer is collected.
 */
function flood(
  base: string,
  addresses: string[],
  perAddress: number,
  done: () => boolean,
): { answers: Answer[]; failedFrom: Set<string>; end: Promise<void> } {
  const answers: Answer[] = [];
  const failedFrom = new Set<string>();
  const until = Date.now() + 30_000;
  const connections = addresses.flatMap((from) =>
    Array.from({ length: perAddress }, async () => {
      while (!done() && Date.now() < until) {
        const a = await callJson('/v3/login_without_session', {
          base,
          method: 'POST',
          auth: basic(uniqueLogin('x'), 'Bogus$1'),
          from,
        });
        answers.push(a);
        if (a.status === 401) failedFrom.add(from);
        else await new Promise((r) => setTimeout(r, 10));
      }
    }),
  );
  return { answers, failedFrom, end: Promise.all(connections).then(() => undefined) };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(condition(), what).toBe(true);
}

/** Every answer of a flood is a failed login or the 429 of admission: never a 503 that blames the service. */
function expectNo503(answers: Answer[]) {
  const statuses = answers.map((a) => a.status);
  expect(
    statuses.filter((s) => s !== 401 && s !== 429),
    JSON.stringify(statuses),
  ).toEqual([]);
  for (const a of answers) if (a.status === 429) expectThrottled(a);
}

describe('under a flood (docs/security-admission.md)', () => {
  // Bursts large enough that the flooding addresses keep the queue full for the whole test.
  let flooded: RunningHost;
  beforeAll(async () => {
    flooded = await startTestHost(inject('hostKind'), {
      AUTH_PASSWORD_HASH_CONCURRENCY: '1',
      AUTH_PASSWORD_HASH_QUEUE: '4',
      AUTH_PASSWORD_ADDRESS_IN_FLIGHT: String(IN_FLIGHT),
      AUTH_PASSWORD_ADDRESS_BURST: '1000',
      AUTH_PASSWORD_ADDRESS_RATE: '1',
      AUTH_FAILED_COUNT: '100',
      AUTH_ADDRESS_FAILED_COUNT: '100000',
    });
  });
  afterAll(async () => {
    await flooded?.stop();
  });
  const floodedLogin = (from: string, login: string, password: string) =>
    callJson('/v3/login_without_session', { base: flooded.url, method: 'POST', auth: basic(login, password), from });

  it('a browser holding the device cookie of its login logs in while its own address floods', async () => {
    const login = await createAccount(flooded.url);
    const from = '127.0.0.10';
    const base = flooded.url;
    const owner = new Browser(new URL(base).origin, from);
    const first = await owner.postJson(`${base}/v3/login`, { login, password: PASSWORD });
    expect(first.status, await first.text()).toBe(200);
    expect(await owner.cookie(`${new URL(base).origin}/`, 'auth_device')).toBeTruthy();

    let done = false;
    const f = flood(base, [from], 6, () => done);
    // The address is beyond its bound (its places in flight taken) before the owner tries.
    await until(() => f.answers.some((a) => a.status === 429), 'the flood is throttled');
    const owned: number[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const res = await owner.postJson(`${base}/v3/login`, { login, password: PASSWORD });
        owned.push(res.status);
        await res.text();
      }
    } finally {
      done = true;
      await f.end;
    }
    expect(owned).toEqual([200, 200, 200]);
    expectNo503(f.answers);
  });

  it(
    'a new clean address is never answered 503 (and logs in) while the queue is full of flooding ' + 'addresses',
    async () => {
      const login = await createAccount(flooded.url);
      // 12 addresses, one connection each: far more first attempts than the one slot and four places.
      const flooders = Array.from({ length: 12 }, (_, i) => `127.0.0.${20 + i}`);
      let done = false;
      const f = flood(flooded.url, flooders, 1, () => done);
      // Each flooding address has failed at least once: the queue is full of addresses with failures.
      await until(() => f.failedFrom.size === flooders.length, 'every flooding address has failed logins');
      const legit: Answer[] = [];
      try {
        for (let i = 0; i < 3; i++) legit.push(await floodedLogin(`127.0.0.${40 + i}`, login, PASSWORD));
      } finally {
        done = true;
        await f.end;
      }
      expect(
        legit.map((a) => a.status),
        JSON.stringify(legit.map((a) => a.body)),
      ).toEqual([200, 200, 200]);
      expectNo503(f.answers);
      // The flooders that were shed or refused got the 429 of their own budget, with Retry-After.
      expect(f.answers.some((a) => a.status === 429)).toBe(true);
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

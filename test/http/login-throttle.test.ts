/**
 * Password spraying is throttled per client address (architecture.md §4, "Failed logins"): two hosts
 * of the suite's kind on one database, with a small AUTH_ADDRESS_FAILED_COUNT. Failures from one
 * address across many logins are bounded across both hosts, then that address gets 429
 * ADDRESS_THROTTLED with Retry-After for every password login; another address is not affected.
 * The client addresses are loopback source addresses (127.0.0.2, 127.0.0.3, ...).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, uniqueLogin } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const PASSWORD = 'Spr4y$pass';
const WRONG = 'Wr0ng$pass';
const BOUND = 5;
const admin = basic(ADMIN.login, ADMIN.password);

let a: RunningHost;
let b: RunningHost;

beforeAll(async () => {
  const env = { AUTH_ADDRESS_FAILED_COUNT: String(BOUND), AUTH_ADDRESS_FAILED_WINDOW_MIN: '10' };
  a = await startTestHost(kind, env);
  b = await startTestHost(kind, env, { libsqlUrl: a.libsqlUrl });
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

async function createUserOn(host: RunningHost, login: string): Promise<void> {
  const r = await callJson('/v4/users', {
    base: host.url,
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

const basicLogin = (host: RunningHost, from: string, login: string, password: string) =>
  callJson('/v3/login_without_session', {
    base: host.url,
    method: 'POST',
    auth: basic(login, password),
    localAddress: from,
  });

describe(`per-address throttle across two ${kind} hosts on one database`, () => {
  it('failures against many logins from one address are bounded, then 429 for every login from it', async () => {
    const victim = uniqueLogin('victim');
    await createUserOn(a, victim);
    // One guess each for many logins (a spray), alternating between the hosts.
    for (let i = 0; i < BOUND; i++) {
      const r = await basicLogin(i % 2 ? b : a, '127.0.0.2', uniqueLogin('spray'), WRONG);
      expect(r.body.code, `failure ${i + 1}`).toBe('INVALID_CREDENTIALS');
    }
    // The address spent its budget: 429 on both hosts, for any login, right password included.
    for (const host of [a, b]) {
      const r = await basicLogin(host, '127.0.0.2', victim, PASSWORD);
      expect(r.status).toBe(429);
      expect(r.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({
        type: 'urn:auth-service:problem:address-throttled',
        code: 'ADDRESS_THROTTLED',
        status: 429,
      });
      const retry = Number(r.res.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(10 * 60);
    }
    // Session logins too.
    const session = await callJson('/v3/login', {
      base: b.url,
      method: 'POST',
      json: { login: victim, password: PASSWORD },
      localAddress: '127.0.0.2',
    });
    expect(session.status).toBe(429);
    // Another address is not affected, and the account itself was never locked.
    expect((await basicLogin(b, '127.0.0.3', victim, PASSWORD)).status).toBe(200);
  });

  it('parallel failures from one address across both hosts: never more than the bound are checked', async () => {
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => basicLogin(i % 2 ? b : a, '127.0.0.4', uniqueLogin('par'), WRONG)),
    );
    const codes = results.map((r) => r.body.code);
    expect(codes.filter((c) => c === 'INVALID_CREDENTIALS').length).toBe(BOUND);
    expect(codes.filter((c) => c === 'ADDRESS_THROTTLED').length).toBe(16 - BOUND);
  });

  it('successes do not count against the address', async () => {
    const user = uniqueLogin('ok');
    await createUserOn(a, user);
    for (let i = 0; i < BOUND + 2; i++)
      expect((await basicLogin(i % 2 ? b : a, '127.0.0.5', user, PASSWORD)).status).toBe(200);
    expect((await basicLogin(a, '127.0.0.5', uniqueLogin('x'), WRONG)).body.code).toBe('INVALID_CREDENTIALS');
  });
});

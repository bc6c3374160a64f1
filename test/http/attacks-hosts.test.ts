/**
 * Hostile suite (docs/testing.md, "The hostile suite"), attacks that need two hosts on one database: two instances of
 * the suite's kind (two Node processes on one database file; two workerd instances on one libSQL
 * server), as a deployment behind a load balancer runs them. Each `it` is one attack.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import { ADMIN, basic, call, callJson, uniqueLogin } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { enrolTotp, totpCode } from '../harness/totp.js';

const kind = inject('hostKind');
const PASSWORD = 'Tw0$hosts';
const WRONG = 'Wr0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);
/**
 * The revocation re-check bound of each instance (AUTH_REVOCATION_CHECK_SEC, architecture.md §6), small here: a
 * revocation holds at once on the instance that made it, within this bound on the other.
 */
const RECHECK_SEC = 2;
const CACHE_BOUND_MS = RECHECK_SEC * 1000;
const ENV = { AUTH_REVOCATION_CHECK_SEC: String(RECHECK_SEC) };

let a: RunningHost;
let b: RunningHost;

beforeAll(async () => {
  a = await startTestHost(kind, ENV);
  b = await startTestHost(kind, ENV, { libsqlUrl: a.libsqlUrl });
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

async function createUserOn(host: RunningHost, login: string): Promise<string> {
  const r = await callJson<{ id: string }>('/v4/users', {
    base: host.url,
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

async function tokenOn(host: RunningHost, login: string): Promise<{ token: string; id: string }> {
  const r = await callJson<{ token: string; id: string }>('/v4/users/me/tokens', {
    base: host.url,
    method: 'POST',
    auth: basic(login, PASSWORD),
    json: { name: 'hosts' },
  });
  expect(r.status).toBe(201);
  return r.body;
}

async function cookieOn(host: RunningHost, login: string): Promise<string> {
  const r = await call('/v3/login', { base: host.url, method: 'POST', json: { login, password: PASSWORD } });
  expect(r.status).toBe(200);
  return r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('auth_session='))!;
}

/** Status of GET /v4/users/me on `host` with a Bearer token or a cookie. */
const meStatus = async (host: RunningHost, cred: { token?: string; cookie?: string }) =>
  (
    await call('/v4/users/me', {
      base: host.url,
      auth: cred.token ? `Bearer ${cred.token}` : undefined,
      headers: cred.cookie ? { Cookie: cred.cookie } : {},
    })
  ).status;

describe(`attacks across two ${kind} hosts on one database`, () => {
  it('parallel lockout split across two hosts: at most AUTH_FAILED_COUNT passwords checked', async () => {
    const login = uniqueLogin('split');
    await createUserOn(a, login);
    const attempt = (host: RunningHost) =>
      callJson('/v3/login_without_session', { base: host.url, method: 'POST', auth: basic(login, WRONG) });
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => attempt(i % 2 ? b : a)));
    const codes = results.map((r) => r.body.code);
    expect(codes.filter((c) => c === 'INVALID_CREDENTIALS').length).toBe(3);
    expect(codes.filter((c) => c === 'ACCOUNT_LOCKED').length).toBe(21);
    // The lock holds on both instances, for the right password too.
    for (const host of [a, b]) {
      const r = await callJson('/v3/login_without_session', {
        base: host.url,
        method: 'POST',
        auth: basic(login, PASSWORD),
      });
      expect(r.body.code).toBe('ACCOUNT_LOCKED');
    }
  });

  it('second-factor guesses split across two hosts: at most AUTH_FAILED_COUNT codes checked, then locked', async () => {
    const login = uniqueLogin('split2f');
    await createUserOn(a, login);
    // Enrolled on A (codes from oathtool), then a right password on A: a pending login for the second step.
    const browser = new Browser(new URL(a.url).origin);
    expect((await browser.postJson(`${a.url}/v3/login`, { login, password: PASSWORD })).status).toBe(200);
    const secret = await enrolTotp(browser, a.url);
    const first = await callJson<{ code: string; pendingToken: string }>('/v3/login', {
      base: a.url,
      method: 'POST',
      json: { login, password: PASSWORD },
    });
    expect(first.body.code).toBe('SECOND_FACTOR_REQUIRED');
    // A code none of the accepted steps (now, ±1) gives.
    const near = [-1, 0, 1].map((s) => totpCode(secret, Date.now(), s));
    const wrong = ['000000', '111111', '222222', '333333'].find((c) => !near.includes(c))!;
    const guess = (host: RunningHost, code: string) =>
      callJson('/v3/login/second-factor', {
        base: host.url,
        method: 'POST',
        json: { pendingToken: first.body.pendingToken, code },
      });
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => guess(i % 2 ? b : a, wrong)));
    const codes = results.map((r) => r.body.code);
    expect(codes.filter((c) => c === 'INVALID_CREDENTIALS').length).toBe(3);
    expect(codes.filter((c) => c === 'ACCOUNT_LOCKED').length).toBe(21);
    // The restriction holds on both instances, for the right code and the password alike.
    for (const host of [a, b]) {
      expect((await guess(host, totpCode(secret, Date.now()))).body.code).toBe('ACCOUNT_LOCKED');
      const pw = await callJson('/v3/login', { base: host.url, method: 'POST', json: { login, password: PASSWORD } });
      expect(pw.body.code).toBe('ACCOUNT_LOCKED');
    }
  });

  it(
    'a token or cookie of a deleted, blocked, password-reset or revoked account (token revocation, logout) is ' +
      'refused at once on the ending host and within AUTH_REVOCATION_CHECK_SEC on the other',
    async () => {
      type Case = {
        name: string;
        end: (ids: { user: string; token: string; tokenId: string; cookie: string }) => Promise<void>;
      };
      const cases: Case[] = [
        {
          name: 'deleted',
          end: async ({ user }) =>
            expect((await call(`/v4/users/${user}`, { base: b.url, method: 'DELETE', auth: admin })).status).toBe(204),
        },
        {
          name: 'blocked',
          end: async ({ user }) =>
            expect((await call(`/v4/users/${user}/block`, { base: b.url, method: 'POST', auth: admin })).status).toBe(
              200,
            ),
        },
        {
          name: 'password reset',
          end: async ({ user }) =>
            expect(
              (
                await call(`/v4/users/${user}/password`, {
                  base: b.url,
                  method: 'POST',
                  auth: admin,
                  json: { password: 'R3set$hosts' },
                })
              ).status,
            ).toBe(204),
        },
        {
          name: 'revoked',
          // No API token revokes a token (docs/api.md, "API token scopes"): the administrator does.
          end: async ({ user, tokenId, cookie }) => {
            expect(
              (await call(`/v4/users/${user}/tokens/${tokenId}`, { base: b.url, method: 'DELETE', auth: admin }))
                .status,
            ).toBe(204);
            expect(
              (await call('/v3/logout', { base: b.url, method: 'POST', headers: { Cookie: cookie, Origin: b.origin } }))
                .status,
            ).toBe(204);
          },
        },
      ];
      for (const c of cases) {
        const login = uniqueLogin(c.name.replaceAll(' ', '-'));
        const user = await createUserOn(a, login);
        const { token, id: tokenId } = await tokenOn(a, login);
        const cookie = await cookieOn(a, login);
        // Both instances have used (and cached) the credentials.
        for (const host of [a, b]) {
          for (let i = 0; i < 2; i++) {
            expect(await meStatus(host, { token }), `${c.name} token before`).toBe(200);
            expect(await meStatus(host, { cookie }), `${c.name} cookie before`).toBe(200);
          }
        }
        await c.end({ user, token, tokenId, cookie });
        const ended = performance.now();
        // The instance that ended it: at once. The other: within the cache bound (polled until then).
        expect(await meStatus(b, { token }), `${c.name} token on the ending host`).toBe(401);
        expect(await meStatus(b, { cookie }), `${c.name} cookie on the ending host`).toBe(401);
        const withinBound = () => ({
          timeout: Math.max(100, ended + CACHE_BOUND_MS + 500 - performance.now()),
          interval: 100,
        });
        await expect
          .poll(() => meStatus(a, { token }), { message: `${c.name} token on the other host`, ...withinBound() })
          .toBe(401);
        await expect
          .poll(() => meStatus(a, { cookie }), { message: `${c.name} cookie on the other host`, ...withinBound() })
          .toBe(401);
      }
    },
  );
});

describe(`JWT tricks across a key rotation (${kind} host restarted on its database)`, () => {
  it('a session cookie signed with a stale key after rotation is refused, though its session lives', async () => {
    const K0 = 'stale-session-key-0123456789abcdefghijk';
    const K1 = 'rotated-once-key-0123456789abcdefghijkl';
    const K2 = 'rotated-twice-key-0123456789abcdefghijk';
    const dir = mkdtempSync(join(tmpdir(), 'auth-rotation-'));
    const database = join(dir, 'auth.db');
    let host = await startTestHost(kind, { SESSION_SECRET_KEY: K0, AUTH_SESSIONS_DEFAULT_COUNT: '5' }, { database });
    let stale: string;
    try {
      stale = (await callJson('/v3/login', { base: host.url, method: 'POST', json: ADMIN })).res.headers
        .getSetCookie()
        .map((c) => c.split(';')[0]!)
        .find((c) => c.startsWith('auth_session='))!;
      expect(await meStatus(host, { cookie: stale })).toBe(200);
    } finally {
      await host.stop();
    }
    host = await startTestHost(
      kind,
      { SESSION_SECRET_KEY: K2, SESSION_SECRET_KEY_PREVIOUS: K1, AUTH_SESSIONS_DEFAULT_COUNT: '5' },
      { database },
    );
    try {
      const claims = decodeJwt(stale.slice('auth_session='.length));
      const resign = (key: string) =>
        new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(key));
      // The same claims under the current and the previous key: the session lives.
      expect(await meStatus(host, { cookie: `auth_session=${await resign(K2)}` })).toBe(200);
      expect(await meStatus(host, { cookie: `auth_session=${await resign(K1)}` })).toBe(200);
      // The cookie as issued, under the key rotated out: refused.
      const r = await callJson('/v4/users/me', { base: host.url, headers: { Cookie: stale } });
      expect(r.status).toBe(401);
      expect(r.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    } finally {
      await host.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

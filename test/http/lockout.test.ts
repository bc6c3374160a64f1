/**
 * Lockout after failed logins (AUTH_FAILED_COUNT = 3 within AUTH_FAILED_TIMEOUT_MIN = 15), on both hosts.
 * The attacks on it (the lock as an oracle, parallel attempts across two hosts, login variants) are
 * in the hostile suite: attacks-logins.test.ts and attacks-hosts.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MINUTE, basic, callJson, createUser, setClockOffset, uniqueLogin } from '../harness/client.js';

const PATH = '/v3/login_without_session';
const PASSWORD = 'Str0ng$pass';
const WRONG = 'Wr0ng$pass';

const attempt = (login: string, password: string) => callJson(PATH, { method: 'POST', auth: basic(login, password) });

afterEach(() => setClockOffset(0));

describe('lockout', () => {
  it('the lock ends after AUTH_FAILED_TIMEOUT_MIN minutes', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    for (let i = 0; i < 3; i++) await attempt(login, WRONG);
    await setClockOffset(14 * MINUTE);
    expect((await attempt(login, PASSWORD)).body.code).toBe('ACCOUNT_LOCKED');
    await setClockOffset(15 * MINUTE + 1000);
    expect((await attempt(login, PASSWORD)).status).toBe(200);
  });

  it('the window slides: failures older than the window no longer count', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    await attempt(login, WRONG);
    await attempt(login, WRONG);
    await setClockOffset(16 * MINUTE);
    await attempt(login, WRONG);
    await attempt(login, WRONG);
    // Two failures in the current window: not locked.
    expect((await attempt(login, PASSWORD)).status).toBe(200);
  });

  it('failures inside one window add up across its length', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    await attempt(login, WRONG);
    await setClockOffset(7 * MINUTE);
    await attempt(login, WRONG);
    await setClockOffset(14 * MINUTE);
    await attempt(login, WRONG);
    expect((await attempt(login, PASSWORD)).body.code).toBe('ACCOUNT_LOCKED');
  });

  it('a success resets the count', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    await attempt(login, WRONG);
    await attempt(login, WRONG);
    expect((await attempt(login, PASSWORD)).status).toBe(200);
    await attempt(login, WRONG);
    await attempt(login, WRONG);
    expect((await attempt(login, PASSWORD)).status).toBe(200);
  });
});

describe('the old password of PUT /v4/users/me/password counts like a login', () => {
  const change = (token: string, oldPassword: string) =>
    callJson('/v4/users/me/password', {
      method: 'PUT',
      auth: `Bearer ${token}`,
      json: { oldPassword, newPassword: 'N3w$secret' },
    });
  // A session's access token (an API token may not change a password: docs/api.md, "API token scopes").
  async function withToken(): Promise<{ login: string; token: string }> {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const r = await callJson<{ access_token: string }>('/v3/oauth_login', {
      method: 'POST',
      form: { grant_type: 'password', username: login, password: PASSWORD },
    });
    expect(r.status).toBe(200);
    return { login, token: r.body.access_token };
  }

  it('AUTH_FAILED_COUNT wrong old passwords lock the account, for the change and for logins', async () => {
    const { login, token } = await withToken();
    for (let i = 0; i < 3; i++) {
      const r = await change(token, WRONG);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('INVALID_CREDENTIALS');
    }
    const locked = await change(token, PASSWORD);
    expect(locked.status).toBe(401);
    expect(locked.body.code).toBe('ACCOUNT_LOCKED');
    expect(Number(locked.res.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    expect((await attempt(login, PASSWORD)).body.code).toBe('ACCOUNT_LOCKED');
  });

  it('parallel wrong old passwords: never more than AUTH_FAILED_COUNT are checked', async () => {
    const { login, token } = await withToken();
    const results = await Promise.all(Array.from({ length: 12 }, () => change(token, WRONG)));
    const codes = results.map((r) => r.body.code);
    expect(codes.filter((c) => c === 'INVALID_CREDENTIALS').length).toBe(3);
    expect(codes.filter((c) => c === 'ACCOUNT_LOCKED').length).toBe(9);
    expect((await attempt(login, PASSWORD)).body.code).toBe('ACCOUNT_LOCKED');
  });
});

/** POST /v3/login_without_session (Basic) on both hosts: success, failures, malformed headers. */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, basic, call, callJson, createUser, setClockOffset, uniqueLogin } from '../harness/client.js';

const PATH = '/v3/login_without_session';
const PASSWORD = 'Str0ng$pass';

afterEach(() => setClockOffset(0));

describe('login without a session: success', () => {
  it('answers the public profile, case-insensitive login, and never a cookie or a hash', async () => {
    const login = uniqueLogin('Mixed');
    await createUser(login, PASSWORD, { displayName: 'Mixed Case', email: 'mc@example.org' });
    const res = await call(PATH, { method: 'POST', auth: basic(login.toUpperCase(), PASSWORD) });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toBeNull();
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.login).toBe(login);
    expect(body.displayName).toBe('Mixed Case');
    expect(body.role).toBe('user');
    expect(body.source).toBe('local');
    expect(body.lastLoginAt).toEqual(expect.any(String));
    expect(JSON.stringify(body)).not.toMatch(/argon2|passwordHash/);
  });
});

describe('login without a session: failures do not reveal accounts', () => {
  it('a wrong password and an unknown login get the same answer', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const wrong = await callJson(PATH, { method: 'POST', auth: basic(login, 'Wr0ng$pass') });
    const unknown = await callJson(PATH, { method: 'POST', auth: basic(uniqueLogin('nobody'), 'Wr0ng$pass') });
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401);
      expect(r.res.headers.get('www-authenticate')).toBe('Basic realm="auth", charset="UTF-8"');
      expect(r.res.headers.get('set-cookie')).toBeNull();
    }
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    expect(strip(wrong.body)).toEqual(strip(unknown.body));
    expect(wrong.body.code).toBe('INVALID_CREDENTIALS');
  });

  it('no credentials: 401 with the Basic challenge', async () => {
    const r = await callJson(PATH, { method: 'POST' });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('UNAUTHENTICATED');
    expect(r.res.headers.get('www-authenticate')).toContain('Basic');
  });

  it('X-LDAP-Name naming no LDAP server record: 400 naming the header, nothing counted', async () => {
    const r = await callJson(PATH, {
      method: 'POST',
      auth: basic('someone', PASSWORD),
      headers: { 'X-LDAP-Name': 'corp' },
    });
    expect(r.status).toBe(400);
    expect(r.body.type).toBe('urn:auth-service:problem:unknown-ldap-server');
    expect(String(r.body.detail)).toContain('X-LDAP-Name');
  });
});

describe('malformed Basic headers: 401 naming the problem, never a 500', () => {
  const raw = (bytes: number[]) => `Basic ${btoa(String.fromCharCode(...bytes))}`;
  const cases: [string, string, RegExp][] = [
    ['no colon', `Basic ${btoa('loginonly')}`, /no ":"/],
    ['bad base64', 'Basic %%%notbase64', /base64/],
    ['truncated base64', 'Basic YWJj=', /base64/],
    ['empty user', `Basic ${btoa(':Str0ng$pass')}`, /login is empty/],
    ['empty password', `Basic ${btoa('someone:')}`, /password is empty/],
    ['invalid UTF-8', raw([0x75, 0x3a, 0xff, 0xfe, 0x41]), /UTF-8/],
    ['scheme only', 'Basic', /Basic/],
    ['other scheme', 'Digest abc', /unsupported/],
    ['10 KB header', `Basic ${'A'.repeat(10 * 1024)}`, /too long/],
  ];
  it.each(cases)('%s', async (_name, header, detail) => {
    const r = await callJson(PATH, { method: 'POST', auth: header });
    expect(r.status).toBe(401);
    expect(r.res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(String(r.body.detail)).toMatch(detail);
    expect(r.res.headers.get('www-authenticate')).toContain('Basic');
  });

  it('a malformed header counts no attempt', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    for (let i = 0; i < 5; i++) await call(PATH, { method: 'POST', auth: `Basic ${btoa(`${login}:`)}` });
    expect((await call(PATH, { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(200);
  });
});

describe('password expiry and inactivity: told apart only after the right password', () => {
  it('an expired password: 403 with the right one, 401 with a wrong one; the change is allowed', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    // Active on day 40 (so not inactive: USER_INACTIVE_TIMEOUT_DAY = 45), expired on day 61 (60).
    await setClockOffset(40 * 86_400_000);
    expect((await call(PATH, { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(200);
    await setClockOffset(61 * 86_400_000);
    expect((await callJson(PATH, { method: 'POST', auth: basic(login, 'Wr0ng$pass') })).status).toBe(401);
    const expired = await callJson(PATH, { method: 'POST', auth: basic(login, PASSWORD) });
    expect(expired.status).toBe(403);
    expect(expired.body.code).toBe('PASSWORD_EXPIRED');
    expect(expired.body.passwordReason).toBe('expired');
    // Other endpoints refuse too, but the own password change is allowed while expired.
    expect((await callJson('/v4/users/me', { auth: basic(login, PASSWORD) })).body.code).toBe('PASSWORD_EXPIRED');
    const change = await call('/v4/users/me/password', {
      method: 'PUT',
      auth: basic(login, PASSWORD),
      json: { oldPassword: PASSWORD, newPassword: 'N3w$secret' },
    });
    expect(change.status).toBe(204);
    expect((await call(PATH, { method: 'POST', auth: basic(login, 'N3w$secret') })).status).toBe(200);
  });

  it('must-change-at-first-login behaves as expired, told apart: initial, then reset after a reset', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD, { mustChangePassword: true });
    const r = await callJson(PATH, { method: 'POST', auth: basic(login, PASSWORD) });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('PASSWORD_EXPIRED');
    // A new account chooses its own password: nobody reset anything.
    expect(r.body.passwordReason).toBe('initial');
    expect(r.body.detail).toMatch(/^choose your own password/);
    const reset = await call(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: basic(ADMIN.login, ADMIN.password),
      json: { password: 'R3set$pass', mustChangePassword: true },
    });
    expect(reset.status).toBe(204);
    const after = await callJson(PATH, { method: 'POST', auth: basic(login, 'R3set$pass') });
    expect(after.body.passwordReason).toBe('reset');
    expect(after.body.detail).toContain('reset by an administrator');
  });

  it('inactivity past USER_INACTIVE_TIMEOUT_DAY blocks the account; a wrong password still says 401', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    await setClockOffset(44 * 86_400_000);
    expect((await call(PATH, { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(200);
    await setClockOffset((44 + 46) * 86_400_000);
    expect((await callJson(PATH, { method: 'POST', auth: basic(login, 'Wr0ng$pass') })).status).toBe(401);
    const r = await callJson(PATH, { method: 'POST', auth: basic(login, PASSWORD) });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('ACCOUNT_BLOCKED');
    expect(r.body.reason).toBe('inactivity');
    // Blocked stays blocked, even back in time.
    await setClockOffset(0);
    expect((await callJson(PATH, { method: 'POST', auth: basic(login, PASSWORD) })).body.code).toBe('ACCOUNT_BLOCKED');
  });
});

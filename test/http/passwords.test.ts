/** The password policy and history through the API, on both hosts. */
import { describe, expect, it } from 'vitest';
import { ADMIN, basic, call, callJson, createUser, uniqueLogin } from '../harness/client.js';

const PASSWORD = 'Str0ng$pass';

describe('password policy on account creation', () => {
  it('a refusal lists every broken rule, machine-readably, and creates nothing', async () => {
    const login = uniqueLogin();
    const r = await callJson<{ code: string; violations: { rule: string }[] }>('/v4/users', {
      method: 'POST',
      auth: basic(ADMIN.login, ADMIN.password),
      json: { login, password: 'short' },
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('PASSWORD_POLICY');
    // "short" is on the bundled list of common passwords too (docs/security.md, "Password blocklist").
    expect(r.body.violations.map((v) => v.rule)).toEqual([
      'min_length',
      'special_min',
      'digit_min',
      'upper_min',
      'common_password',
    ]);
    expect((await call('/v3/login_without_session', { method: 'POST', auth: basic(login, 'short') })).status).toBe(401);
    // The login is still free.
    await createUser(login, PASSWORD);
  });

  it('boundaries: 8 and 20 characters pass, 7 and 21 do not; a space is refused', async () => {
    const make = (password: string) =>
      callJson('/v4/users', {
        method: 'POST',
        auth: basic(ADMIN.login, ADMIN.password),
        json: { login: uniqueLogin(), password },
      });
    expect((await make('Aa1$aaaa')).status).toBe(201);
    expect((await make('Aa1$aaa')).status).toBe(422);
    expect((await make('Aa1$aaaaaaaaaaaaaaaa')).status).toBe(201);
    expect((await make('Aa1$aaaaaaaaaaaaaaaaa')).status).toBe(422);
    const space = await callJson<{ violations: { rule: string }[] }>('/v4/users', {
      method: 'POST',
      auth: basic(ADMIN.login, ADMIN.password),
      json: { login: uniqueLogin(), password: 'Aa1$ aaaa' },
    });
    expect(space.body.violations.map((v) => v.rule)).toEqual(['disallowed_character']);
  });

  it('duplicate login (case-insensitive): 409', async () => {
    const login = uniqueLogin('Dup');
    await createUser(login, PASSWORD);
    const r = await callJson('/v4/users', {
      method: 'POST',
      auth: basic(ADMIN.login, ADMIN.password),
      json: { login: login.toLowerCase(), password: PASSWORD },
    });
    expect(r.status).toBe(409);
  });

  it('only admins create accounts', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const r = await callJson('/v4/users', {
      method: 'POST',
      auth: basic(login, PASSWORD),
      json: { login: uniqueLogin(), password: PASSWORD },
    });
    expect(r.status).toBe(403);
  });
});

describe('password history (USER_PASSWORD_HISTORY_DEPTH = 3)', () => {
  it('the last three passwords cannot be reused; the fourth-last can', async () => {
    const login = uniqueLogin();
    await createUser(login, 'Pass0rd$1');
    let current = 'Pass0rd$1';
    const change = (to: string) =>
      call('/v4/users/me/password', {
        method: 'PUT',
        auth: basic(login, current),
        json: { oldPassword: current, newPassword: to },
      });
    for (const next of ['Pass0rd$2', 'Pass0rd$3']) {
      expect((await change(next)).status).toBe(204);
      current = next;
    }
    for (const reused of ['Pass0rd$1', 'Pass0rd$2', 'Pass0rd$3']) {
      const r = await change(reused);
      expect(r.status, reused).toBe(422);
      expect(((await r.json()) as { violations: { rule: string }[] }).violations[0]!.rule).toBe('history');
    }
    expect((await change('Pass0rd$4')).status).toBe(204);
    current = 'Pass0rd$4';
    // Now the history is 4, 3, 2: the first is free again.
    expect((await change('Pass0rd$1')).status).toBe(204);
  });

  it('a wrong old password is refused like a wrong login (401, counted: see lockout.test.ts)', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const r = await callJson('/v4/users/me/password', {
      method: 'PUT',
      auth: basic(login, PASSWORD),
      json: { oldPassword: 'Wr0ng$pass', newPassword: 'N3w$secret' },
    });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('INVALID_CREDENTIALS');
    expect((await call('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(
      200,
    );
  });
});

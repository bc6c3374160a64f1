/** /v4/users administration on both hosts. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ADMIN,
  DAY,
  MINUTE,
  basic,
  call,
  callJson,
  createSuperAccessHolder,
  createUser,
  setClockOffset,
  uniqueLogin,
} from '../harness/client.js';

const PASSWORD = 'Str0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);
type Page = { items: { login: string; role: string }[]; total: number; limit: number; offset: number };

afterEach(() => setClockOffset(0));

describe('list', () => {
  it('pagination edges, prefix filter (case-insensitive, wildcards literal), sorting', async () => {
    const prefix = uniqueLogin('Pg');
    for (let i = 0; i < 5; i++) await createUser(`${prefix}${i}`, PASSWORD, i === 4 ? { role: 'auditor' } : {});
    await createUser(`${prefix.slice(0, -1)}_x`, PASSWORD); // "_" must not act as a wildcard
    const page = (q: string) =>
      callJson<Page>(`/v4/users?login=${encodeURIComponent(prefix.toUpperCase())}${q}`, { auth: admin });
    const all = await page('&limit=100');
    expect(all.body.total).toBe(5);
    expect(all.body.items.map((u) => u.login)).toEqual([0, 1, 2, 3, 4].map((i) => `${prefix}${i}`));
    const second = await page('&limit=2&offset=2');
    expect(second.body.items.map((u) => u.login)).toEqual([`${prefix}2`, `${prefix}3`]);
    expect(second.body.total).toBe(5);
    expect((await page('&limit=2&offset=5')).body.items).toEqual([]);
    expect((await page('&sort=-login&limit=1')).body.items[0]!.login).toBe(`${prefix}4`);
    expect((await page('&role=auditor')).body.items.map((u) => u.login)).toEqual([`${prefix}4`]);
    for (const bad of ['&limit=0', '&limit=101', '&offset=-1', '&sort=password', '&role=root']) {
      const r = await page(bad);
      expect(r.status, bad).toBe(422);
    }
  });
});

describe('search by substring (q)', () => {
  type Found = { items: { login: string; displayName: string; email: string | null }[]; total: number };
  const find = (query: string) =>
    callJson<Found>(`/v4/users?${query.includes('limit=') ? '' : 'limit=100&'}${query}`, { auth: admin });

  it('a case-insensitive substring of the login, the display name or the address', async () => {
    const tag = uniqueLogin('Qs');
    const byLogin = `x${tag}y`;
    await createUser(byLogin, PASSWORD);
    await createUser(uniqueLogin('qn'), PASSWORD, { displayName: `Ann ${tag} Smith` });
    await createUser(uniqueLogin('qe'), PASSWORD, { email: `box.${tag.toLowerCase()}@example.com` });
    const r = await find(`q=${encodeURIComponent(tag.toUpperCase())}`);
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(3);
    expect(r.body.items.map((u) => u.login)).toContain(byLogin);
    expect(r.body.items.map((u) => u.displayName)).toContain(`Ann ${tag} Smith`);
    // Paged like the rest of the list, and combined with the other filters.
    const paged = await find(`q=${encodeURIComponent(tag)}&limit=1&offset=1`);
    expect(paged.body).toMatchObject({ total: 3 });
    expect(paged.body.items).toHaveLength(1);
    expect((await find(`q=${encodeURIComponent(tag)}&role=auditor`)).body.total).toBe(0);
    expect((await find(`q=${'a'.repeat(201)}`)).status).toBe(422);
  });

  it('LIKE wildcards and the escape character match only themselves', async () => {
    const prefix = uniqueLogin('Qw');
    await createUser(`${prefix}a`, PASSWORD, { displayName: 'Fifty % off' });
    await createUser(`${prefix}_b`, PASSWORD, { displayName: 'Back\\slash' });
    await createUser(`${prefix}c`, PASSWORD, { displayName: 'Plain' });
    const within = (q: string) => find(`login=${prefix}&q=${encodeURIComponent(q)}`);
    // No login can hold "%": `q=%` finds only the name that does.
    expect((await within('%')).body.items.map((u) => u.login)).toEqual([`${prefix}a`]);
    expect((await within('_')).body.items.map((u) => u.login)).toEqual([`${prefix}_b`]);
    expect((await within('\\')).body.items.map((u) => u.login)).toEqual([`${prefix}_b`]);
    expect((await within('%%')).body.total).toBe(0);
    expect((await within('f_fty')).body.total).toBe(0);
    // Across every account, "%" still matches only what holds one.
    const all = await find('q=%25');
    expect(all.body.items.every((u) => `${u.login} ${u.displayName} ${u.email ?? ''}`.includes('%'))).toBe(true);
  });
});

describe('update, block, unblock, unlock, delete', () => {
  it('update profile, role and session limit; validation', async () => {
    const id = await createUser(uniqueLogin(), PASSWORD);
    const r = await callJson(`/v4/users/${id}`, {
      method: 'PATCH',
      auth: admin,
      json: { displayName: 'New Name', role: 'auditor', sessionLimit: 3 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ displayName: 'New Name', role: 'auditor', sessionLimit: 3 });
    expect(
      (await callJson(`/v4/users/${id}`, { method: 'PATCH', auth: admin, json: { sessionLimit: 6 } })).status,
    ).toBe(422);
    expect((await callJson(`/v4/users/${id}`, { method: 'PATCH', auth: admin, json: { password: 'x' } })).status).toBe(
      422,
    );
    expect((await callJson('/v4/users/no-such-id', { auth: admin })).status).toBe(404);
  });

  it('block stops Basic, Bearer and sessions at once; unblock restores', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD);
    const token = (
      await callJson<{ token: string }>('/v4/users/me/tokens', {
        method: 'POST',
        auth: basic(login, PASSWORD),
        json: { name: 't' },
      })
    ).body.token;
    const blocked = await callJson(`/v4/users/${id}/block`, { method: 'POST', auth: admin });
    expect(blocked.body).toMatchObject({ status: 'blocked', blockedReason: 'admin' });
    expect(
      (await callJson('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) })).body.code,
    ).toBe('ACCOUNT_BLOCKED');
    expect((await call('/v3/api_token_login', { method: 'POST', auth: `Bearer ${token}` })).status).toBe(401);
    expect((await callJson(`/v4/users/${id}/unblock`, { method: 'POST', auth: admin })).body).toMatchObject({
      status: 'active',
      blockedReason: null,
    });
    expect((await call('/v3/api_token_login', { method: 'POST', auth: `Bearer ${token}` })).status).toBe(200);
  });

  it('unlock ends a failed-login lock', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD);
    for (let i = 0; i < 3; i++)
      await call('/v3/login_without_session', { method: 'POST', auth: basic(login, 'Wr0ng$pass') });
    const locked = await callJson<{ lockedUntil: string | null }>(`/v4/users/${id}`, { auth: admin });
    expect(locked.body.lockedUntil).toEqual(expect.any(String));
    expect((await callJson(`/v4/users/${id}/unlock`, { method: 'POST', auth: admin })).body.lockedUntil).toBeNull();
    expect((await call('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(
      200,
    );
  });

  it('admin password reset: policy-checked, must change at next login', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD);
    expect(
      (await callJson(`/v4/users/${id}/password`, { method: 'POST', auth: admin, json: { password: 'weak' } })).status,
    ).toBe(422);
    expect(
      (await call(`/v4/users/${id}/password`, { method: 'POST', auth: admin, json: { password: 'Res3t$pass' } }))
        .status,
    ).toBe(204);
    expect(
      (await callJson('/v3/login_without_session', { method: 'POST', auth: basic(login, 'Res3t$pass') })).body.code,
    ).toBe('PASSWORD_EXPIRED');
  });

  it('delete: credentials stop; the login is reserved for USER_LOGIN_REUSE_DAY days, then free', async () => {
    // A short reuse period (set through the settings API), so the admin stays active while time moves.
    expect(
      (await call('/v3/settings', { method: 'PATCH', auth: admin, json: { values: { USER_LOGIN_REUSE_DAY: 2 } } }))
        .status,
    ).toBe(200);
    try {
      const login = uniqueLogin();
      const id = await createUser(login, PASSWORD);
      const token = (
        await callJson<{ token: string }>('/v4/users/me/tokens', {
          method: 'POST',
          auth: basic(login, PASSWORD),
          json: { name: 't' },
        })
      ).body.token;
      expect((await call(`/v4/users/${id}`, { method: 'DELETE', auth: admin })).status).toBe(204);
      expect((await call(`/v4/users/${id}`, { auth: admin })).status).toBe(404);
      expect((await call('/v3/api_token_login', { method: 'POST', auth: `Bearer ${token}` })).status).toBe(401);
      expect(
        (await callJson('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) })).status,
      ).toBe(401);
      const again = () =>
        callJson('/v4/users', {
          method: 'POST',
          auth: admin,
          json: { login: login.toUpperCase(), password: PASSWORD },
        });
      expect((await again()).status).toBe(409);
      await setClockOffset(2 * DAY - MINUTE);
      expect((await again()).status).toBe(409);
      await setClockOffset(2 * DAY + MINUTE);
      expect((await again()).status).toBe(201);
    } finally {
      await setClockOffset(0);
      await call('/v3/settings/USER_LOGIN_REUSE_DAY', { method: 'DELETE', auth: admin });
    }
  });
});

describe('administrators', () => {
  it('nobody changes their own role; the last active admin cannot be deleted, blocked or demoted', async () => {
    const me = await callJson<{ id: string }>('/v4/users/me', { auth: admin });
    const selfDemote = await callJson(`/v4/users/${me.body.id}`, {
      method: 'PATCH',
      auth: admin,
      json: { role: 'user' },
    });
    expect(selfDemote.status).toBe(403);
    // With a second admin, the first can be changed by the second; the last one cannot.
    const login = uniqueLogin('adm');
    const second = await createUser(login, PASSWORD, { role: 'admin' });
    const other = basic(login, PASSWORD);
    // Other files on this shared host may have left active administrators: they are blocked for the
    // moment too (and unblocked after), so that root-admin is the only active one.
    const active = await callJson<{ items: Array<{ id: string }> }>('/v4/users?role=admin&status=active&limit=100', {
      auth: admin,
    });
    const others = active.body.items.map((u) => u.id).filter((id) => id !== me.body.id);
    expect(others).toContain(second);
    try {
      for (const id of others) {
        expect((await callJson(`/v4/users/${id}/block`, { method: 'POST', auth: admin })).status).toBe(200);
      }
      // Now root-admin is the only active admin.
      expect((await callJson(`/v4/users/${me.body.id}/block`, { method: 'POST', auth: admin })).status).toBe(409);
      expect((await call(`/v4/users/${me.body.id}`, { method: 'DELETE', auth: admin })).status).toBe(409);
    } finally {
      for (const id of others) await callJson(`/v4/users/${id}/unblock`, { method: 'POST', auth: admin });
    }
    expect(
      (await callJson(`/v4/users/${second}`, { method: 'PATCH', auth: admin, json: { role: 'user' } })).status,
    ).toBe(200);
    expect((await callJson('/v4/users', { auth: other })).status).toBe(403);
  });

  it('a user cannot raise their own role (or touch any admin route)', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD);
    expect(
      (await callJson(`/v4/users/${id}`, { method: 'PATCH', auth: basic(login, PASSWORD), json: { role: 'admin' } }))
        .status,
    ).toBe(403);
  });

  it('super-access: elevated access that ends by itself after DEBUG_COUNTDOWN_USER_SU minutes', async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD);
    const user = basic(login, PASSWORD);
    expect((await call('/v4/users?limit=1', { auth: user })).status).toBe(403);
    const granted = await callJson<{ superAccessUntil: string }>(`/v4/users/${id}/super-access`, {
      method: 'POST',
      auth: admin,
    });
    expect(granted.status).toBe(200);
    expect(granted.body.superAccessUntil).toEqual(expect.any(String));
    expect((await call('/v4/users?limit=1', { auth: user })).status).toBe(200);
    // Lent rights cannot be made lasting: no admin accounts, no admin role, no super-access.
    expect(
      (
        await callJson('/v4/users', {
          method: 'POST',
          auth: user,
          json: { login: uniqueLogin(), password: PASSWORD, role: 'admin' },
        })
      ).status,
    ).toBe(403);
    expect((await callJson(`/v4/users/${id}/super-access`, { method: 'POST', auth: user })).status).toBe(403);
    const other = await createUser(uniqueLogin(), PASSWORD);
    expect(
      (await callJson(`/v4/users/${other}`, { method: 'PATCH', auth: user, json: { role: 'admin' } })).status,
    ).toBe(403);
    await setClockOffset(19 * MINUTE);
    expect((await call('/v4/users?limit=1', { auth: user })).status).toBe(200);
    await setClockOffset(20 * MINUTE + 1000);
    expect((await call('/v4/users?limit=1', { auth: user })).status).toBe(403);
  });

  it(
    'super-access cannot take over an administrator: an admin password reset is refused and changes ' + 'nothing',
    async () => {
      const holder = await createSuperAccessHolder();
      const adminLogin = uniqueLogin('adm');
      const adminId = await createUser(adminLogin, PASSWORD, { role: 'admin' });
      const login = (password: string) =>
        call('/v3/login_without_session', { method: 'POST', auth: basic(adminLogin, password) });
      const attack = await callJson(`/v4/users/${adminId}/password`, {
        method: 'POST',
        auth: holder.auth,
        json: { password: 'T4ken$over', mustChangePassword: false },
      });
      expect(attack.status).toBe(403);
      expect(String(attack.body.detail)).toMatch(
        /^super-access cannot reset the password of an account with administrator or auditor rights/,
      );
      expect((await login('T4ken$over')).status).toBe(401);
      expect((await login(PASSWORD)).status).toBe(200);
      // The root administrator, and another super-access holder (lent rights are not passed on), likewise.
      const root = await callJson<{ id: string }>('/v4/users/me', { auth: admin });
      expect(
        (
          await callJson(`/v4/users/${root.body.id}/password`, {
            method: 'POST',
            auth: holder.auth,
            json: { password: 'T4ken$over' },
          })
        ).status,
      ).toBe(403);
      const other = await createSuperAccessHolder();
      expect(
        (
          await callJson(`/v4/users/${other.id}/password`, {
            method: 'POST',
            auth: holder.auth,
            json: { password: 'T4ken$over' },
          })
        ).status,
      ).toBe(403);
      // What lent rights are for: a user's password, unlock, block.
      const userId = await createUser(uniqueLogin(), PASSWORD);
      expect(
        (
          await call(`/v4/users/${userId}/password`, {
            method: 'POST',
            auth: holder.auth,
            json: { password: 'N3w$secret' },
          })
        ).status,
      ).toBe(204);
      expect((await call(`/v4/users/${userId}/unlock`, { method: 'POST', auth: holder.auth })).status).toBe(200);
      expect((await call(`/v4/users/${userId}/block`, { method: 'POST', auth: holder.auth })).status).toBe(200);
      // Other tests count the active administrators.
      expect((await call(`/v4/users/${adminId}`, { method: 'DELETE', auth: admin })).status).toBe(204);
    },
  );

  it('super-access gives no roles: no auditor or admin account, no role change', async () => {
    const holder = await createSuperAccessHolder();
    for (const role of ['admin', 'auditor']) {
      const r = await callJson('/v4/users', {
        method: 'POST',
        auth: holder.auth,
        json: { login: uniqueLogin(), password: PASSWORD, role },
      });
      expect(r.status, role).toBe(403);
      expect(String(r.body.detail)).toMatch(/^super-access cannot/);
    }
    expect(
      (
        await callJson('/v4/users', {
          method: 'POST',
          auth: holder.auth,
          json: { login: uniqueLogin(), password: PASSWORD },
        })
      ).status,
    ).toBe(201);
    const auditor = await createUser(uniqueLogin(), PASSWORD, { role: 'auditor' });
    const user = await createUser(uniqueLogin(), PASSWORD);
    expect(
      (await callJson(`/v4/users/${user}`, { method: 'PATCH', auth: holder.auth, json: { role: 'auditor' } })).status,
    ).toBe(403);
    expect(
      (await callJson(`/v4/users/${auditor}`, { method: 'PATCH', auth: holder.auth, json: { role: 'user' } })).status,
    ).toBe(403);
    expect((await callJson(`/v4/users/${auditor}`, { auth: admin })).body).toMatchObject({ role: 'auditor' });
    const profile = await callJson(`/v4/users/${user}`, {
      method: 'PATCH',
      auth: holder.auth,
      json: { displayName: 'Helped', role: 'user' },
    });
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ displayName: 'Helped', role: 'user' });
  });
});

/** Audit events written with the changes they record, and the inactivity job (Node, in-process). */
import { asc } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScheduledJobs } from '../../worker/src/schedule/index.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { auditOutbox, users } from '../../schema/index.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { ADMIN, basic } from '../harness/client.js';
import { scopeWithoutRequest } from '../../worker/src/http/scope.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const post = (path: string, auth: string, json?: unknown) =>
  t.app.request(`/api/auth${path}`, {
    method: 'POST',
    headers: { Authorization: auth, ...(json ? { 'Content-Type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });

async function events() {
  return t.db.select().from(auditOutbox).orderBy(asc(auditOutbox.at));
}

describe('audit events', () => {
  it('login success, failure, lockout, token issue and revoke, with no secret in them', async () => {
    const admin = basic(ADMIN.login, ADMIN.password);
    expect((await post('/v4/users', admin, { login: 'alice', password: 'Str0ng$pass' })).status).toBe(201);
    expect((await post('/v3/login_without_session', basic('alice', 'Str0ng$pass'))).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await post('/v3/login_without_session', basic('alice', 'Wr0ng$pass'))).status).toBe(401);
    const issued = (await (await post('/v4/users/me/tokens', admin, { name: 'n' })).json()) as {
      id: string;
      token: string;
    };
    const del = await t.app.request(`/api/auth/v4/users/me/tokens/${issued.id}`, {
      method: 'DELETE',
      headers: { Authorization: admin },
    });
    expect(del.status).toBe(204);
    const again = await t.app.request(`/api/auth/v4/users/me/tokens/${issued.id}`, {
      method: 'DELETE',
      headers: { Authorization: admin },
    });
    expect(again.status).toBe(404);

    const all = await events();
    const types = all.map((e) => e.type);
    expect(types).toContain('user.created');
    expect(types.filter((x) => x === 'login.failure')).toHaveLength(3);
    expect(types.filter((x) => x === 'account.locked')).toHaveLength(1);
    expect(types).toContain('token.issued');
    expect(types.filter((x) => x === 'token.revoked')).toHaveLength(1); // the refused second revoke is not an event
    const aliceSuccess = all.find((e) => e.type === 'login.success' && e.subjectLogin === 'alice');
    expect(aliceSuccess?.stream).toBe('user_activity');
    expect(aliceSuccess?.requestId).toEqual(expect.any(String));
    const text = JSON.stringify(all);
    for (const secret of ['Str0ng$pass', 'Wr0ng$pass', ADMIN.password, issued.token, 'argon2'])
      expect(text).not.toContain(secret);
  });
});

describe('inactivity job', () => {
  it('blocks accounts idle for USER_INACTIVE_TIMEOUT_DAY days, once, with an audit event', async () => {
    const admin = basic(ADMIN.login, ADMIN.password);
    expect((await post('/v4/users', admin, { login: 'idle', password: 'Str0ng$pass' })).status).toBe(201);
    expect((await post('/v4/users', admin, { login: 'busy', password: 'Str0ng$pass' })).status).toBe(201);
    const day = 86_400_000;
    t.clock.now += 40 * day;
    expect((await post('/v3/login_without_session', basic('busy', 'Str0ng$pass'))).status).toBe(200);
    expect((await post('/v3/login_without_session', admin)).status).toBe(200);
    t.clock.now += 6 * day;
    const config = parseEnvironment({});
    expect(await runScheduledJobs(scopeWithoutRequest({ db: t.db, config, now: () => t.clock.now }))).toEqual([]);
    expect(await runScheduledJobs(scopeWithoutRequest({ db: t.db, config, now: () => t.clock.now }))).toEqual([]);
    const rows = await t.db
      .select({ login: users.login, status: users.status, reason: users.blockedReason })
      .from(users);
    const byLogin = Object.fromEntries(rows.map((r) => [r.login, r]));
    expect(byLogin.idle).toMatchObject({ status: 'blocked', reason: 'inactivity' });
    expect(byLogin.busy).toMatchObject({ status: 'active' });
    expect(byLogin[ADMIN.login]).toMatchObject({ status: 'active' });
    const blockedEvents = (await events()).filter((e) => e.type === 'account.blocked' && e.subjectLogin === 'idle');
    expect(blockedEvents).toHaveLength(1);
  });
});

describe('inactivity job and sessions', () => {
  it('a block by the job ends the live sessions of the account for good', async () => {
    const { eq } = await import('drizzle-orm');
    const { sessions } = await import('../../schema/index.js');
    const admin = basic(ADMIN.login, ADMIN.password);
    expect((await post('/v4/users', admin, { login: 'idle-session', password: 'Str0ng$pass' })).status).toBe(201);
    const res = await t.app.request('/api/auth/v3/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login: 'idle-session', password: 'Str0ng$pass' }),
    });
    expect(res.status).toBe(200);
    // The account looks inactive (e.g. a long SESSION_IDLE_TIMEOUT_MIN with a short USER_INACTIVE_TIMEOUT_DAY).
    await t.db
      .update(users)
      .set({ lastActivityAt: t.clock.now - 46 * 86_400_000 })
      .where(eq(users.login, 'idle-session'));
    // The next firing of the schedule (the job ran at this time in the test above: its pace skips it).
    t.clock.now += 5 * 60_000;
    await runScheduledJobs(scopeWithoutRequest({ db: t.db, config: parseEnvironment({}), now: () => t.clock.now }));
    const [user] = await t.db.select().from(users).where(eq(users.login, 'idle-session'));
    expect(user).toMatchObject({ status: 'blocked', blockedReason: 'inactivity' });
    const rows = await t.db.select().from(sessions).where(eq(sessions.userId, user!.id));
    expect(rows.map((r) => r.revokedReason)).toEqual(['block']);
  });
});

describe('sessions of blocked or deleted accounts', () => {
  it('end at once', async () => {
    const admin = basic(ADMIN.login, ADMIN.password);
    for (const login of ['blockme', 'deleteme']) {
      const created = await post('/v4/users', admin, { login, password: 'Str0ng$pass' });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const res = await t.app.request('/api/auth/v3/login', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ login, password: 'Str0ng$pass' }),
      });
      expect(res.status).toBe(200);
      const cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
      const me = () => t.app.request('/api/auth/v4/users/me', { headers: { Cookie: cookie } });
      expect((await me()).status).toBe(200);
      // Through the API, as an administrator ends them (the writes go through accounts/, which drops the
      // account's cached session at once: architecture.md §6).
      const ended =
        login === 'blockme'
          ? await post(`/v4/users/${id}/block`, admin)
          : await t.app.request(`/api/auth/v4/users/${id}`, { method: 'DELETE', headers: { Authorization: admin } });
      expect(ended.status).toBeLessThan(300);
      expect((await me()).status).toBe(401);
    }
  });
});

describe('audit of administration', () => {
  it('settings changes record before/after with secrets masked; super-access granted and ended', async () => {
    const admin = basic(ADMIN.login, ADMIN.password);
    const patch = await t.app.request('/api/auth/v3/settings', {
      method: 'PATCH',
      headers: { Authorization: admin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ values: { EMAIL_HOST_PASSWORD: 'very-secret-mail-pw', AUTH_FAILED_COUNT: 4 } }),
    });
    expect(patch.status).toBe(200);
    expect((await post('/v4/users', admin, { login: 'temp-su', password: 'Str0ng$pass' })).status).toBe(201);
    const { items } = (await (
      await t.app.request('/api/auth/v4/users?login=temp-su', { headers: { Authorization: admin } })
    ).json()) as { items: { id: string }[] };
    expect((await post(`/v4/users/${items[0]!.id}/super-access`, admin, { minutes: 5 })).status).toBe(200);
    t.clock.now += 6 * 60_000;
    await runScheduledJobs(scopeWithoutRequest({ db: t.db, config: parseEnvironment({}), now: () => t.clock.now }));

    const all = await events();
    const changed = all.filter((e) => e.type === 'setting.changed');
    expect(changed.map((e) => e.data)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'EMAIL_HOST_PASSWORD', before: '***', after: '***' }),
        expect.objectContaining({ name: 'AUTH_FAILED_COUNT', before: '3', after: '4', beforeSource: 'default' }),
      ]),
    );
    expect(changed.every((e) => e.actorLogin === ADMIN.login)).toBe(true);
    expect(JSON.stringify(all)).not.toContain('very-secret-mail-pw');
    expect(all.filter((e) => e.subjectLogin === 'temp-su').map((e) => e.type)).toEqual(
      expect.arrayContaining(['super_access.granted', 'super_access.ended']),
    );
  });
});

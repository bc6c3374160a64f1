/**
 * The administrator's overview (GET /v4/admin/overview) and the sessions of all accounts
 * (GET /v4/sessions), on both hosts: each number moves with what it counts, the short lists name
 * the accounts, the roles are enforced, and the login filter's wildcards are literal.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loggedInBrowser } from '../harness/browser.js';
import {
  ADMIN,
  DAY,
  basic,
  baseUrl,
  callJson,
  createSuperAccessHolder,
  createUser,
  setClockOffset,
  uniqueLogin,
} from '../harness/client.js';

const PASSWORD = 'Str0ng$pass';
const WRONG = 'Wr0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);

interface Listed {
  count: number;
  items: { id: string; login: string; at: string | null }[];
}
interface Overview {
  generatedAt: string;
  since: string;
  last24h: {
    failedLogins: { count: number; items: { at: string; login: string | null; userId: string | null }[] };
    lockEvents: { count: number; logins: number };
    throttledAddresses: number;
    mailGivenUp: number;
  };
  now: {
    activeSessions: number;
    lockedLogins: { count: number; items: { login: string; source: string; userId: string | null }[] };
    blocked: Listed;
    passwordExpired: Listed;
    inactiveSoon: Listed;
    mailFailing: number;
    mailFailures: unknown[];
  };
  logStore: { state: string };
  mail: { state: string; detail: string | null };
}
interface SessionPage {
  items: { id: string; current: boolean; user: { id: string; login: string; displayName: string } }[];
  total: number;
  limit: number;
  offset: number;
}

const overview = async (auth = admin) => {
  const r = await callJson<Overview>('/v4/admin/overview', { auth });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const attempt = (login: string, password: string) =>
  callJson('/v3/login_without_session', { method: 'POST', auth: basic(login, password) });

afterEach(() => setClockOffset(0));

describe('GET /v4/admin/overview', () => {
  it('failed logins and locks of the last 24 hours, and the logins locked now', async () => {
    const login = uniqueLogin('ov');
    const id = await createUser(login, PASSWORD);
    const before = await overview();
    expect(before.logStore.state).toMatch(/^(configured|embedded)$/);
    expect(before.mail.state).toMatch(/^(configured|outbox|not_configured)$/);
    expect(Date.parse(before.generatedAt) - Date.parse(before.since)).toBe(DAY);

    // AUTH_FAILED_COUNT is 3 in the test hosts: the third failure locks the login for untrusted clients.
    for (let i = 0; i < 3; i++) expect((await attempt(login, WRONG)).status).toBe(401);
    const after = await overview();
    expect(after.last24h.failedLogins.count).toBe(before.last24h.failedLogins.count + 3);
    // Newest first; another suite on this host may have left failures dated later (it moved the clock).
    expect(after.last24h.failedLogins.items).toContainEqual(expect.objectContaining({ login, userId: id }));
    expect(after.last24h.lockEvents.count).toBe(before.last24h.lockEvents.count + 1);
    expect(after.last24h.lockEvents.logins).toBe(before.last24h.lockEvents.logins + 1);
    expect(after.now.lockedLogins.count).toBe(before.now.lockedLogins.count + 1);
    expect(after.now.lockedLogins.items).toContainEqual(
      expect.objectContaining({ login: login.toLowerCase(), source: 'local', userId: id }),
    );

    // A day later the failures are out of the window, and the lock has ended.
    await setClockOffset(DAY + 60_000);
    const later = await overview();
    expect(later.last24h.failedLogins.items.map((f) => f.login)).not.toContain(login);
    expect(later.now.lockedLogins.items.map((l) => l.login)).not.toContain(login.toLowerCase());
  });

  it('leaves out failures dated after now (a clock running ahead): not yet of the last 24 hours', async () => {
    const ahead = [uniqueLogin('ova'), uniqueLogin('ova'), uniqueLogin('ova')];
    for (const login of ahead) await createUser(login, PASSWORD);
    const now = uniqueLogin('ovn');
    const nowId = await createUser(now, PASSWORD);
    const before = await overview();
    // Six failures stamped twelve hours ahead (two per login: none locks), more than the short list holds.
    await setClockOffset(DAY / 2);
    for (const login of ahead) for (let i = 0; i < 2; i++) expect((await attempt(login, WRONG)).status).toBe(401);
    await setClockOffset(0);
    expect((await attempt(now, WRONG)).status).toBe(401);
    const after = await overview();
    expect(after.last24h.failedLogins.count).toBe(before.last24h.failedLogins.count + 1);
    expect(after.last24h.failedLogins.items[0]).toMatchObject({ login: now, userId: nowId });
    expect(after.last24h.failedLogins.items.map((f) => f.login)).not.toContain(ahead[0]);
  });

  it('blocked accounts, expired passwords and accounts inactive soon, each counted and listed', async () => {
    const before = await overview();
    const blocked = uniqueLogin('ovb');
    const blockedId = await createUser(blocked, PASSWORD);
    expect((await callJson(`/v4/users/${blockedId}/block`, { method: 'POST', auth: admin })).status).toBe(200);
    const after = await overview();
    expect(after.now.blocked.count).toBe(before.now.blocked.count + 1);
    expect(after.now.blocked.items.map((i) => i.login)).toContain(blocked);

    // USER_INACTIVE_TIMEOUT_DAY (45 by default): 40 days on, an account created now is blocked within 7 days.
    await setClockOffset(40 * DAY);
    const soonBefore = await overview();
    await setClockOffset(0);
    const idle = uniqueLogin('ovi');
    await createUser(idle, PASSWORD);
    await setClockOffset(40 * DAY);
    const soonAfter = await overview();
    expect(soonAfter.now.inactiveSoon.count).toBe(soonBefore.now.inactiveSoon.count + 1);
    // Blocked accounts are not "inactive soon": the block is already there.
    expect(soonAfter.now.inactiveSoon.items.map((i) => i.login)).not.toContain(blocked);

    // USER_PASSWORD_EXPIRATION_DAY (60 by default): 61 days on, the new password is expired (the
    // administrator's too, so this reading goes with an API token, which a password's age does not stop).
    const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
      method: 'POST',
      auth: admin,
      json: { name: 'overview' },
    });
    await setClockOffset(61 * DAY);
    const expired = await overview(`Bearer ${issued.body.token}`);
    await setClockOffset(0);
    expect(expired.now.passwordExpired.count).toBeGreaterThanOrEqual(1);
    const now = await overview();
    expect(expired.now.passwordExpired.count).toBeGreaterThan(now.now.passwordExpired.count);
  });

  it('counts the live sessions of all accounts', async () => {
    const login = uniqueLogin('ovs');
    await createUser(login, PASSWORD, { sessionLimit: 2 });
    const before = await overview();
    const b = await loggedInBrowser(baseUrl(), login, PASSWORD);
    expect((await overview()).now.activeSessions).toBe(before.now.activeSessions + 1);
    await b.fetch(`${baseUrl()}/v3/logout`, { method: 'POST' });
    expect((await overview()).now.activeSessions).toBe(before.now.activeSessions);
  });

  it('administrators only: users and auditors 403, super-access refused', async () => {
    const user = uniqueLogin('ovu');
    await createUser(user, PASSWORD);
    const auditor = uniqueLogin('ova');
    await createUser(auditor, PASSWORD, { role: 'auditor' });
    for (const login of [user, auditor]) {
      const r = await callJson('/v4/admin/overview', { auth: basic(login, PASSWORD) });
      expect(r.status).toBe(403);
    }
    const holder = await createSuperAccessHolder();
    const lent = await callJson<{ detail: string }>('/v4/admin/overview', { auth: holder.auth });
    expect(lent.status).toBe(403);
    expect(lent.body.detail).toMatch(/^super-access cannot /);
    expect((await callJson('/v4/admin/overview')).status).toBe(401);
  });
});

describe('GET /v4/sessions', () => {
  it('the live sessions of all accounts by a login substring; an administrator ends one', async () => {
    const login = uniqueLogin('Sx');
    const id = await createUser(login, PASSWORD, { sessionLimit: 2, displayName: 'Session Owner' });
    const other = uniqueLogin('Sy');
    await createUser(other, PASSWORD);
    await loggedInBrowser(baseUrl(), login, PASSWORD);
    const kept = await loggedInBrowser(baseUrl(), login, PASSWORD);
    await loggedInBrowser(baseUrl(), other, PASSWORD);

    // A substring from the middle of the login, in another case.
    const part = login.slice(2, -2).toUpperCase();
    const page = await callJson<SessionPage>(`/v4/sessions?login=${encodeURIComponent(part)}`, { auth: admin });
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(2);
    expect(page.body.items.map((s) => s.user)).toEqual([
      { id, login, displayName: 'Session Owner' },
      { id, login, displayName: 'Session Owner' },
    ]);
    const firstPage = await callJson<SessionPage>(`/v4/sessions?login=${encodeURIComponent(part)}&limit=1`, {
      auth: admin,
    });
    expect(firstPage.body).toMatchObject({ total: 2, limit: 1, offset: 0 });
    expect(firstPage.body.items).toHaveLength(1);
    // Most recently used first: the second login's session.
    const newest = firstPage.body.items[0]!.id;

    // Ending it (the account's own route) takes it off the list, and its cookie is refused at once.
    const ended = await callJson(`/v4/users/${id}/sessions/${encodeURIComponent(newest)}`, {
      method: 'DELETE',
      auth: admin,
    });
    expect(ended.status).toBe(204);
    const left = await callJson<SessionPage>(`/v4/sessions?login=${encodeURIComponent(part)}`, { auth: admin });
    expect(left.body.total).toBe(1);
    expect(left.body.items[0]!.id).not.toBe(newest);
    expect((await kept.fetch(`${baseUrl()}/v4/users/me`)).status).toBe(401);
  });

  it('LIKE wildcards in the filter match only themselves', async () => {
    const login = uniqueLogin('Sw');
    await createUser(login, PASSWORD);
    await loggedInBrowser(baseUrl(), login, PASSWORD);
    const all = await callJson<SessionPage>('/v4/sessions?limit=100', { auth: admin });
    expect(all.body.total).toBeGreaterThan(0);
    // No login holds "%" (the login rule); "_" only where a login has one.
    for (const wildcard of ['%', '%%', '\\', '\\%']) {
      const r = await callJson<SessionPage>(`/v4/sessions?login=${encodeURIComponent(wildcard)}`, { auth: admin });
      expect(r.status, wildcard).toBe(200);
      expect(r.body.total, wildcard).toBe(0);
    }
    const under = await callJson<SessionPage>('/v4/sessions?login=_&limit=100', { auth: admin });
    expect(under.body.items.every((s) => s.user.login.includes('_'))).toBe(true);
    expect(under.body.items.map((s) => s.user.login)).not.toContain(login);
  });

  it('administrators only; bad paging is 422', async () => {
    const user = uniqueLogin('Su');
    await createUser(user, PASSWORD);
    expect((await callJson('/v4/sessions', { auth: basic(user, PASSWORD) })).status).toBe(403);
    for (const bad of ['limit=0', 'limit=101', 'offset=-1', `login=${'a'.repeat(151)}`]) {
      expect((await callJson(`/v4/sessions?${bad}`, { auth: admin })).status, bad).toBe(422);
    }
  });
});

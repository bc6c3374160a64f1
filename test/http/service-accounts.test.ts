/**
 * Service accounts (docs/api.md, "Service accounts"): accounts that own API tokens and never sign in. Created by
 * an administrator without a password or an address; every way of signing in answers for one exactly as for an
 * unknown login; an administrator issues, lists and revokes its tokens, which work within their scopes; it is
 * never the administrator who remains. Its own host: a token of a service administrator tries to demote the only
 * person administrator.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, uniqueLogin } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
let host: RunningHost;
let base: string;

beforeAll(async () => {
  host = await startTestHost(kind, {});
  base = host.url;
});
afterAll(async () => {
  await host?.stop();
});

type Problem = { status: number; code?: string; detail?: string; errors?: { path: string }[] };
type User = { id: string; login: string; kind: string; passwordExpiresAt: string | null };

async function createService(extra: Record<string, unknown> = {}) {
  const login = uniqueLogin('svc');
  const r = await callJson<User & Problem>('/v4/users', {
    base,
    method: 'POST',
    auth: admin,
    json: { login, kind: 'service', ...extra },
  });
  return { r, login };
}

/** The answer without what differs between any two requests (its id, its path). */
function comparable(r: { status: number; body: unknown; res: Response }) {
  const body = r.body && typeof r.body === 'object' ? { ...(r.body as Record<string, unknown>) } : r.body;
  if (body && typeof body === 'object') for (const k of ['requestId', 'instance']) delete (body as never)[k];
  return { status: r.status, body, challenge: r.res.headers.get('www-authenticate') };
}

describe('service accounts', () => {
  it('are made without a password or an address, and listed apart', async () => {
    const { r, login } = await createService({ role: 'auditor' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ login, kind: 'service', passwordExpiresAt: null });
    const withPassword = await createService({ password: 'Str0ng$pass-x' });
    expect(withPassword.r.status).toBe(422);
    expect(withPassword.r.body.errors?.[0]?.path).toBe('password');
    const withEmail = await createService({ email: 'ci@example.com' });
    expect(withEmail.r.status).toBe(422);
    expect(withEmail.r.body.errors?.[0]?.path).toBe('email');

    const services = await callJson<{ items: User[] }>('/v4/users?kind=service', { base, auth: admin });
    expect(services.body.items.map((u) => u.login)).toContain(login);
    expect(services.body.items.every((u) => u.kind === 'service')).toBe(true);
    const people = await callJson<{ items: User[] }>('/v4/users?kind=person', { base, auth: admin });
    expect(people.body.items.map((u) => u.login)).not.toContain(login);
    expect(people.body.items.map((u) => u.login)).toContain(ADMIN.login);
    // Audited as any account's creation, with its kind.
    await expect
      .poll(
        async () => {
          const events = await callJson<{ items?: { data: Record<string, unknown> }[] }>(
            `/v3/logs/crud_admin/events?type=user.created&user=${encodeURIComponent(login)}&size=10`,
            { base, auth: admin },
          );
          return events.body.items?.[0]?.data;
        },
        { timeout: 15_000 },
      )
      .toMatchObject({ role: 'auditor', kind: 'service' });
    // It has no password: an administrator cannot give it one.
    const reset = await callJson(`/v4/users/${r.body.id}/password`, {
      base,
      method: 'POST',
      auth: admin,
      json: { password: 'An0ther$secret-1' },
    });
    expect(reset.status).toBe(409);
  });

  it('never signs in: every way answers as for an unknown login', async () => {
    const { login } = await createService();
    const unknown = uniqueLogin('nobody');
    const password = 'Whatever$1234';
    const ways: Array<(who: string) => Promise<{ status: number; body: unknown; res: Response }>> = [
      (who) => callJson('/v3/login', { base, method: 'POST', json: { login: who, password } }),
      (who) => callJson('/v3/login_without_session', { base, method: 'POST', auth: basic(who, password) }),
      (who) => callJson('/v4/users/me', { base, auth: basic(who, password) }),
      (who) =>
        callJson('/v3/oauth_login', {
          base,
          method: 'POST',
          form: { grant_type: 'password', username: who, password },
        }),
      (who) => callJson('/v3/password_reset/request', { base, method: 'POST', json: { login: who } }),
      (who) => callJson('/v3/login/union', { base, method: 'POST', json: { login: who, password } }),
    ];
    for (const way of ways) {
      const asService = comparable(await way(login));
      const asUnknown = comparable(await way(unknown));
      expect(asService.status).toBeGreaterThanOrEqual(200);
      expect(asService).toEqual(asUnknown);
    }
    // The audit trail does not tell them apart either: a failed login of nobody (no account named).
    type Event = { user?: { id?: string; name?: string }; data: Record<string, unknown> };
    const failures = async (who: string) => {
      const r = await callJson<{ items?: Event[] }>(
        `/v3/logs/user_activity/events?type=login.failure&user=${encodeURIComponent(who)}&size=20`,
        { base, auth: admin },
      );
      return r.body.items ?? [];
    };
    await expect.poll(async () => (await failures(login)).length, { timeout: 15_000 }).toBeGreaterThan(0);
    await expect.poll(async () => (await failures(unknown)).length, { timeout: 15_000 }).toBeGreaterThan(0);
    const [service] = await failures(login);
    const [nobody] = await failures(unknown);
    expect(service!.user?.id).toBeUndefined();
    expect(Object.keys(service!.user ?? {}).sort()).toEqual(Object.keys(nobody!.user ?? {}).sort());
  });

  it('an administrator issues, lists and revokes its tokens, which work within their scopes', async () => {
    const { r } = await createService();
    const id = r.body.id;
    const issued = await callJson<{ id: string; token: string; scopes: string[] }>(`/v4/users/${id}/tokens`, {
      base,
      method: 'POST',
      auth: admin,
      json: { name: 'ci', scopes: ['account:read'], expiresInDays: 30 },
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    expect(issued.body.scopes).toEqual(['account:read']);
    const bearer = `Bearer ${issued.body.token}`;
    const me = await callJson<User>('/v4/users/me', { base, auth: bearer });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id, kind: 'service' });
    const beyond = await callJson<Problem>('/v4/users', { base, auth: bearer });
    expect(beyond.status).toBe(403);
    expect(beyond.body.code).toBe('INSUFFICIENT_SCOPE');
    // A token may not issue tokens, even for its own account.
    expect(
      (await callJson(`/v4/users/${id}/tokens`, { base, method: 'POST', auth: bearer, json: { name: 'x' } })).status,
    ).toBe(403);

    const listed = await callJson<{ items: { id: string }[] }>(`/v4/users/${id}/tokens`, { base, auth: admin });
    expect(listed.body.items.map((t) => t.id)).toEqual([issued.body.id]);
    const revoked = await callJson(`/v4/users/${id}/tokens/${issued.body.id}`, { base, method: 'DELETE', auth: admin });
    expect(revoked.status).toBe(204);
    expect((await callJson('/v4/users/me', { base, auth: bearer })).status).toBe(401);

    // A person's tokens are that person's to issue.
    const person = await callJson<User>('/v4/users', {
      base,
      method: 'POST',
      auth: admin,
      json: { login: uniqueLogin('p'), password: 'Str0ng$pass' },
    });
    const refused = await callJson(`/v4/users/${person.body.id}/tokens`, {
      base,
      method: 'POST',
      auth: admin,
      json: { name: 'impersonation' },
    });
    expect(refused.status).toBe(409);
  });

  it('is never the administrator who remains', async () => {
    const { r } = await createService({ role: 'admin' });
    expect(r.status).toBe(201);
    const issued = await callJson<{ token: string }>(`/v4/users/${r.body.id}/tokens`, {
      base,
      method: 'POST',
      auth: admin,
      json: { name: 'ops', scopes: ['users:write', 'users:read'] },
    });
    expect(issued.status).toBe(201);
    const root = await callJson<User>('/v4/users/me', { base, auth: admin });
    // The only person administrator: a service administrator may not demote it.
    const demote = await callJson<Problem>(`/v4/users/${root.body.id}`, {
      base,
      method: 'PATCH',
      auth: `Bearer ${issued.body.token}`,
      json: { role: 'user' },
    });
    expect(demote.status).toBe(409);
    expect((await callJson<User>('/v4/users/me', { base, auth: admin })).body).toMatchObject({ role: 'admin' });
  });
});

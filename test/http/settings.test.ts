/** /v3/settings on both hosts: priority UI → env → default, atomic batches, secrets, live effect. */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, uniqueLogin } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
type Setting = { name: string; value?: unknown; isSet?: boolean; source: string; default?: unknown; min?: number; max?: number; restartRequired: boolean };

let host: RunningHost;
beforeAll(async () => {
  // Its own host: the environment sets one Security variable and the mail password.
  host = await startTestHost(kind, { USER_PASSWORD_MIN_LENGTH: '9', EMAIL_HOST_PASSWORD: 'env-mail-secret' });
});
afterAll(() => host?.stop());

const req = async (path: string, init: { method?: string; json?: unknown; auth?: string } = {}) => {
  const res = await fetch(`${host.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: init.auth ?? admin, ...(init.json !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> & { items?: Setting[] } };
};
const setting = async (name: string) => (await req('/v3/settings')).body.items!.find((s) => s.name === name)!;

describe('settings', () => {
  it('lists every UI-editable variable and no hidden one; secrets only as isSet', async () => {
    const r = await req('/v3/settings');
    expect(r.status).toBe(200);
    const names = r.body.items!.map((s) => s.name);
    expect(names).toContain('AUTH_FAILED_COUNT');
    expect(names).toContain('LOG_LEVEL');
    expect(names).toContain('EMAIL_HOST');
    expect(names).toContain('PROFILE');
    for (const hidden of ['DB_SCHEMA', 'SESSION_SECRET_KEY', 'ROOT_PATH', 'ERRTRACK_CA', 'LIBSQL_URL']) expect(names).not.toContain(hidden);
    expect(names).toHaveLength(38);
    const mail = r.body.items!.find((s) => s.name === 'EMAIL_HOST_PASSWORD')!;
    expect(mail).toMatchObject({ isSet: true, source: 'env' });
    expect(mail.value).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toContain('env-mail-secret');
    expect(await setting('AUTH_FAILED_COUNT')).toMatchObject({ value: 3, source: 'default', default: 3, min: 1, max: 100 });
    expect((await setting('PROFILE')).restartRequired).toBe(true);
  });

  it('priority UI → environment → default, end to end, and the change applies to the next login', async () => {
    expect(await setting('USER_PASSWORD_MIN_LENGTH')).toMatchObject({ value: 9, source: 'env' });
    const create = (password: string) => req('/v4/users', { method: 'POST', json: { login: uniqueLogin(), password } });
    expect((await create('Aa1$aaaa')).status).toBe(422); // 8 < 9 (env)
    const saved = await req('/v3/settings', { method: 'PATCH', json: { values: { USER_PASSWORD_MIN_LENGTH: 8 } } });
    expect(saved.status).toBe(200);
    expect(await setting('USER_PASSWORD_MIN_LENGTH')).toMatchObject({ value: 8, source: 'ui' });
    expect((await create('Aa1$aaaa')).status).toBe(201); // the very next request
    expect((await req('/v3/settings/USER_PASSWORD_MIN_LENGTH', { method: 'DELETE' })).body).toMatchObject({ value: 9, source: 'env' });
    expect((await create('Aa1$aaab')).status).toBe(422);
  });

  it('a lockout setting applies to the very next login', async () => {
    const login = uniqueLogin();
    expect((await req('/v4/users', { method: 'POST', json: { login, password: 'Str0ng$pass' } })).status).toBe(201);
    expect((await req('/v3/settings', { method: 'PATCH', json: { values: { AUTH_FAILED_COUNT: 1 } } })).status).toBe(200);
    try {
      const attempt = (password: string) => req('/v3/login_without_session', { method: 'POST', auth: basic(login, password) });
      expect((await attempt('Wr0ng$pass')).body.code).toBe('INVALID_CREDENTIALS');
      expect((await attempt('Str0ng$pass')).body.code).toBe('ACCOUNT_LOCKED');
    } finally {
      await req('/v3/settings/AUTH_FAILED_COUNT', { method: 'DELETE' });
    }
  });

  it('a batch with one bad value changes nothing, and names the bad one (422)', async () => {
    const before = await setting('AUTH_FAILED_COUNT');
    const r = await req('/v3/settings', { method: 'PATCH', json: { values: { AUTH_FAILED_COUNT: 5, USER_PASSWORD_MAX_LENGTH: 'long', DB_SCHEMA: 'x' } } });
    expect(r.status).toBe(422);
    const paths = (r.body.errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(['values.DB_SCHEMA', 'values.USER_PASSWORD_MAX_LENGTH']);
    expect(await setting('AUTH_FAILED_COUNT')).toEqual(before);
  });

  it('ordered pairs are kept: min length above max length is refused', async () => {
    const r = await req('/v3/settings', { method: 'PATCH', json: { values: { USER_PASSWORD_MIN_LENGTH: 30 } } });
    expect(r.status).toBe(422);
    expect(String(r.body.detail)).toContain('USER_PASSWORD_MAX_LENGTH');
  });

  it('a secret can be set but is never returned', async () => {
    expect((await req('/v3/settings', { method: 'PATCH', json: { values: { EMAIL_HOST_PASSWORD: 'ui-mail-secret' } } })).status).toBe(200);
    const s = await setting('EMAIL_HOST_PASSWORD');
    expect(s).toMatchObject({ isSet: true, source: 'ui' });
    expect(JSON.stringify((await req('/v3/settings')).body)).not.toContain('ui-mail-secret');
  });

  it('unknown or hidden names cannot be reset; only admins may read or write', async () => {
    expect((await req('/v3/settings/DB_SCHEMA', { method: 'DELETE' })).status).toBe(404);
    expect((await req('/v3/settings/NOPE', { method: 'DELETE' })).status).toBe(404);
    const login = uniqueLogin();
    expect((await req('/v4/users', { method: 'POST', json: { login, password: 'Str0ng$pass', role: 'auditor' } })).status).toBe(201);
    expect((await req('/v3/settings', { auth: basic(login, 'Str0ng$pass') })).status).toBe(403);
    expect((await req('/v3/settings', { auth: 'Basic' })).status).toBe(401);
  });
});

/** /v3/settings on both hosts: priority UI → env → default, atomic batches, secrets, live effect. */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, uniqueLogin } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
type Setting = {
  name: string;
  value?: unknown;
  isSet?: boolean;
  source: string;
  default?: unknown;
  min?: number;
  max?: number;
  restartRequired: boolean;
};

let host: RunningHost;
beforeAll(async () => {
  // Its own host: the environment sets one Security variable and the mail password.
  host = await startTestHost(kind, { USER_PASSWORD_MIN_LENGTH: '9', EMAIL_HOST_PASSWORD: 'env-mail-secret' });
});
afterAll(() => host?.stop());

const req = async (path: string, init: { method?: string; json?: unknown; auth?: string } = {}) => {
  const res = await fetch(`${host.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      Authorization: init.auth ?? admin,
      ...(init.json !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: (text ? JSON.parse(text) : null) as Record<string, unknown> & { items?: Setting[] },
  };
};
const setting = async (name: string) => (await req('/v3/settings')).body.items!.find((s) => s.name === name)!;

/** Puts the password policy back to its environment and default values, whatever a test left saved. */
async function restorePolicy(): Promise<void> {
  const values = {
    USER_PASSWORD_MIN_LENGTH: 9,
    USER_PASSWORD_MAX_LENGTH: 20,
    USER_PASSWORD_SPECIAL_SYM: '$,@,#,%',
    USER_PASSWORD_SPECIAL_SYM_MIN: 1,
    USER_PASSWORD_DIGITAL_MIN: 1,
    USER_PASSWORD_LOWER_MIN: 1,
    USER_PASSWORD_UPPER_MIN: 1,
  };
  // Saving the effective values first makes every reset below a no-op for the policy's consistency.
  expect((await req('/v3/settings', { method: 'PATCH', json: { values } })).status).toBe(200);
  for (const name of Object.keys(values))
    expect((await req(`/v3/settings/${name}`, { method: 'DELETE' })).status).toBe(200);
}

describe('settings', () => {
  it('lists every UI-editable variable and no hidden one; secrets only as isSet', async () => {
    const r = await req('/v3/settings');
    expect(r.status).toBe(200);
    const names = r.body.items!.map((s) => s.name);
    expect(names).toContain('AUTH_FAILED_COUNT');
    expect(names).toContain('LOG_LEVEL');
    expect(names).toContain('EMAIL_HOST');
    expect(names).toContain('PROFILE');
    for (const hidden of ['DB_SCHEMA', 'SESSION_SECRET_KEY', 'ROOT_PATH', 'ERRTRACK_CA', 'LIBSQL_URL'])
      expect(names).not.toContain(hidden);
    // The specification's 38, and AUTH_NEW_DEVICE_MAIL, AUTH_MFA_REQUIRED_ROLES, AUTH_MFA_STEP_UP_MIN and
    // AUTH_AUDIT_LOCAL_RETENTION_DAYS and AUTH_AUDIT_LOCAL_MAX_MB, AUTH_GROUP_ROLES and
    // AUTH_LDAP_GROUPS_REFRESH_MIN, the four API token settings (AUTH_TOKEN_*: deployment variables that are policy).
    expect(names).toContain('NEW_DEVICE_MAIL');
    expect(names).toContain('MFA_REQUIRED_ROLES');
    expect(names).toContain('MFA_STEP_UP_MIN');
    expect(names).toContain('AUDIT_LOCAL_RETENTION_DAYS');
    expect(names).toContain('AUDIT_LOCAL_MAX_MB');
    expect(names).toContain('REVOCATION_CHECK_SEC');
    expect(names).toContain('GROUP_ROLES');
    expect(names).toContain('LDAP_GROUPS_REFRESH_MIN');
    for (const token of [
      'TOKEN_DEFAULT_LIFETIME_DAYS',
      'TOKEN_MAX_LIFETIME_DAYS',
      'TOKEN_NO_EXPIRY_ALLOWED',
      'TOKEN_EXPIRY_NOTICE_DAY',
    ])
      expect(names).toContain(token);
    expect(names).toHaveLength(50);
    const mail = r.body.items!.find((s) => s.name === 'EMAIL_HOST_PASSWORD')!;
    expect(mail).toMatchObject({ isSet: true, source: 'env' });
    expect(mail.value).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toContain('env-mail-secret');
    expect(await setting('AUTH_FAILED_COUNT')).toMatchObject({
      value: 3,
      source: 'default',
      default: 3,
      min: 1,
      max: 100,
    });
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
    expect((await req('/v3/settings/USER_PASSWORD_MIN_LENGTH', { method: 'DELETE' })).body).toMatchObject({
      value: 9,
      source: 'env',
    });
    expect((await create('Aa1$aaab')).status).toBe(422);
  });

  it('a lockout setting applies to the very next login', async () => {
    const login = uniqueLogin();
    expect((await req('/v4/users', { method: 'POST', json: { login, password: 'Str0ng$pass' } })).status).toBe(201);
    expect((await req('/v3/settings', { method: 'PATCH', json: { values: { AUTH_FAILED_COUNT: 1 } } })).status).toBe(
      200,
    );
    try {
      const attempt = (password: string) =>
        req('/v3/login_without_session', { method: 'POST', auth: basic(login, password) });
      expect((await attempt('Wr0ng$pass')).body.code).toBe('INVALID_CREDENTIALS');
      expect((await attempt('Str0ng$pass')).body.code).toBe('ACCOUNT_LOCKED');
    } finally {
      await req('/v3/settings/AUTH_FAILED_COUNT', { method: 'DELETE' });
    }
  });

  it('a batch with one bad value changes nothing, and names the bad one (422)', async () => {
    const before = await setting('AUTH_FAILED_COUNT');
    const r = await req('/v3/settings', {
      method: 'PATCH',
      json: { values: { AUTH_FAILED_COUNT: 5, USER_PASSWORD_MAX_LENGTH: 'long', DB_SCHEMA: 'x' } },
    });
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

  describe('password policy consistency', () => {
    afterEach(restorePolicy);

    it(
      'a password policy nothing can satisfy is refused (422 naming the conflicting settings), and ' +
        'nothing changes',
      async () => {
        const before = (await req('/v3/settings')).body.items;
        const cases: [Record<string, unknown>, string[]][] = [
          // The audit's case: specials required from an empty list, and 30 upper-case letters in at most 20 characters.
          [
            { USER_PASSWORD_SPECIAL_SYM: '', USER_PASSWORD_UPPER_MIN: 30 },
            [
              'USER_PASSWORD_SPECIAL_SYM',
              'USER_PASSWORD_SPECIAL_SYM_MIN',
              'USER_PASSWORD_UPPER_MIN',
              'USER_PASSWORD_MAX_LENGTH',
            ],
          ],
          [
            { USER_PASSWORD_UPPER_MIN: 10, USER_PASSWORD_LOWER_MIN: 9 },
            [
              'USER_PASSWORD_DIGITAL_MIN',
              'USER_PASSWORD_LOWER_MIN',
              'USER_PASSWORD_UPPER_MIN',
              'USER_PASSWORD_MAX_LENGTH',
            ],
          ],
          [{ USER_PASSWORD_SPECIAL_SYM: [] }, ['USER_PASSWORD_SPECIAL_SYM', 'USER_PASSWORD_SPECIAL_SYM_MIN']],
          [
            { USER_PASSWORD_MAX_LENGTH: 3, USER_PASSWORD_MIN_LENGTH: 2 },
            ['USER_PASSWORD_MAX_LENGTH', 'USER_PASSWORD_UPPER_MIN'],
          ],
        ];
        for (const [values, named] of cases) {
          const r = await req('/v3/settings', { method: 'PATCH', json: { values } });
          expect(r.status, JSON.stringify(values)).toBe(422);
          for (const name of named) expect(String(r.body.detail), JSON.stringify(values)).toContain(name);
          expect((r.body.errors as { path: string }[]).every((e) => e.path.startsWith('values.'))).toBe(true);
        }
        expect((await req('/v3/settings')).body.items).toEqual(before);
        // Satisfiable: no special characters required from an empty list; 18 of 20 characters required.
        expect(
          (
            await req('/v3/settings', {
              method: 'PATCH',
              json: { values: { USER_PASSWORD_SPECIAL_SYM: '', USER_PASSWORD_SPECIAL_SYM_MIN: 0 } },
            })
          ).status,
        ).toBe(200);
        expect(
          (await req('/v3/settings', { method: 'PATCH', json: { values: { USER_PASSWORD_UPPER_MIN: 16 } } })).status,
        ).toBe(200);
        expect(
          (await req('/v4/users', { method: 'POST', json: { login: uniqueLogin(), password: 'ABCDEFGHIJKLMNOPa1' } }))
            .status,
        ).toBe(201);
      },
    );

    it('a reset that would make the policy unsatisfiable is refused (422), and nothing changes', async () => {
      // USER_PASSWORD_SPECIAL_SYM is empty (saved) while USER_PASSWORD_SPECIAL_SYM_MIN is 0 (saved).
      const state = await req('/v3/settings', {
        method: 'PATCH',
        json: { values: { USER_PASSWORD_SPECIAL_SYM: '', USER_PASSWORD_SPECIAL_SYM_MIN: 0 } },
      });
      expect(state.status).toBe(200);
      const refused = await req('/v3/settings/USER_PASSWORD_SPECIAL_SYM_MIN', { method: 'DELETE' });
      expect(refused.status).toBe(422);
      expect(String(refused.body.detail)).toContain('USER_PASSWORD_SPECIAL_SYM');
      expect(await setting('USER_PASSWORD_SPECIAL_SYM_MIN')).toMatchObject({ value: 0, source: 'ui' });
      // The other order works: the list first, then the count.
      expect((await req('/v3/settings/USER_PASSWORD_SPECIAL_SYM', { method: 'DELETE' })).status).toBe(200);
      expect((await req('/v3/settings/USER_PASSWORD_SPECIAL_SYM_MIN', { method: 'DELETE' })).status).toBe(200);
      // The environment's minimum length (9) against a saved maximum of 8.
      expect(
        (
          await req('/v3/settings', {
            method: 'PATCH',
            json: { values: { USER_PASSWORD_MIN_LENGTH: 8, USER_PASSWORD_MAX_LENGTH: 8 } },
          })
        ).status,
      ).toBe(200);
      const length = await req('/v3/settings/USER_PASSWORD_MIN_LENGTH', { method: 'DELETE' });
      expect(length.status).toBe(422);
      expect(String(length.body.detail)).toContain('USER_PASSWORD_MAX_LENGTH');
      expect(await setting('USER_PASSWORD_MIN_LENGTH')).toMatchObject({ value: 8, source: 'ui' });
      expect((await req('/v3/settings/USER_PASSWORD_MAX_LENGTH', { method: 'DELETE' })).status).toBe(200);
      expect((await req('/v3/settings/USER_PASSWORD_MIN_LENGTH', { method: 'DELETE' })).status).toBe(200);
    });
  });

  it('super-access may read the settings, never change or reset them', async () => {
    const login = uniqueLogin('su');
    const created = await req('/v4/users', { method: 'POST', json: { login, password: 'Str0ng$pass' } });
    expect(
      (await req(`/v4/users/${String(created.body.id)}/super-access`, { method: 'POST', json: { minutes: 60 } }))
        .status,
    ).toBe(200);
    const su = basic(login, 'Str0ng$pass');
    expect((await req('/v3/settings', { auth: su })).status).toBe(200);
    const patch = await req('/v3/settings', {
      method: 'PATCH',
      auth: su,
      json: { values: { AUTH_FAILED_COUNT: 100 } },
    });
    expect(patch.status).toBe(403);
    expect(String(patch.body.detail)).toMatch(/^super-access cannot/);
    expect((await req('/v3/settings/AUTH_FAILED_COUNT', { method: 'DELETE', auth: su })).status).toBe(403);
    expect(await setting('AUTH_FAILED_COUNT')).toMatchObject({ value: 3, source: 'default' });
  });

  it('a secret can be set but is never returned', async () => {
    expect(
      (await req('/v3/settings', { method: 'PATCH', json: { values: { EMAIL_HOST_PASSWORD: 'ui-mail-secret' } } }))
        .status,
    ).toBe(200);
    const s = await setting('EMAIL_HOST_PASSWORD');
    expect(s).toMatchObject({ isSet: true, source: 'ui' });
    expect(JSON.stringify((await req('/v3/settings')).body)).not.toContain('ui-mail-secret');
  });

  it('unknown or hidden names cannot be reset; only admins may read or write', async () => {
    expect((await req('/v3/settings/DB_SCHEMA', { method: 'DELETE' })).status).toBe(404);
    expect((await req('/v3/settings/NOPE', { method: 'DELETE' })).status).toBe(404);
    const login = uniqueLogin();
    expect(
      (await req('/v4/users', { method: 'POST', json: { login, password: 'Str0ng$pass', role: 'auditor' } })).status,
    ).toBe(201);
    expect((await req('/v3/settings', { auth: basic(login, 'Str0ng$pass') })).status).toBe(403);
    expect((await req('/v3/settings', { auth: 'Basic' })).status).toBe(401);
  });
});

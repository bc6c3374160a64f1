/** API tokens and POST /v3/api_token_login (Bearer), on both hosts. */
import { afterEach, describe, expect, it } from 'vitest';
import { DAY, basic, call, callJson, createUser, setClockOffset, uniqueLogin } from '../harness/client.js';

const PASSWORD = 'Str0ng$pass';

afterEach(() => setClockOffset(0));

async function issue(login: string, body: Record<string, unknown> = { name: 'ci' }) {
  return callJson<{ id: string; token: string; prefix: string; name: string; expiresAt: string | null }>(
    '/v4/users/me/tokens',
    {
      method: 'POST',
      auth: basic(login, PASSWORD),
      json: body,
    },
  );
}
const bearer = (token: string) => `Bearer ${token}`;

describe('API tokens', () => {
  it('issue (secret once), log in with it, list without secrets, revoke: refused at once', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const issued = await issue(login, { name: 'deploy bot' });
    expect(issued.status).toBe(201);
    expect(issued.body.token).toMatch(/^ast_[A-Za-z0-9_-]{43}$/);
    expect(issued.body.token.startsWith(issued.body.prefix)).toBe(true);

    const ok = await callJson('/v3/api_token_login', { method: 'POST', auth: bearer(issued.body.token) });
    expect(ok.status).toBe(200);
    expect(ok.body.login).toBe(login);
    expect(ok.res.headers.get('set-cookie')).toBeNull();
    expect((await callJson('/v4/users/me', { auth: bearer(issued.body.token) })).body.login).toBe(login);

    const list = await callJson<{ items: Record<string, unknown>[] }>('/v4/users/me/tokens', {
      auth: bearer(issued.body.token),
    });
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({ id: issued.body.id, name: 'deploy bot', prefix: issued.body.prefix });
    expect(JSON.stringify(list.body)).not.toContain(issued.body.token);

    expect(
      (await call(`/v4/users/me/tokens/${issued.body.id}`, { method: 'DELETE', auth: basic(login, PASSWORD) })).status,
    ).toBe(204);
    const after = await callJson('/v3/api_token_login', { method: 'POST', auth: bearer(issued.body.token) });
    expect(after.status).toBe(401);
    expect(after.res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(
      (await call(`/v4/users/me/tokens/${issued.body.id}`, { method: 'DELETE', auth: basic(login, PASSWORD) })).status,
    ).toBe(404);
  });

  it('expiry is honoured', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const { body } = await issue(login, { name: 'short', expiresInDays: 1 });
    expect(body.expiresAt).toEqual(expect.any(String));
    expect((await call('/v3/api_token_login', { method: 'POST', auth: bearer(body.token) })).status).toBe(200);
    await setClockOffset(DAY + 60_000);
    expect((await call('/v3/api_token_login', { method: 'POST', auth: bearer(body.token) })).status).toBe(401);
  });

  it("a blocked account's tokens stop working at once", async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const { body } = await issue(login);
    // Block by inactivity: no login for 46 days, then the login attempt blocks the account.
    await setClockOffset(46 * DAY);
    expect(
      (await callJson('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) })).body.code,
    ).toBe('ACCOUNT_BLOCKED');
    await setClockOffset(0);
    expect((await call('/v3/api_token_login', { method: 'POST', auth: bearer(body.token) })).status).toBe(401);
  });

  it('a token cannot mint tokens; issuing needs the password', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const { body } = await issue(login);
    const r = await callJson('/v4/users/me/tokens', { method: 'POST', auth: bearer(body.token), json: { name: 'x' } });
    expect(r.status).toBe(401);
  });

  it('validation: bad name or expiry is a 422 naming the field; malformed JSON a 400', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const bad = await issue(login, { name: '', expiresInDays: 0 });
    expect(bad.status).toBe(422);
    const paths = (bad.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path).sort();
    expect(paths).toEqual(['expiresInDays', 'name']);
    const res = await call('/v4/users/me/tokens', {
      method: 'POST',
      auth: basic(login, PASSWORD),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const malformed = await fetch(`${(await import('../harness/client.js')).baseUrl()}/v4/users/me/tokens`, {
      method: 'POST',
      headers: { Authorization: basic(login, PASSWORD), 'Content-Type': 'application/json' },
      body: '{"name": ',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: string }).code).toBe('MALFORMED_REQUEST');
  });
});

describe('malformed Bearer headers', () => {
  const cases: [string, string][] = [
    ['no token', 'Bearer'],
    ['two parts', 'Bearer abc def'],
    ['bad characters', 'Bearer ab<c>'],
    ['too long', `Bearer ast_${'a'.repeat(600)}`],
    ['unknown token', 'Bearer ast_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['not a token of ours', 'Bearer eyJhbGciOiJub25lIn0.e30.'],
    ['Basic to the Bearer endpoint', basic('root-admin', 'Adm1n$ecret')],
  ];
  it.each(cases)('%s: 401 with the Bearer challenge', async (_name, header) => {
    const r = await callJson('/v3/api_token_login', { method: 'POST', auth: header });
    expect(r.status).toBe(401);
    expect(r.res.headers.get('www-authenticate')).toContain('Bearer');
    expect(r.res.headers.get('content-type')).toMatch(/problem\+json/);
  });
});

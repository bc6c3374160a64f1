/**
 * API token scopes (docs/api.md, "API token scopes"): every operation that takes Bearer declares the
 * scope an API token needs (`x-token-scope`, and the scope in its `security`); a token without it
 * gets 403 INSUFFICIENT_SCOPE with RFC 6750's `insufficient_scope` challenge, before anything else;
 * a token with it passes; tokens, second factors and passwords are never managed with a token. A
 * token's rights are its scopes within its owner's rights as they are now. Lifetimes are bounded.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  DAY,
  basic,
  baseUrl,
  call,
  callJson,
  createUser,
  testClock,
  uniqueLogin,
  withSettings,
} from '../harness/client.js';
import { eventually } from '../harness/eventually.js';

interface Operation {
  method: string;
  path: string;
  tokenScope: string;
  security: Record<string, string[]>[];
}
type ApiToken = { id: string; token: string; scopes: string[] | null; expiresAt: string | null };

const admin = basic(ADMIN.login, ADMIN.password);
let operations: Operation[] = [];
let vocabulary: string[] = [];

async function issue(json: Record<string, unknown>, auth = admin) {
  return callJson<ApiToken & { errors?: { path: string; message: string }[] }>('/v4/users/me/tokens', {
    method: 'POST',
    auth,
    json,
  });
}

async function tokenWith(scopes: string[] | undefined, auth = admin): Promise<string> {
  const r = await issue({ name: `scopes-${scopes?.join('+') ?? 'all'}`, ...(scopes ? { scopes } : {}) }, auth);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.token;
}

function concrete(path: string): string {
  return path
    .replace('{userId}', '00000000-0000-4000-8000-000000000000')
    .replace('{tokenId}', '00000000-0000-4000-8000-000000000001')
    .replace('{passkeyId}', '00000000-0000-4000-8000-000000000002')
    .replace('{sessionId}', 'no-such-session')
    .replace('{id}', '00000000-0000-4000-8000-000000000003')
    .replace('{name}', 'NOPE')
    .replace('{audit_log_type}', 'user_activity');
}

async function send(op: Operation, token: string) {
  const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? '{}' : undefined;
  const res = await fetch(`${baseUrl()}${concrete(op.path)}`, {
    method: op.method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body,
  });
  const text = await res.text();
  // Only a problem's body is read (an export answers NDJSON).
  const json = /problem\+json/.test(res.headers.get('Content-Type') ?? '') ? JSON.parse(text) : {};
  return { status: res.status, code: json.code as string | undefined, challenge: res.headers.get('WWW-Authenticate') };
}

beforeAll(async () => {
  const doc = (await (await fetch(`${baseUrl()}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { 'x-token-scope'?: string; security?: Record<string, string[]>[] }>>;
    components: { schemas: Record<string, { properties?: Record<string, { items?: { enum?: string[] } }> }> };
  };
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op['x-token-scope'] !== undefined)
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        tokenScope: op['x-token-scope']!,
        security: op.security ?? [],
      })),
  );
  vocabulary = doc.components.schemas.ApiTokenRequest?.properties?.scopes?.items?.enum ?? [];
});

describe('the declaration', () => {
  it('every operation that takes Bearer declares its scope, in its security too', async () => {
    const doc = (await (await fetch(`${baseUrl()}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-token-scope'?: string; security?: Record<string, string[]>[] }>>;
    };
    const bearerOps = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security?.some((s) => 'bearer' in s))
        .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(bearerOps.length).toBeGreaterThan(40);
    for (const { name, op } of bearerOps) {
      const rule = op['x-token-scope'];
      expect(rule, name).toBeDefined();
      const bearer = op.security!.find((s) => 'bearer' in s)!.bearer;
      expect(bearer, name).toEqual(rule === 'none' ? [] : [rule]);
    }
    expect(vocabulary).toEqual([
      'account:read',
      'account:write',
      'users:read',
      'users:write',
      'settings:read',
      'settings:write',
      'logs:read',
    ]);
    // Managing tokens, factors and passwords: never with a token.
    const never = operations.filter((o) => o.tokenScope === 'none').map((o) => `${o.method} ${o.path}`);
    for (const op of [
      'DELETE /v4/users/me/tokens/{tokenId}',
      'PUT /v4/users/me/password',
      'POST /v4/users/me/totp',
      'POST /v4/users/me/recovery-codes',
      'POST /v4/users/{userId}/password',
      'DELETE /v4/users/{userId}/tokens/{tokenId}',
      'DELETE /v4/users/{userId}/second-factors',
    ])
      expect(never).toContain(op);
  });
});

describe('a token without the scope', () => {
  it('gets 403 insufficient_scope on every operation; one with it passes the check', async () => {
    const tokens = new Map<string, string>();
    for (const scope of vocabulary) tokens.set(scope, await tokenWith([scope]));
    const everything = await tokenWith(undefined);
    const failures: string[] = [];
    for (const op of operations) {
      // A token with every other scope: still not this one.
      const others =
        op.tokenScope === 'none' ? everything : await tokenWith(vocabulary.filter((s) => s !== op.tokenScope));
      const refused = await send(op, others);
      const name = `${op.method} ${op.path}`;
      if (refused.status !== 403 || refused.code !== 'INSUFFICIENT_SCOPE')
        failures.push(`${name}: ${refused.status} ${refused.code}, expected 403 INSUFFICIENT_SCOPE`);
      else if (!refused.challenge?.includes('error="insufficient_scope"'))
        failures.push(`${name}: challenge ${refused.challenge}`);
      else if (op.tokenScope !== 'none' && !refused.challenge.includes(`scope="${op.tokenScope}"`))
        failures.push(`${name}: challenge ${refused.challenge} does not name ${op.tokenScope}`);
      if (op.tokenScope === 'none') continue;
      const allowed = await send(op, tokens.get(op.tokenScope)!);
      if (allowed.code === 'INSUFFICIENT_SCOPE' || allowed.status === 401)
        failures.push(`${name}: a token with ${op.tokenScope} got ${allowed.status} ${allowed.code}`);
    }
    expect(failures).toEqual([]);
  });

  it('changes nothing: a users:read token cannot block an account', async () => {
    const id = await createUser(uniqueLogin('scoped'), 'Str0ng$pass');
    const reader = await tokenWith(['users:read']);
    const r = await call(`/v4/users/${id}/block`, { method: 'POST', auth: `Bearer ${reader}`, json: {} });
    expect(r.status).toBe(403);
    const user = await callJson<{ status: string }>(`/v4/users/${id}`, { auth: `Bearer ${reader}` });
    expect(user.status).toBe(200);
    expect(user.body.status).toBe('active');
  });
});

describe("scopes within the owner's rights", () => {
  it("a user's users:read token is refused by the role; a demoted admin's loses its rights at once", async () => {
    const userLogin = uniqueLogin('scu');
    await createUser(userLogin, 'Str0ng$pass');
    const userToken = await tokenWith(['users:read'], basic(userLogin, 'Str0ng$pass'));
    const asUser = await callJson<{ code: string }>('/v4/users', { auth: `Bearer ${userToken}` });
    expect(asUser.status).toBe(403);
    expect(asUser.body.code).not.toBe('INSUFFICIENT_SCOPE');

    const adminLogin = uniqueLogin('sca');
    const adminId = await createUser(adminLogin, 'Str0ng$pass', { role: 'admin' });
    const adminToken = await tokenWith(['users:read'], basic(adminLogin, 'Str0ng$pass'));
    expect((await call('/v4/users', { auth: `Bearer ${adminToken}` })).status).toBe(200);
    const demoted = await call(`/v4/users/${adminId}`, { method: 'PATCH', auth: admin, json: { role: 'user' } });
    expect(demoted.status).toBe(200);
    expect((await call('/v4/users', { auth: `Bearer ${adminToken}` })).status).toBe(403);
  });
});

describe('what a token shows', () => {
  it('its scopes, and the time and address of its last use', async () => {
    const login = uniqueLogin('scl');
    await createUser(login, 'Str0ng$pass');
    const auth = basic(login, 'Str0ng$pass');
    const made = await issue({ name: 'ci', scopes: ['account:read', 'account:read', 'logs:read'] }, auth);
    expect(made.status).toBe(201);
    expect(made.body.scopes).toEqual(['account:read', 'logs:read']);
    const all = await issue({ name: 'all' }, auth);
    expect(all.body.scopes).toBeNull();
    expect((await call('/v4/users/me', { auth: `Bearer ${made.body.token}` })).status).toBe(200);
    // The use is recorded after the answer: wait for it in the list.
    type Listed = { id: string; scopes: string[] | null; lastUsedAt: string | null; lastUsedIp: string | null };
    const listed = await eventually(
      async () => {
        const items = (await callJson<{ items: Listed[] }>('/v4/users/me/tokens', { auth })).body.items;
        return items.find((t) => t.id === made.body.id)?.lastUsedAt ? items : undefined;
      },
      { what: "the token's last use in the list" },
    );
    const mine = listed.find((t) => t.id === made.body.id)!;
    expect(mine.scopes).toEqual(['account:read', 'logs:read']);
    expect(mine.lastUsedAt).not.toBeNull();
    expect(mine.lastUsedIp).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
    expect(JSON.stringify(listed)).not.toContain(made.body.token);
  });

  it('refuses an unknown scope, with the field named', async () => {
    const r = await issue({ name: 'x', scopes: ['users:everything'] });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body)).toContain('scopes');
  });
});

describe('lifetimes', () => {
  it('a default lifetime, a maximum, and never only where allowed', async () => {
    const clock = testClock();
    const now = clock.now();
    const byDefault = await issue({ name: 'default' });
    expect(byDefault.status).toBe(201);
    const days = (Date.parse(byDefault.body.expiresAt!) - now) / DAY;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThan(90.1);

    const tooLong = await issue({ name: 'long', expiresInDays: 366 });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors?.[0]?.path).toBe('expiresInDays');
    const never = await issue({ name: 'never', expiresInDays: null });
    expect(never.status).toBe(422);
    expect(never.body.errors?.[0]?.message).toContain('AUTH_TOKEN_NO_EXPIRY_ALLOWED');

    await withSettings({ TOKEN_NO_EXPIRY_ALLOWED: true, TOKEN_MAX_LIFETIME_DAYS: 30 }, async () => {
      const allowed = await issue({ name: 'never', expiresInDays: null });
      expect(allowed.status).toBe(201);
      expect(allowed.body.expiresAt).toBeNull();
      // The default is bounded by the maximum.
      const bounded = await issue({ name: 'bounded' });
      const d = (Date.parse(bounded.body.expiresAt!) - clock.now()) / DAY;
      expect(d).toBeGreaterThan(29.9);
      expect(d).toBeLessThan(30.1);
    });
  });
});

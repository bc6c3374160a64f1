/** OIDC login against a real OpenID provider (oidc-provider on loopback), on both hosts. */
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import {
  ADMIN,
  basic,
  baseUrl,
  callJson,
  createSuperAccessHolder,
  createUser,
  uniqueLogin,
} from '../harness/client.js';
import { BASE_TEST_ENV, freePort } from '../harness/hosts.js';
import { totpCode } from '../harness/totp.js';
import { startTestProvider, throughProvider as walkProvider, type TestProvider } from '../harness/oidc-provider.js';

const admin = basic(ADMIN.login, ADMIN.password);
let idp: TestProvider;
let shortIdp: TestProvider;
const idpName = `idp${Date.now().toString(36)}`;
const shortName = `${idpName}-short`;
const trustName = `${idpName}-trust`;
const callback = (name: string) => `${baseUrl()}/v3/oidc/callback/${name}`;

async function addProvider(name: string, p: { issuer: string; clientId: string; clientSecret: string }) {
  const r = await callJson('/v3/settings/identity-providers', {
    method: 'POST',
    auth: admin,
    json: { name, issuer: p.issuer, clientId: p.clientId, clientSecret: p.clientSecret },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

beforeAll(async () => {
  [idp, shortIdp] = await Promise.all([
    startTestProvider([callback(idpName), callback(trustName)]),
    startTestProvider([callback(shortName)], 1),
  ]);
  await addProvider(idpName, idp);
  await addProvider(shortName, shortIdp);
  // The same provider under a record that trusts its amr/acr.
  const trusting = await callJson('/v3/settings/identity-providers', {
    method: 'POST',
    auth: admin,
    json: {
      name: trustName,
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      trustMfaClaims: true,
      acceptedAcr: ['urn:test:mfa'],
    },
  });
  expect(trusting.status, JSON.stringify(trusting.body)).toBe(201);
  expect(trusting.body).toMatchObject({ trustMfaClaims: true, acceptedAcr: ['urn:test:mfa'] });
});
afterAll(async () => {
  await Promise.all([idp?.close(), shortIdp?.close()]);
});

/** Through the provider's pages to the callback URL (see the harness). */
const throughProvider = (b: Browser, name: string, user: string, o: { abort?: boolean } = {}) =>
  walkProvider(b, baseUrl(), name, user, o);

const me = async (b: Browser) => {
  const res = await b.fetch(`${baseUrl()}/v4/users/me`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** Signs in through record `name` as `user` (its first login creates the account) and enrols TOTP: its secret. */
async function oidcAccountWithTotp(name: string, user: string): Promise<string> {
  const b = new Browser(new URL(baseUrl()).origin);
  expect((await b.fetch(await throughProvider(b, name, user))).headers.get('location')).toBe('http://localhost/');
  const start = await b.fetch(`${baseUrl()}/v4/users/me/totp`, { method: 'POST' });
  expect(start.status).toBe(201);
  const secret = new URL(((await start.json()) as { otpauthUri: string }).otpauthUri).searchParams.get('secret')!;
  const confirmed = await b.postJson(`${baseUrl()}/v4/users/me/totp/confirm`, { code: totpCode(secret, Date.now()) });
  expect(confirmed.status).toBe(204);
  return secret;
}

describe('OIDC logins and the second factor', () => {
  it('an account with a local factor is asked for it, unless the record trusts the amr/acr of the token', async () => {
    const user = uniqueLogin('oidcmfa');
    const secret = await oidcAccountWithTotp(trustName, user);

    // A password alone at the provider (amr pwd): no session, the pending login for the local factor.
    idp.authContext[user] = { amr: ['pwd'], acr: 'urn:test:pwd' };
    const b = new Browser(new URL(baseUrl()).origin);
    const asked = await b.fetch(await throughProvider(b, trustName, user));
    expect(asked.status).toBe(303);
    expect(asked.headers.get('location')).toBe('http://localhost/?auth_error=second_factor_required');
    expect((await me(b)).status).toBe(401);
    // The same second step as after a password (the pending login rides in its cookie).
    const step = await b.postJson(`${baseUrl()}/v3/login/second-factor`, { code: totpCode(secret, Date.now(), 1) });
    expect(step.status).toBe(200);
    expect((await me(b)).body).toMatchObject({ login: user, source: 'oidc' });

    // The provider asked for a second factor (amr otp), or its acr is accepted: a session at once,
    // verified for step-up (a sensitive operation passes without asking a code).
    for (const context of [{ amr: ['pwd', 'otp'] }, { amr: ['pwd'], acr: 'urn:test:mfa' }, { amr: ['mfa'] }]) {
      idp.authContext[user] = context;
      const t = new Browser(new URL(baseUrl()).origin);
      const done = await t.fetch(await throughProvider(t, trustName, user));
      expect(done.headers.get('location'), JSON.stringify(context)).toBe('http://localhost/');
      expect((await me(t)).status).toBe(200);
      const codes = await t.fetch(`${baseUrl()}/v4/users/me/recovery-codes`, { method: 'POST' });
      expect(codes.status).toBe(201);
    }
  });

  it('a record that does not trust the claims asks for the local factor even with amr mfa', async () => {
    const user = uniqueLogin('oidcnot');
    await oidcAccountWithTotp(idpName, user);
    idp.authContext[user] = { amr: ['mfa', 'hwk'], acr: 'urn:test:mfa' };
    const b = new Browser(new URL(baseUrl()).origin);
    const asked = await b.fetch(await throughProvider(b, idpName, user));
    expect(asked.headers.get('location')).toBe('http://localhost/?auth_error=second_factor_required');
    expect((await me(b)).status).toBe(401);
    // A wrong code counts as a failed login, as after a password.
    const wrong = await b.postJson(`${baseUrl()}/v3/login/second-factor`, { code: '000000' });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { code: string }).code).toBe('INVALID_CREDENTIALS');
  });

  it('trustMfaClaims and acceptedAcr are validated: 422 naming the field, nothing created', async () => {
    const name = `${idpName}-bad`;
    const bad = await callJson('/v3/settings/identity-providers', {
      method: 'POST',
      auth: admin,
      json: {
        name,
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        trustMfaClaims: 'yes',
        acceptedAcr: [''],
      },
    });
    expect(bad.status).toBe(422);
    const paths = ((bad.body as { errors: Array<{ path: string }> }).errors ?? []).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['trustMfaClaims', 'acceptedAcr.0']));
    const got = await callJson(`/v3/settings/identity-providers/${name}`, { auth: admin });
    expect(got.status).toBe(404);
  });
});

describe('OIDC login', () => {
  it('first login provisions the account; the next one finds it', async () => {
    const user = uniqueLogin('oidc');
    const b = new Browser(new URL(baseUrl()).origin);
    const done = await b.fetch(await throughProvider(b, idpName, user));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('http://localhost/');
    const first = await me(b);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      login: user,
      source: 'oidc',
      sourceName: idpName,
      displayName: `User ${user}`,
      email: `${user}@example.org`,
      role: 'user',
    });

    const again = new Browser(new URL(baseUrl()).origin);
    await again.fetch(await throughProvider(again, idpName, user));
    expect((await me(again)).body.id).toBe(first.body.id);
  });

  it('a login colliding with a local account goes to the merge page; /v3/login/union completes it', async () => {
    const login = uniqueLogin('local');
    await createUser(login, 'Str0ng$pass', { sessionLimit: 3 });
    const b = new Browser(new URL(baseUrl()).origin);
    const res = await b.fetch(await throughProvider(b, idpName, login));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('http://localhost/conflict');
    expect((await me(b)).status).toBe(401);
    const union = await b.postJson(`${baseUrl()}/v3/login/union`, { password: 'Str0ng$pass' });
    expect(union.status).toBe(200);
    expect((await me(b)).body).toMatchObject({ login, source: 'local' });
    // Linked now: the next OIDC login goes straight to the local account.
    const later = new Browser(new URL(baseUrl()).origin);
    expect((await later.fetch(await throughProvider(later, idpName, login))).headers.get('location')).toBe(
      'http://localhost/',
    );
    expect((await me(later)).body).toMatchObject({ login, source: 'local' });
  });

  it('an OIDC-started session cannot issue API tokens, even for a linked local account', async () => {
    const login = uniqueLogin('local');
    await createUser(login, 'Str0ng$pass', { sessionLimit: 3 });
    const b = new Browser(new URL(baseUrl()).origin);
    await b.fetch(await throughProvider(b, idpName, login));
    expect((await b.postJson(`${baseUrl()}/v3/login/union`, { password: 'Str0ng$pass' })).status).toBe(200);
    const later = new Browser(new URL(baseUrl()).origin);
    await later.fetch(await throughProvider(later, idpName, login));
    expect((await me(later)).body).toMatchObject({ login, source: 'local' });
    const sessions = (await (await later.fetch(`${baseUrl()}/v4/users/me/sessions`)).json()) as {
      items: { authMethod: string; current: boolean }[];
    };
    expect(sessions.items.find((s) => s.current)?.authMethod).toBe('oidc');
    const refused = await later.postJson(`${baseUrl()}/v4/users/me/tokens`, { name: 'x' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('REAUTHENTICATION_REQUIRED');
    // The session of /v3/login/union proved the local password: it may.
    expect((await b.postJson(`${baseUrl()}/v4/users/me/tokens`, { name: 'y' })).status).toBe(201);
  });

  it('an OIDC account has no password to change here: 409, nothing counted', async () => {
    const b = new Browser(new URL(baseUrl()).origin);
    await b.fetch(await throughProvider(b, idpName, uniqueLogin('oidc')));
    const body = JSON.stringify({ oldPassword: 'any-password', newPassword: 'N3w$secret' });
    const r = await b.fetch(`${baseUrl()}/v4/users/me/password`, {
      method: 'PUT',
      body,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r.status).toBe(409);
  });

  it('a replayed callback or a forged state is refused', async () => {
    const b = new Browser(new URL(baseUrl()).origin);
    const url = await throughProvider(b, idpName, uniqueLogin('oidc'));
    const forged = new URL(url);
    forged.searchParams.set('state', 'forged-state');
    const bad = await b.fetch(forged.href);
    expect(bad.status).toBe(400);
    // The flow cookie is used once: even the genuine callback now finds no login in progress.
    expect((await b.fetch(url)).status).toBe(400);

    const c = new Browser(new URL(baseUrl()).origin);
    const genuine = await throughProvider(c, idpName, uniqueLogin('oidc'));
    expect((await c.fetch(genuine)).status).toBe(303);
    expect((await c.fetch(genuine)).status).toBe(400);
  });

  it('a wrong nonce is refused', async () => {
    const b = new Browser(new URL(baseUrl()).origin);
    const url = await throughProvider(b, idpName, uniqueLogin('oidc'));
    const flowUrl = `${baseUrl()}/v3/oidc/callback/${idpName}`;
    const flow = decodeJwt((await b.cookie(flowUrl, 'auth_oidc_flow'))!);
    const forged = await new SignJWT({ ...flow, nonce: 'another-nonce' })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience('auth-oidc-flow')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(BASE_TEST_ENV.SESSION_SECRET_KEY!));
    await b.jar.setCookie(`auth_oidc_flow=${forged}; Path=${new URL(baseUrl()).pathname}`, flowUrl);
    const res = await b.fetch(url);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/nonce/i);
  });

  it('a tampered ID token is refused (signature)', async () => {
    const b = new Browser(new URL(baseUrl()).origin);
    const url = await throughProvider(b, idpName, uniqueLogin('oidc'));
    idp.tamper = true;
    try {
      const res = await b.fetch(url);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/ID token/);
      expect((await me(b)).status).toBe(401);
    } finally {
      idp.tamper = false;
    }
  });

  it('an expired code is refused', async () => {
    const b = new Browser(new URL(baseUrl()).origin);
    const url = await throughProvider(b, shortName, uniqueLogin('oidc'));
    // Its code lives 1 s at the provider: sent once the provider no longer finds it.
    const code = new URL(url).searchParams.get('code')!;
    expect(await shortIdp.codeValid(code)).toBe(true);
    await expect.poll(() => shortIdp.codeValid(code), { timeout: 10_000, interval: 100 }).toBe(false);
    const res = await b.fetch(url);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/invalid_grant/);
  });

  it('access denied at the provider: back to the front end with auth_error, no session', async () => {
    const b = new Browser(new URL(baseUrl()).origin);
    const res = await b.fetch(await throughProvider(b, idpName, uniqueLogin('oidc'), { abort: true }));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('http://localhost/?auth_error=access_denied');
    expect((await me(b)).status).toBe(401);
  });

  it('unknown provider: 404; provider down: 502', async () => {
    expect((await callJson('/v3/oidc/login/no-such-idp')).status).toBe(404);
    const deadName = `${idpName}-dead`;
    await addProvider(deadName, { issuer: `http://127.0.0.1:${await freePort()}`, clientId: 'x', clientSecret: 'y' });
    const r = await callJson(`/v3/oidc/login/${deadName}`);
    expect(r.status).toBe(502);
    expect(r.body.code).toBe('BAD_GATEWAY');
  });

  it('discovery and JWKS are cached: more logins fetch neither again', async () => {
    const b = new Browser(new URL(baseUrl()).origin);
    await b.fetch(await throughProvider(b, idpName, uniqueLogin('oidc')));
    const count = (path: string) => idp.requests.filter((p) => p === path).length;
    const before = { discovery: count('/.well-known/openid-configuration'), jwks: count('/jwks') };
    expect(before.discovery).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 2; i++) {
      const n = new Browser(new URL(baseUrl()).origin);
      expect((await n.fetch(await throughProvider(n, idpName, uniqueLogin('oidc')))).status).toBe(303);
    }
    expect({ discovery: count('/.well-known/openid-configuration'), jwks: count('/jwks') }).toEqual(before);
  });

  it('provider records never return the client secret', async () => {
    const r = await callJson<{ items: Record<string, unknown>[] }>('/v3/settings/identity-providers', { auth: admin });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).not.toContain(idp.clientSecret);
    expect(r.body.items.find((p) => p.name === idpName)).toMatchObject({ clientSecretSet: true, issuer: idp.issuer });
  });

  it('changing the issuer requires the client secret again (422 naming clientSecret, nothing changed)', async () => {
    const name = `${idpName}-move`;
    await addProvider(name, idp);
    const path = `/v3/settings/identity-providers/${name}`;
    const before = (await callJson(path, { auth: admin })).body;
    const elsewhere = `http://127.0.0.1:${await freePort()}`;
    const moved = await callJson(path, { method: 'PATCH', auth: admin, json: { issuer: elsewhere, scopes: 'openid' } });
    expect(moved.status).toBe(422);
    expect((moved.body.errors as { path: string }[]).map((e) => e.path)).toEqual(['clientSecret']);
    expect(String(moved.body.detail)).toContain('clientSecret');
    expect((await callJson(path, { auth: admin })).body).toEqual(before);
    // The same issuer (unchanged) needs nothing; a new issuer with a new secret is accepted.
    expect(
      (await callJson(path, { method: 'PATCH', auth: admin, json: { issuer: idp.issuer, clientId: idp.clientId } }))
        .status,
    ).toBe(200);
    const withSecret = await callJson(path, {
      method: 'PATCH',
      auth: admin,
      json: { issuer: elsewhere, clientSecret: 'another-secret' },
    });
    expect(withSecret.status).toBe(200);
    expect(withSecret.body).toMatchObject({ issuer: elsewhere, clientSecretSet: true });
  });

  it('super-access cannot add or change identity providers, so no role claim can make a lasting admin', async () => {
    const holder = await createSuperAccessHolder();
    const name = `${idpName}-su`;
    const create = await callJson('/v3/settings/identity-providers', {
      method: 'POST',
      auth: holder.auth,
      json: {
        name,
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        claimRole: 'preferred_username',
      },
    });
    expect(create.status).toBe(403);
    expect(String(create.body.detail)).toMatch(/^super-access cannot/);
    expect((await callJson(`/v3/settings/identity-providers/${name}`, { auth: admin })).status).toBe(404);
    expect((await callJson(`/v3/oidc/login/${name}`)).status).toBe(404);
    const patch = await callJson(`/v3/settings/identity-providers/${idpName}`, {
      method: 'PATCH',
      auth: holder.auth,
      json: { claimRole: 'preferred_username' },
    });
    expect(patch.status).toBe(403);
    expect((await callJson(`/v3/settings/identity-providers/${idpName}`, { auth: admin })).body).toMatchObject({
      claimRole: null,
    });
    expect(
      (await callJson(`/v3/settings/identity-providers/${idpName}`, { method: 'DELETE', auth: holder.auth })).status,
    ).toBe(403);
    // Reading the records stays allowed (secrets are never returned anyway).
    expect((await callJson('/v3/settings/identity-providers', { auth: holder.auth })).status).toBe(200);
  });
});

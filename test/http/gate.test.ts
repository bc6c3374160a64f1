/**
 * The gate (docs/integration.md): protected services under /v4/services and forward-auth in each proxy's
 * dialect, on both hosts. The test client plays the proxy: its host trusts loopback (AUTH_TRUSTED_PROXIES);
 * the shared host trusts nobody, and refuses it.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, baseUrl, call, callJson, uniqueLogin } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import tokenIntrospection from 'token-introspection';

const kind = inject('hostKind');
const PASSWORD = 'Str0ng$pass';
const METRICS_TOKEN = 'gate-metrics-token-0123456789abcdef-XYZ';
const admin = basic(ADMIN.login, ADMIN.password);
let host: RunningHost;
let base: string;

beforeAll(async () => {
  host = await startTestHost(kind, {
    AUTH_TRUSTED_PROXIES: '127.0.0.1,::1',
    AUTH_REVOCATION_CHECK_SEC: '60',
    AUTH_METRICS_TOKEN: METRICS_TOKEN,
  });
  base = host.url;
});
afterAll(async () => {
  await host?.stop();
});

interface Service {
  name: string;
  hosts: string[];
  prefixes: string[];
  clientId: string;
  clientSecret?: string;
}

async function createService(body: Record<string, unknown>): Promise<Service> {
  const r = await callJson<Service>('/v4/services', { base, method: 'POST', auth: admin, json: body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function createAccount(extra: Record<string, unknown> = {}): Promise<{ login: string; id: string }> {
  const login = uniqueLogin('g');
  const r = await callJson<{ id: string }>('/v4/users', {
    base,
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD, ...extra },
  });
  expect(r.status).toBe(201);
  return { login, id: r.body.id };
}

/** Signs in (JSON); returns the session cookie as a Cookie header. */
async function sessionCookie(login: string): Promise<string> {
  const res = await fetch(`${base}/v3/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ login, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith('auth_session='))!
    .split(';')[0]!;
}

/** Asks the Caddy/Traefik endpoint about `url` with `headers`. */
function forwardAuth(url: string, headers: Record<string, string> = {}, o: { base?: string; method?: string } = {}) {
  const u = new URL(url);
  const forwarded = {
    'X-Forwarded-Method': o.method ?? 'GET',
    'X-Forwarded-Proto': u.protocol.slice(0, -1),
    'X-Forwarded-Host': u.host,
    'X-Forwarded-Uri': u.pathname + u.search,
  };
  return rawRequest('/v4/authz/forward-auth', 'GET', { ...forwarded, ...headers }, o.base);
}

/**
 * A request as a proxy or a browser sends it (node:http): fetch cannot set Host, and undici adds
 * `Sec-Fetch-Mode: cors` to every request, which no browser's navigation carries.
 */
function rawRequest(path: string, method: string, headers: Record<string, string>, on = base): Promise<Response> {
  const url = new URL(`${on}${path}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers))
          for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) h.append(k, one);
        const body = method === 'HEAD' || res.statusCode === 204 ? null : Buffer.concat(chunks);
        resolve(new Response(body, { status: res.statusCode!, headers: h }));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const HTML = { Accept: 'text/html,application/xhtml+xml', 'Sec-Fetch-Mode': 'navigate' };

describe('protected services', () => {
  it('SRM and monitoring are there from the start, built from their variables', async () => {
    const r = await callJson<{ items: Service[] }>('/v4/services', { base, auth: admin });
    expect(r.status).toBe(200);
    const names = r.body.items.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['srm', 'monitoring']));
    const srm = r.body.items.find((s) => s.name === 'srm')!;
    expect(srm.prefixes).toEqual(['http://localhost:8002/v3/']);
    expect(JSON.stringify(r.body)).not.toMatch(/secret/i);
  });

  it('create (secret once, hosts normalised), conflict, validation, rotate, change, delete', async () => {
    const name = uniqueLogin('s');
    const created = await createService({ name, hosts: ['App.Example.COM.', 'bücher.example:8443'] });
    expect(created.hosts).toEqual(['app.example.com', 'xn--bcher-kva.example:8443']);
    expect(created.clientSecret).toMatch(/^svc_[0-9a-f]{64}$/);
    const again = await call('/v4/services', { base, method: 'POST', auth: admin, json: { name, hosts: ['x.test'] } });
    expect(again.status).toBe(409);

    const none = await callJson<{ errors: { path: string }[] }>('/v4/services', {
      base,
      method: 'POST',
      auth: admin,
      json: { name: `${name}x` },
    });
    expect(none.status).toBe(422);
    expect(none.body.errors[0]!.path).toBe('hosts');
    for (const bad of [{ hosts: ['evil.test/x'] }, { hosts: ['user@evil.test'] }, { prefixes: ['javascript:x'] }]) {
      const r = await call('/v4/services', { base, method: 'POST', auth: admin, json: { name: `${name}y`, ...bad } });
      expect(r.status, JSON.stringify(bad)).toBe(422);
    }

    const rotated = await callJson<Service>(`/v4/services/${name}/secret`, { base, method: 'POST', auth: admin });
    expect(rotated.status).toBe(200);
    expect(rotated.body.clientSecret).not.toBe(created.clientSecret);
    const patched = await callJson<Service & { allowBasic: boolean }>(`/v4/services/${name}`, {
      base,
      method: 'PATCH',
      auth: admin,
      json: { allowBasic: true, prefixes: ['https://Other.example.com/app/'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ allowBasic: true, prefixes: ['https://other.example.com/app/'] });
    expect((await call(`/v4/services/${name}`, { base, method: 'DELETE', auth: admin })).status).toBe(204);
    expect((await call(`/v4/services/${name}`, { base, auth: admin })).status).toBe(404);
  });

  it('admins only', async () => {
    const { login } = await createAccount();
    expect((await call('/v4/services', { base, auth: basic(login, PASSWORD) })).status).toBe(403);
    expect((await call('/v4/services', { base })).status).toBe(401);
  });
});

describe('forward-auth', () => {
  let app: Service;
  let admins: Service;
  let strong: Service;
  let user: { login: string; id: string };
  let cookie: string;

  beforeAll(async () => {
    const n = uniqueLogin('h');
    app = await createService({ name: `${n}-app`, hosts: [`${n}.example.com`] });
    admins = await createService({
      name: `${n}-adm`,
      hosts: [`adm-${n}.example.com`],
      access: { anyAccount: false, roles: ['admin'] },
    });
    strong = await createService({ name: `${n}-mfa`, hosts: [`mfa-${n}.example.com`], requireSecondFactor: true });
    user = await createAccount({ displayName: 'Гейт Тест', email: 'gate@example.com' });
    cookie = await sessionCookie(user.login);
  });

  it('anonymous: a browser is sent to the sign-in with a way back; an API client gets 401', async () => {
    const url = `https://${app.hosts[0]}/page?x=1`;
    const browser = await forwardAuth(url, HTML);
    expect(browser.status).toBe(302);
    const to = new URL(browser.headers.get('location')!);
    expect(to.pathname).toBe('/api/auth/ui/login');
    const next = to.searchParams.get('next')!;
    expect(next).toBe(`/api/auth/v4/authz/continue?rd=${encodeURIComponent(url)}`);
    const api = await forwardAuth(url);
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await api.json()) as object).toMatchObject({ reason: 'no-credentials' });
  });

  it('nginx dialect: 401 with the sign-in in Location; allowed with the identity headers', async () => {
    const url = `http://${app.hosts[0]}/x`;
    const anon = await call('/v4/authz/auth-request', { base, headers: { 'X-Original-URL': url } });
    expect(anon.status).toBe(401);
    expect(anon.headers.get('location')).toContain('/api/auth/ui/login?next=');
    const ok = await call('/v4/authz/auth-request', { base, headers: { 'X-Original-URL': url, Cookie: cookie } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('remote-user')).toBe(user.login);
    expect(ok.headers.get('remote-name')).toBe(encodeURIComponent('Гейт Тест'));
    expect(ok.headers.get('remote-email')).toBe('gate@example.com');
    expect(ok.headers.get('remote-role')).toBe('user');
    expect(ok.headers.get('remote-groups')).toBe('');
  });

  it('a session is allowed whatever the host case, trailing dot or method; the rule refuses with 403', async () => {
    const upper = app.hosts[0]!.toUpperCase();
    const r = await forwardAuth(`http://${upper}./p`, { Cookie: cookie }, { method: 'POST' });
    expect(r.status).toBe(200);
    expect(r.headers.get('remote-user')).toBe(user.login);
    const refused = await forwardAuth(`http://${admins.hosts[0]}/`, { Cookie: cookie });
    expect(refused.status).toBe(403);
    expect((await refused.json()) as object).toMatchObject({ reason: 'not-allowed' });
  });

  it('unknown host: 403, never allowed by default; a malformed address: 403', async () => {
    const r = await forwardAuth('https://nobody.example.com/', { Cookie: cookie });
    expect(r.status).toBe(403);
    expect((await r.json()) as object).toMatchObject({ reason: 'unknown-service' });
    const bad = await call('/v4/authz/forward-auth', {
      base,
      headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': app.hosts[0]!, 'X-Forwarded-Uri': '//evil.test/' },
    });
    expect(bad.status).toBe(403);
    const missing = await call('/v4/authz/forward-auth', { base, headers: { Cookie: cookie } });
    expect(missing.status).toBe(400);
  });

  it('forwarded headers from a peer that is no trusted proxy: refused, not believed', async () => {
    const r = await forwardAuth(`https://${app.hosts[0]}/`, { Cookie: cookie }, { base: baseUrl() });
    expect(r.status).toBe(403);
    expect((await r.json()) as object).toMatchObject({ reason: 'untrusted-proxy' });
    const nginx = await call('/v4/authz/auth-request', { headers: { 'X-Original-URL': `https://${app.hosts[0]}/` } });
    expect(nginx.status).toBe(403);
  });

  it(
    'Bearer: API tokens and session access tokens; a warm decision reads no credential from the ' + 'database',
    async () => {
      const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
        base,
        method: 'POST',
        auth: basic(user.login, PASSWORD),
        json: { name: 'gate' },
      });
      const bearer = { Authorization: `Bearer ${issued.body.token}` };
      expect((await forwardAuth(`https://${app.hosts[0]}/`, bearer)).status).toBe(200);
      expect((await forwardAuth(`https://${app.hosts[0]}/`, { Cookie: cookie })).status).toBe(200);
      const before = (await callJson('/__test__/credential-lookups', { base })).body;
      for (let i = 0; i < 5; i++) {
        expect((await forwardAuth(`https://${app.hosts[0]}/`, bearer)).status).toBe(200);
        expect((await forwardAuth(`http://${app.hosts[0]}/`, { Cookie: cookie })).status).toBe(200);
      }
      expect((await callJson('/__test__/credential-lookups', { base })).body).toEqual(before);
      const wrong = await forwardAuth(`https://${app.hosts[0]}/`, { Authorization: 'Bearer ast_nope' });
      expect(wrong.status).toBe(401);
    },
  );

  it('Basic only where the service allows it', async () => {
    const auth = { Authorization: basic(user.login, PASSWORD) };
    const refused = await forwardAuth(`https://${app.hosts[0]}/`, auth);
    expect(refused.status).toBe(401);
    expect((await refused.json()) as object).toMatchObject({ reason: 'basic-not-allowed' });
    const patched = await call(`/v4/services/${app.name}`, {
      base,
      method: 'PATCH',
      auth: admin,
      json: { allowBasic: true },
    });
    expect(patched.status).toBe(200);
    expect((await forwardAuth(`https://${app.hosts[0]}/`, auth)).status).toBe(200);
  });

  it('second factor required: a session without one is sent to the second step; an API token refused', async () => {
    const url = `https://${strong.hosts[0]}/`;
    const browser = await forwardAuth(url, { ...HTML, Cookie: cookie });
    expect(browser.status).toBe(302);
    const api = await forwardAuth(url, { Cookie: cookie });
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toContain('insufficient_user_authentication');
    const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
      base,
      method: 'POST',
      auth: basic(user.login, PASSWORD),
      json: { name: 'gate-mfa' },
    });
    const token = await forwardAuth(url, { Authorization: `Bearer ${issued.body.token}` });
    expect(token.status).toBe(403);
  });

  it('Envoy ext_authz: the original path after the prefix, Host and X-Forwarded-Proto', async () => {
    // fetch cannot set Host: node:http can, as Envoy does.
    const headers = { Host: app.hosts[0]!, 'X-Forwarded-Proto': 'https', Cookie: cookie };
    const ok = await rawRequest('/v4/authz/ext-authz/some/page?q=1', 'DELETE', headers);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('remote-user')).toBe(user.login);
    const other = await rawRequest('/v4/authz/ext-authz/', 'GET', { ...headers, Host: 'nobody.example.com' });
    expect(other.status).toBe(403);
    const anon = await rawRequest('/v4/authz/ext-authz/x', 'GET', { Host: app.hosts[0]!, ...HTML });
    expect(anon.status).toBe(302);
    expect(anon.headers.get('location')).toContain(encodeURIComponent(encodeURIComponent(`http://${app.hosts[0]}/x`)));
  });

  it('the way back after the sign-in goes only to a registered service the account may enter', async () => {
    const back = (rd: string, headers: Record<string, string> = { Cookie: cookie }) =>
      call(`/v4/authz/continue?rd=${encodeURIComponent(rd)}`, { base, redirect: 'manual', headers });
    const good = `http://${app.hosts[0]}/page?x=1`;
    const ok = await back(good);
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(good);
    const anon = await back(good, {});
    expect(anon.headers.get('location')).toContain('/ui/login?next=');
    const home = '/api/auth/ui/';
    for (const rd of [
      'https://evil.test/',
      `//${app.hosts[0]}/`,
      `https:\\\\${app.hosts[0]}/`,
      `https://${app.hosts[0]}@evil.test/`,
      `https://user@${app.hosts[0]}/`,
      `https://${app.hosts[0]}%2F@evil.test/`,
      `https://${app.hosts[0]}/%0d%0aSet-Cookie:x=1`,
      `https://${app.hosts[0]}/\t/`,
      `https://${app.hosts[0]}.evil.test/`,
      `javascript:alert(1)//${app.hosts[0]}`,
      `https://evil.test/${app.hosts[0]}`,
      '',
    ]) {
      const r = await back(rd);
      expect(r.status, rd).toBe(303);
      expect(r.headers.get('location'), rd).toBe(home);
    }
    const upper = await back(`HTTP://${app.hosts[0]!.toUpperCase()}./page`);
    expect(upper.headers.get('location')).toBe(`http://${app.hosts[0]}/page`);
  });

  it('refusals and admissions are audited in the compact grain; /metrics counts every decision', async () => {
    const other = await createAccount();
    const otherCookie = await sessionCookie(other.login);
    for (let i = 0; i < 3; i++)
      expect((await forwardAuth(`http://${admins.hosts[0]}/a?q=${i}`, { Cookie: otherCookie })).status).toBe(403);
    for (let i = 0; i < 3; i++)
      expect((await forwardAuth(`http://${app.hosts[0]}/b`, { Cookie: otherCookie })).status).toBe(200);
    type Event = { event: { outcome: string }; user?: { name: string }; data: Record<string, unknown> };
    let events: Event[] = [];
    await expect
      .poll(
        async () => {
          const r = await callJson<{ items: Event[] }>(
            `/v3/logs/ext_service_access/events?type=service.access&user=${encodeURIComponent(other.login)}&size=100`,
            { base, auth: admin },
          );
          events = r.body.items ?? [];
          return events.length;
        },
        { timeout: 15_000 },
      )
      .toBe(2);
    const refused = events.find((e) => e.event.outcome === 'failure')!;
    expect(refused.data).toMatchObject({ service: admins.name, outcome: 'refuse', reason: 'not-allowed' });
    expect(refused.data.url).toBe(`http://${admins.hosts[0]}/a`);
    expect(events.find((e) => e.event.outcome === 'success')!.data).toMatchObject({
      service: app.name,
      outcome: 'allow',
    });

    const text = await (await call('/metrics', { base, auth: `Bearer ${METRICS_TOKEN}` })).text();
    const count = (service: string, outcome: string) =>
      Number(
        new RegExp(`^auth_gate_decisions_total\\{service="${service}",outcome="${outcome}"\\} (\\d+)`, 'm').exec(
          text,
        )?.[1] ?? 0,
      );
    expect(count(admins.name, 'refuse')).toBeGreaterThanOrEqual(3);
    expect(count(app.name, 'allow')).toBeGreaterThanOrEqual(3);
  });

  it('introspection (RFC 7662): active only for what the calling service may see; advertised (RFC 8414)', async () => {
    const meta = await callJson<Record<string, unknown>>('/.well-known/oauth-authorization-server', { base });
    expect(meta.body.introspection_endpoint).toBe(`${base}/v3/oauth/introspect`);
    expect(meta.body.issuer).toBe(base);
    const rfc = await fetch(`${new URL(base).origin}/.well-known/oauth-authorization-server${new URL(base).pathname}`);
    expect(((await rfc.json()) as Record<string, unknown>).issuer).toBe(base);

    const introspect = async (service: Service, token: string, how: 'basic' | 'post' = 'basic') => {
      const form: Record<string, string> = { token };
      if (how === 'post') Object.assign(form, { client_id: service.clientId, client_secret: service.clientSecret! });
      const r = await callJson<Record<string, unknown>>('/v3/oauth/introspect', {
        base,
        method: 'POST',
        form,
        ...(how === 'basic' ? { auth: basic(service.clientId, service.clientSecret!) } : {}),
      });
      return r;
    };
    const issued = await callJson<{ id: string; token: string }>('/v4/users/me/tokens', {
      base,
      method: 'POST',
      auth: basic(user.login, PASSWORD),
      json: { name: 'introspected' },
    });
    const token = issued.body.token;
    const active = await introspect(app, token);
    expect(active.status).toBe(200);
    expect(active.body).toMatchObject({
      active: true,
      sub: user.id,
      username: user.login,
      token_type: 'Bearer',
      aud: app.clientId,
      client_id: app.clientId,
    });
    // A token made without scopes is not narrowed: no `scope` (docs/integration.md, "Introspection").
    expect(active.body.scope).toBeUndefined();
    expect((await introspect(app, token, 'post')).body.active).toBe(true);
    // A client no one here wrote (npm token-introspection) reads it, and is told of nothing else.
    const client = tokenIntrospection({
      endpoint: `${base}/v3/oauth/introspect`,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
      fetch,
    });
    expect(await client(token, 'access_token')).toMatchObject({ active: true, username: user.login, sub: user.id });
    await expect(client('ast_unknown')).rejects.toThrow(/not active/i);
    // Not meant for the caller: the account may not enter it, or it lacks the second factor it requires.
    expect((await introspect(admins, token)).body).toEqual({ active: false });
    expect((await introspect(strong, token)).body).toEqual({ active: false });
    expect((await introspect(app, 'ast_unknown')).body).toEqual({ active: false });
    expect((await introspect(app, 'a.b.c')).body).toEqual({ active: false });

    const grant = await callJson<{ access_token: string }>('/v3/oauth_login', {
      base,
      method: 'POST',
      form: { grant_type: 'password', username: user.login, password: PASSWORD },
    });
    const session = await introspect(app, grant.body.access_token);
    expect(session.body).toMatchObject({ active: true, username: user.login });
    expect(typeof session.body.exp).toBe('number');

    const revoked = await call(`/v4/users/me/tokens/${issued.body.id}`, {
      base,
      method: 'DELETE',
      auth: basic(user.login, PASSWORD),
    });
    expect(revoked.status).toBe(204);
    expect((await introspect(app, token)).body).toEqual({ active: false });

    const wrong = await introspect({ ...app, clientSecret: 'svc_wrong' }, grant.body.access_token);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const unknown = await introspect({ ...app, clientId: 'nobody' }, grant.body.access_token);
    expect(unknown.status).toBe(401);
  });

  it('API token audiences: the services named only, introspection agrees, no API without a scope', async () => {
    const owner = basic(user.login, PASSWORD);
    const other = await createService({
      name: `${uniqueLogin('aud')}-other`,
      hosts: [`${uniqueLogin('o')}.example.com`],
    });
    const issue = (json: Record<string, unknown>) =>
      callJson<{
        id: string;
        token: string;
        scopes: string[] | null;
        audiences: string[] | null;
        errors?: { path: string }[];
      }>('/v4/users/me/tokens', { base, method: 'POST', auth: owner, json: { name: 'aud', ...json } });
    const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
    const introspect = (service: Service, token: string) =>
      callJson<Record<string, unknown>>('/v3/oauth/introspect', {
        base,
        method: 'POST',
        form: { token },
        auth: basic(service.clientId, service.clientSecret!),
      });

    const forApp = await issue({ audiences: [app.name, app.name] });
    expect(forApp.status, JSON.stringify(forApp.body)).toBe(201);
    expect(forApp.body.audiences).toEqual([app.name]);
    expect(forApp.body.scopes).toEqual([]);
    const token = forApp.body.token;
    const admitted = await forwardAuth(`http://${app.hosts[0]}/ok`, bearer(token));
    expect(admitted.status).toBe(200);
    expect(admitted.headers.get('remote-user')).toBe(user.login);
    // Any account may enter `other`: this token may not, refused like an account that may not enter.
    const refused = await forwardAuth(`http://${other.hosts[0]}/no`, bearer(token));
    expect(refused.status).toBe(403);
    expect((await refused.json()) as object).toMatchObject({ reason: 'token-audience' });
    const viaNginx = await call('/v4/authz/auth-request', {
      base,
      headers: { 'X-Original-URL': `http://${other.hosts[0]}/no`, ...bearer(token) },
    });
    expect(viaNginx.status).toBe(403);
    expect((await introspect(app, token)).body).toMatchObject({
      active: true,
      username: user.login,
      scope: '',
      aud: [app.clientId],
      client_id: app.clientId,
    });
    expect((await introspect(other, token)).body).toEqual({ active: false });
    // No API scope: this service's own API refuses it.
    const me = await call('/v4/users/me', { base, headers: bearer(token) });
    expect(me.status).toBe(403);
    expect(me.headers.get('www-authenticate')).toContain('insufficient_scope');

    // Audiences and a scope: both.
    const both = await issue({ audiences: [app.name, other.name], scopes: ['account:read'] });
    expect(both.status).toBe(201);
    expect((await call('/v4/users/me', { base, headers: bearer(both.body.token) })).status).toBe(200);
    expect((await forwardAuth(`http://${other.hosts[0]}/`, bearer(both.body.token))).status).toBe(200);
    expect((await introspect(other, both.body.token)).body).toMatchObject({
      active: true,
      scope: 'account:read',
      aud: [app.clientId, other.clientId],
    });
    // The choices are the services the owner may enter; another is refused like one that does not exist.
    const choices = await callJson<{ items: { name: string }[] }>('/v4/users/me/token-audiences', {
      base,
      auth: owner,
    });
    const names = choices.body.items.map((i) => i.name);
    expect(names).toEqual(expect.arrayContaining([app.name, other.name, 'srm']));
    expect(names).not.toContain(admins.name);
    const notAllowed = await issue({ audiences: [admins.name] });
    expect(notAllowed.status).toBe(422);
    expect(notAllowed.body.errors?.[0]?.path).toBe('audiences');
    expect((await call('/v4/users/me/token-audiences', { base, headers: bearer(both.body.token) })).status).toBe(403);
    // Nor does the audience widen who may enter: closed to the account afterwards, the service refuses.
    const closed = await call(`/v4/services/${other.name}`, {
      base,
      method: 'PATCH',
      auth: admin,
      json: { access: { anyAccount: false, roles: ['admin'] } },
    });
    expect(closed.status).toBe(200);
    await expect
      .poll(async () => (await forwardAuth(`http://${other.hosts[0]}/`, bearer(both.body.token))).status, {
        timeout: 15_000,
      })
      .toBe(403);

    // Scopes without audiences: this API only, no service (docs/api.md, "API token audiences").
    const scoped = await issue({ scopes: ['account:read'] });
    const asScoped = await forwardAuth(`http://${app.hosts[0]}/`, bearer(scoped.body.token));
    expect(asScoped.status).toBe(401);
    expect((await asScoped.json()) as object).toMatchObject({ reason: 'invalid-credentials' });
    expect((await introspect(app, scoped.body.token)).body).toEqual({ active: false });
    // Without scopes or audiences: where its owner may enter, as before.
    const legacy = await issue({});
    expect(legacy.body.audiences).toBeNull();
    expect((await forwardAuth(`http://${app.hosts[0]}/`, bearer(legacy.body.token))).status).toBe(200);

    // Bad requests name their field.
    const unknown = await issue({ audiences: ['no-such-service'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors?.[0]?.path).toBe('audiences');
    const nothing = await issue({ scopes: [] });
    expect(nothing.status).toBe(422);
    expect(nothing.body.errors?.[0]?.path).toBe('scopes');

    // The refusal is audited with its reason.
    type Event = { data: Record<string, unknown> };
    await expect
      .poll(
        async () => {
          const r = await callJson<{ items: Event[] }>(
            `/v3/logs/ext_service_access/events?type=service.access&user=${encodeURIComponent(user.login)}&size=100`,
            { base, auth: admin },
          );
          return (r.body.items ?? []).some((e) => e.data.reason === 'token-audience' && e.data.service === other.name);
        },
        { timeout: 15_000 },
      )
      .toBe(true);
  });
});

/**
 * The gate behind real proxies (docs/integration.md): nginx (auth_request) and Caddy (forward_auth) from
 * Debian's packages, started with the documented configurations in front of an upstream that echoes the
 * identity headers, on both hosts. The session cookie has AUTH_COOKIE_DOMAIN (127.0.0.1 here), so the sign-in
 * at the service reaches the proxies' ports.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, uniqueLogin } from '../harness/client.js';
import { checkPage, launchChromium, newTab, openPage, signIn, waitReady } from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import {
  documentedConfig,
  startCaddy,
  startEchoUpstream,
  startNginx,
  type RunningProxy,
  type Upstream,
} from '../harness/proxies.js';

const kind = inject('hostKind');
const PASSWORD = 'Str0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);
let host: RunningHost;
let upstream: Upstream;
let nginx: RunningProxy;
let caddy: RunningProxy;
let browser: Browser | undefined;
let user: string;
let token: string;

async function api<T = Record<string, unknown>>(path: string, o: Parameters<typeof callJson>[1] = {}) {
  return callJson<T>(path, { base: host.url, ...o });
}

beforeAll(async () => {
  host = await startTestHost(kind, { AUTH_TRUSTED_PROXIES: '127.0.0.1,::1', AUTH_COOKIE_DOMAIN: '127.0.0.1' });
  upstream = await startEchoUpstream();
  nginx = await startNginx(host.url, upstream);
  caddy = await startCaddy(host.url, upstream);
  for (const [name, proxy] of [
    ['nginx', nginx],
    ['caddy', caddy],
  ] as const) {
    const origin = proxy.url;
    const services = [
      { name: `${name}-app`, hosts: [`127.0.0.1:${proxy.port}`] },
      { name: `${name}-admin`, prefixes: [`${origin}/admin/`], access: { anyAccount: false, roles: ['admin'] } },
      { name: `${name}-strong`, prefixes: [`${origin}/strong/`], requireSecondFactor: true },
    ];
    for (const json of services) {
      const r = await api('/v4/services', { method: 'POST', auth: admin, json });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
  }
  user = uniqueLogin('p');
  expect(
    (
      await api('/v4/users', {
        method: 'POST',
        auth: admin,
        json: { login: user, password: PASSWORD, displayName: 'Proxy User' },
      })
    ).status,
  ).toBe(201);
  token = (
    await api<{ token: string }>('/v4/users/me/tokens', {
      method: 'POST',
      auth: basic(user, PASSWORD),
      json: { name: 'p' },
    })
  ).body.token;
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([nginx?.stop(), caddy?.stop()]);
  await upstream?.close();
  await host?.stop();
});

const proxies = () =>
  [
    ['nginx', nginx],
    ['caddy', caddy],
  ] as const;

describe('the documented configurations', () => {
  it('docs/integration.md quotes the files these proxies run', () => {
    const doc = readFileSync(resolve(import.meta.dirname, '../../docs/integration.md'), 'utf8');
    expect(doc).toContain(documentedConfig('nginx.conf'));
    expect(doc).toContain(documentedConfig('Caddyfile'));
  });
});

describe.each(['nginx', 'caddy'] as const)('%s in front of the gate', (name) => {
  const proxy = () => proxies().find(([n]) => n === name)![1];

  it('an allowed account reaches the upstream with the identity headers; forged ones are replaced', async () => {
    const res = await fetch(`${proxy().url}/page?x=1`, {
      headers: {
        Authorization: `Bearer ${token}`,
        'Remote-User': 'root-admin',
        'Remote-Role': 'admin',
        'Remote-Groups': 'ops',
      },
    });
    expect(res.status).toBe(200);
    // nginx drops a header set to an empty value, Caddy passes it empty: the client's own is gone either way.
    const seen = (await res.json()) as Record<string, string | null>;
    for (const k of Object.keys(seen)) seen[k] ??= '';
    expect(seen).toEqual({
      path: '/page?x=1',
      user,
      name: 'Proxy User',
      email: '',
      groups: '',
      role: 'user',
    });
  });

  it('a refused account gets 403 and the upstream sees nothing', async () => {
    const before = upstream.seen.length;
    const res = await fetch(`${proxy().url}/admin/x`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(403);
    expect(upstream.seen.length).toBe(before);
  });

  it('an anonymous API client is not let through; a wrong token neither', async () => {
    const anon = await fetch(`${proxy().url}/page`, { redirect: 'manual' });
    expect([401, 302]).toContain(anon.status);
    const wrong = await fetch(`${proxy().url}/page`, {
      redirect: 'manual',
      headers: { Authorization: 'Bearer ast_nope' },
    });
    expect([401, 302]).toContain(wrong.status);
  });

  it('forged X-Forwarded-Host or X-Original-URL from the client choose nothing', async () => {
    const res = await fetch(`${proxy().url}/admin/x`, {
      headers: {
        Authorization: `Bearer ${token}`,
        'X-Forwarded-Host': `127.0.0.1:${proxy().port}`,
        'X-Forwarded-Uri': '/page',
        'X-Original-URL': `${proxy().url}/page`,
      },
    });
    expect(res.status).toBe(403);
  });

  it('a service that requires a second factor asks for the second step', async () => {
    const login = await fetch(`${host.url}/v3/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login: user, password: PASSWORD }),
    });
    const set = login.headers.getSetCookie().find((c) => c.startsWith('auth_session='))!;
    // AUTH_COOKIE_DOMAIN: the session cookie goes to every path of the domain (here an IP address, host-only).
    expect(set).toMatch(/; Domain=127\.0\.0\.1/);
    expect(set).toMatch(/; Path=\/(;|$)/);
    const cookie = set.split(';')[0]!;
    const ok = await fetch(`${proxy().url}/page`, { headers: { Cookie: cookie } });
    expect(ok.status).toBe(200);
    const strong = await fetch(`${proxy().url}/strong/x`, { redirect: 'manual', headers: { Cookie: cookie } });
    if (name === 'nginx') {
      // nginx turns every 401 into the redirect of its configuration: to the sign-in.
      expect(strong.status).toBe(302);
      expect(strong.headers.get('location')).toContain('/ui/login?next=');
    } else {
      expect(strong.status).toBe(401);
      expect(strong.headers.get('www-authenticate')).toContain('insufficient_user_authentication');
    }
  });

  it('an anonymous browser is sent to the sign-in and comes back to the protected page', async () => {
    browser ??= await launchChromium();
    const tab = await newTab(browser);
    try {
      await tab.page.goto(`${proxy().url}/welcome?from=${name}`);
      await tab.page.waitForURL((u) => u.pathname.endsWith('/ui/login'), { timeout: 20_000 });
      await waitReady(tab.page);
      await tab.page.fill('#signin-login', user);
      await tab.page.fill('#signin-password', PASSWORD);
      await Promise.all([
        tab.page.waitForURL((u) => u.port === String(proxy().port), { timeout: 20_000 }),
        tab.page.click('#signin-form button[type=submit]'),
      ]);
      expect(tab.page.url()).toBe(`${proxy().url}/welcome?from=${name}`);
      expect(await tab.page.textContent('#who')).toBe(user);
    } finally {
      await tab.context.close();
    }
  });
});

describe('console: protected services', () => {
  it('lists the services, adds one (its secret shown once), gives it a new secret, deletes it', async () => {
    browser ??= await launchChromium();
    const tab = await newTab(browser);
    const { page } = tab;
    try {
      await signIn(tab, host.url, ADMIN.login, ADMIN.password);
      await openPage(tab, `${host.url}/ui/admin/services`);
      await page.waitForSelector('#svc-region [data-record=srm]');
      await page.waitForSelector('#svc-editor form');
      await page.fill('#svc-f-name', 'console-app');
      await page.fill('#svc-f-hosts', 'Console.Example.com.');
      await page.uncheck('#svc-f-anyAccount');
      await page.check('#svc-f-role-auditor');
      await page.check('#svc-f-requireSecondFactor');
      await page.click('#svc-editor button[type=submit]');
      await page.waitForSelector('#svc-region [data-record=console-app]');
      const shown = (await page.textContent('#svc-message')) ?? '';
      const secret = /svc_[0-9a-f]{64}/.exec(shown)?.[0];
      expect(secret, shown).toBeDefined();
      const saved = await api<Record<string, unknown>>('/v4/services/console-app', { auth: admin });
      expect(saved.body).toMatchObject({
        hosts: ['console.example.com'],
        access: { anyAccount: false, roles: ['auditor'] },
        requireSecondFactor: true,
      });
      await checkPage(tab, kind, 'admin-services');

      await page.click('[data-record=console-app] button[aria-label="New secret for console-app"]');
      await page.waitForFunction((old) => {
        const text = document.querySelector('#svc-message')?.textContent ?? '';
        return /svc_[0-9a-f]{64}/.test(text) && !text.includes(old);
      }, secret!);
      await page.click('[data-record=console-app] button[aria-label="Delete console-app"]');
      await page.click('[data-record=console-app] button[aria-label="Delete console-app"]');
      await page.waitForSelector('#svc-region [data-record=console-app]', { state: 'detached' });
      expect((await api('/v4/services/console-app', { auth: admin })).status).toBe(404);
    } finally {
      await tab.context.close();
    }
  });
});

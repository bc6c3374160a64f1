/**
 * Headers a client may forge, on each host: X-Forwarded-Proto is believed only from a proxy listed
 * in AUTH_TRUSTED_PROXIES (Node host; the edge host never believes it), for the cookie's
 * `__Secure-` prefix and for our origin in CSRF checks; and the caller's X-Request-Id is logged as
 * `clientRequestId` beside the service's own id, never adopted.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, baseUrl, call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
let proxied: RunningHost;

beforeAll(async () => {
  // Loopback is the trusted proxy here: the test client plays the proxy.
  proxied = await startTestHost(kind, { AUTH_TRUSTED_PROXIES: '127.0.0.1,::1' }, { workerLogs: true });
});
afterAll(async () => {
  await proxied?.stop();
});

/** Logs in as the administrator (JSON); returns the session cookie's name and value. */
async function login(base: string, headers: Record<string, string> = {}): Promise<{ name: string; value: string }> {
  const res = await fetch(`${base}/v3/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(ADMIN),
  });
  expect(res.status).toBe(200);
  const set = res.headers.getSetCookie().find((c) => /^(__Secure-)?auth_session=/.test(c))!;
  const [name, value] = set.split(';')[0]!.split('=') as [string, string];
  return { name, value };
}

/** POST /v3/logout with the session cookie under both names, from `origin`. */
function logout(base: string, value: string, origin: string, headers: Record<string, string> = {}) {
  const cookie = `auth_session=${value}; __Secure-auth_session=${value}`;
  return fetch(`${base}/v3/logout`, { method: 'POST', headers: { Cookie: cookie, Origin: origin, ...headers } });
}

describe('X-Forwarded-Proto', () => {
  it('from a client that is no trusted proxy: ignored for the cookie name', async () => {
    expect((await login(baseUrl(), { 'X-Forwarded-Proto': 'https' })).name).toBe('auth_session');
  });

  it('from a client that is no trusted proxy: its https origin is not ours (CSRF)', async () => {
    const { value } = await login(baseUrl());
    const httpsOrigin = new URL(baseUrl()).origin.replace('http:', 'https:');
    const res = await logout(baseUrl(), value, httpsOrigin, { 'X-Forwarded-Proto': 'https' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { reason: string }).reason).toBe('csrf');
  });

  it('from a trusted proxy (Node host): believed; the edge host never believes it', async () => {
    const proxiedHttps = await login(proxied.url, { 'X-Forwarded-Proto': 'https' });
    const httpsOrigin = proxied.origin.replace('http:', 'https:');
    const res = await logout(proxied.url, proxiedHttps.value, httpsOrigin, { 'X-Forwarded-Proto': 'https' });
    if (kind === 'node') {
      expect(proxiedHttps.name).toBe('__Secure-auth_session');
      expect(res.status).toBe(204);
    } else {
      expect(proxiedHttps.name).toBe('auth_session');
      expect(res.status).toBe(403);
    }
    // Without the header, plain http either way; the proxy's last value counts.
    expect((await login(proxied.url)).name).toBe('auth_session');
    expect((await login(proxied.url, { 'X-Forwarded-Proto': 'https, http' })).name).toBe('auth_session');
  });
});

describe('X-Request-Id', () => {
  it(
    "the caller's id is logged as clientRequestId beside the service's own id, which differs per " + 'request',
    async () => {
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${proxied.url}/v3/nothing-here`, { headers: { 'X-Request-Id': 'pair-test-1' } });
        expect(res.status).toBe(404);
        ids.push(res.headers.get('x-request-id')!);
      }
      expect(ids[0]).not.toBe(ids[1]);
      expect(ids).not.toContain('pair-test-1');
      await expect.poll(() => proxied.output(), { timeout: 10_000 }).toContain(ids[1]!);
      const lines = proxied
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"') && l.includes('pair-test-1'));
      const logged = lines.map(
        (l) => JSON.parse(l.slice(l.indexOf('{'))) as { requestId: string; clientRequestId: string },
      );
      expect(logged.map((l) => l.requestId).sort()).toEqual([...ids].sort());
      for (const l of logged) expect(l.clientRequestId).toBe('pair-test-1');
    },
  );

  it('a malformed caller id is not logged at all', async () => {
    const res = await fetch(`${proxied.url}/v3/nothing-here`, {
      headers: { 'X-Request-Id': 'forged","level":"CRITICAL' },
    });
    const id = res.headers.get('x-request-id')!;
    await expect.poll(() => proxied.output(), { timeout: 10_000 }).toContain(id);
    const line = proxied
      .output()
      .split('\n')
      .find((l) => l.includes('"msg":"request"') && l.includes(id))!;
    expect(line).not.toContain('clientRequestId');
  });
});

describe('the headers of every answer', () => {
  const SECURITY = {
    'strict-transport-security': 'max-age=15552000; includeSubDomains',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
  };

  /** The request id (ours, a UUID) and every security header; returns the Cache-Control. */
  function expectFrameHeaders(res: Response): string | null {
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    for (const [name, value] of Object.entries(SECURITY)) expect(res.headers.get(name), name).toBe(value);
    return res.headers.get('cache-control');
  }

  it('API answers, success or problem, carry them and are never stored by a cache', async () => {
    const answers = [
      await call('/v4/users/me', { auth: basic(ADMIN.login, ADMIN.password) }), // 200
      await call('/v4/users/me'), // 401
      await call('/v3/nothing-here'), // 404
      await call('/v3/client-config', { method: 'DELETE' }), // 405
    ];
    // (A 413 of the body limit, refused before any route ran: body-limit.test.ts.)
    expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 405]);
    for (const res of answers) expect(expectFrameHeaders(res)).toBe('no-store');
  });

  it('a page keeps its own Cache-Control and still carries them', async () => {
    const res = await fetch(`${baseUrl()}/docs`);
    expect(res.status).toBe(200);
    expect(expectFrameHeaders(res)).toBe('no-cache');
  });

  it('legacy headers with no effect in current browsers are not sent', async () => {
    const res = await call('/health/live');
    for (const name of [
      'x-xss-protection',
      'x-download-options',
      'x-dns-prefetch-control',
      'origin-agent-cluster',
      'x-permitted-cross-domain-policies',
    ])
      expect(res.headers.has(name), name).toBe(false);
  });
});

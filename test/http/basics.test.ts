/** HTTP basics on both hosts: problem+json errors, 405, request ids, health, client-config. */
import { describe, expect, inject, it } from 'vitest';

const base = inject('baseUrl');

async function problem(res: Response) {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.status).toBe(res.status);
  expect(typeof body.type).toBe('string');
  expect(typeof body.title).toBe('string');
  return body;
}

describe('client-config', () => {
  it('answers {"sentry":null} while FRONTEND_ERRTRACK_DSN is unset', async () => {
    const res = await fetch(`${base}/v3/client-config`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.text()).toBe('{"sentry":null}');
  });
});

describe('errors are RFC 9457 problems', () => {
  it('unknown path: 404 naming the path', async () => {
    const res = await fetch(`${base}/v3/no-such-endpoint`);
    expect(res.status).toBe(404);
    const body = await problem(res);
    expect(body.code).toBe('NOT_FOUND');
    expect(body.instance).toBe(new URL(`${base}/v3/no-such-endpoint`).pathname);
    expect(body.detail).toContain('/v3/no-such-endpoint');
  });

  it('path outside ROOT_PATH: 404 problem', async () => {
    const res = await fetch(`${new URL(base).origin}/elsewhere`);
    expect(res.status).toBe(404);
    await problem(res);
  });

  it('wrong method: 405 with Allow', async () => {
    const res = await fetch(`${base}/v3/client-config`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    const body = await problem(res);
    expect(body.code).toBe('METHOD_NOT_ALLOWED');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('request ids', () => {
  it('every response carries one, problems repeat it in the body', async () => {
    const res = await fetch(`${base}/v3/nothing-here`);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(((await res.json()) as { requestId: string }).requestId).toBe(id);
  });

  it("the service's own id always: two requests with the same incoming id get two different ids", async () => {
    const one = await fetch(`${base}/v3/nothing-here`, { headers: { 'X-Request-Id': 'trace-abc_123' } });
    const two = await fetch(`${base}/v3/nothing-here`, { headers: { 'X-Request-Id': 'trace-abc_123' } });
    const ids = [one.headers.get('x-request-id'), two.headers.get('x-request-id')];
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(((await one.json()) as { requestId: string }).requestId).toBe(ids[0]);
    const malformed = await fetch(`${base}/health/live`, { headers: { 'X-Request-Id': 'bad id<script>' } });
    expect(malformed.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('health', () => {
  it('liveness', async () => {
    const res = await fetch(`${base}/health/live`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('readiness checks the database and reports the bridge', async () => {
    const res = await fetch(`${base}/health/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'ok',
      checks: { database: 'ok', bridge: 'not-configured' },
      // Which bridge, and why it is down: none configured here.
      bridge: null,
      // Reported, never required: audit events waiting for the log store.
      auditPipeline: {
        depth: expect.any(Number),
        oldestUndeliveredAgeSeconds: expect.toBeOneOf([null, expect.any(Number)]),
      },
      // Reported, never required: the backfill of the look-alike skeletons (nothing to fill here).
      loginSkeletons: { remaining: 0, filling: expect.any(Boolean) },
    });
  });
});

describe('OpenAPI docs, offline', () => {
  it('the description has the four sections of the specification and every endpoint', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { tags: { name: string }[]; paths: Record<string, unknown> };
    const tags = doc.tags.map((t) => t.name);
    for (const t of ['auths', 'user_v4', 'logs', 'settings']) expect(tags).toContain(t);
    // Paths below the one server, the mount (ROOT_PATH).
    expect(Object.keys(doc.paths)).toContain('/v3/client-config');
    expect(Object.keys(doc.paths)).toContain('/health/ready');
    for (const op of ['audit_log_types', '{audit_log_type}/search', '{audit_log_type}/field_caps']) {
      expect(Object.keys(doc.paths)).toContain(`/v3/logs/${op}`);
    }
  });

  it('the page loads only same-origin assets, and each of them is served', async () => {
    const res = await fetch(`${base}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect(ref.startsWith('/')).toBe(true);
      expect(ref.startsWith('//')).toBe(false);
      const asset = await fetch(new URL(ref, base));
      expect(asset.status, ref).toBe(200);
      await asset.arrayBuffer();
    }
  });

  it(
    "Swagger UI's oauth2-redirect.html: a strict Content-Security-Policy, no inline script, its script " + 'served',
    async () => {
      const res = await fetch(`${base}/docs/vendor/swagger-ui/oauth2-redirect.html`);
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ])
        expect(csp).toContain(directive);
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      const html = await res.text();
      // Every script is a same-origin file (the policy allows no inline one), and it is served.
      const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attrs, inline] of scripts) {
        expect(inline!.trim()).toBe('');
        const src = /src="([^"]+)"/.exec(attrs!)![1]!;
        const js = await fetch(new URL(src, `${base}/docs/vendor/swagger-ui/oauth2-redirect.html`));
        expect(js.status, src).toBe(200);
        expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
        await js.arrayBuffer();
      }
    },
  );

  it('static files cannot escape STATIC_DIR', async () => {
    const origin = new URL(base).origin;
    const root = new URL(base).pathname;
    for (const path of [
      '/docs/..%2f..%2fpackage.json',
      '/docs/%2e%2e/%2e%2e/package.json',
      '/docs/vendor/../../wrangler.toml',
      '/docs/nope.js',
    ]) {
      const res = await fetch(`${origin}${root}${path}`);
      expect(res.status, path).toBe(404);
      await res.arrayBuffer();
    }
  });
});

/**
 * The first run on both hosts: ROOT_PATH and `/` lead somewhere (the first-run page while no
 * administrator exists, the web console after), and the first-run page creates the first administrator
 * for a client on the service's machine only (Node: the socket's peer; edge: the CF-Connecting-IP
 * that wrangler dev sets), same-origin, policy-checked and audited, then is gone.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { auditOutbox } from '../../schema/index.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { openDatabase } from '../../worker/node/host.js';
import { FIRST_RUN_CODE_TRIES, issueFirstRunCode } from '../../worker/src/first-run/code.js';
import { basic, baseUrl } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const PASSWORD = 'F1rst@dmin';
let host: RunningHost;
/** The host's database file, kept across a restart of the host. */
const database = join(mkdtempSync(join(tmpdir(), 'first-run-')), 'auth.db');
// No bootstrap administrator; the Node host listens on every interface, so that a client can
// reach it from a non-loopback address of the same machine.
const hostEnv = {
  AUTH_BOOTSTRAP_ADMIN_LOGIN: '',
  AUTH_BOOTSTRAP_ADMIN_PASSWORD: '',
  ...(kind === 'node' ? { AUTH_BIND_HOST: '0.0.0.0' } : {}),
};

/** An IPv4 address of this machine that is not loopback (the Node host is reached through it). */
const otherAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

beforeAll(async () => {
  host = await startTestHost(kind, hostEnv, { database });
});
afterAll(async () => host?.stop());

const page = () => `${host.url}/first-run`;
const root = () => new URL(host.url).pathname;

/**
 * The one-time code of the running host: what `npm start` printed (Node), or a new one issued the
 * way `npm run dev:edge` issues one before it starts wrangler (edge).
 */
async function currentCode(): Promise<string> {
  if (kind === 'node') {
    return eventually(() => [...host.output().matchAll(/one-time code ([A-Z0-9-]{20,})/g)].at(-1)?.[1], {
      what: "the one-time code in the Node host's start messages",
    });
  }
  const db = openDatabase(parseEnvironment({ LIBSQL_URL: host.libsqlUrl }));
  try {
    return await issueFirstRunCode(db.db);
  } finally {
    db.close();
  }
}
let code = '';

/**
 * Posts the form as Chromium posts this page's form (see first-run-browser.test.ts): the page's
 * Referrer-Policy (no-referrer) makes the Origin `null`, and Fetch Metadata says same-origin.
 */
function form(fields: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(page(), {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Origin: 'null',
      'Sec-Fetch-Site': 'same-origin',
      'Sec-Fetch-Mode': 'navigate',
      ...headers,
    },
    body: new URLSearchParams({ code, ...fields }),
  });
}

/** GET through http.request: connects to `address` and sends `headers` (Host included) as given. */
function rawGet(address: string, path: string, headers: Record<string, string>) {
  const port = Number(new URL(host.url).port);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: address, port, path, headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('while no administrator exists', () => {
  beforeAll(async () => {
    code = await currentCode();
  });

  it('ROOT_PATH, ROOT_PATH/ and / redirect to the first-run page', async () => {
    for (const path of [root(), `${root()}/`, '/']) {
      const res = await fetch(`${host.origin}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location'), path).toBe(`${root()}/first-run`);
    }
  });

  it('the page is a form for a loopback client, described with the password policy', async () => {
    const res = await fetch(page());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("form-action 'self'");
    const text = await res.text();
    expect(text).toContain(`action="${root()}/first-run"`);
    expect(text).toContain('at least 1 special character from $ @ # %');
  });

  it('refused (403) for a client that is not on this machine', async () => {
    if (kind === 'node') {
      // A real connection from a non-loopback address; the Host and a CF-Connecting-IP header say
      // loopback, but the Node host believes the socket only.
      expect(otherAddress, 'a non-loopback IPv4 address of this machine').toBeDefined();
      const headers = { Host: `127.0.0.1:${new URL(host.url).port}`, 'CF-Connecting-IP': '127.0.0.1' };
      const res = await rawGet(otherAddress!, `${root()}/first-run`, headers);
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).detail).toContain("service's own machine");
    } else {
      // The edge host's client address: CF-Connecting-IP (Cloudflare's, or wrangler dev's).
      const res = await fetch(page(), { headers: { 'CF-Connecting-IP': '192.0.2.7' } });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    // Neither leads there from the root.
    if (kind === 'edge') {
      const res = await fetch(`${host.origin}/`, { redirect: 'manual', headers: { 'CF-Connecting-IP': '192.0.2.7' } });
      expect(res.headers.get('location')).toBe(`${root()}/ui/`);
    }
  });

  it('refused through a proxy (forwarding headers) and under a non-loopback host name (DNS rebinding)', async () => {
    const proxied: Record<string, string>[] = [
      { 'X-Forwarded-For': '192.0.2.9' },
      { Forwarded: 'for=192.0.2.9' },
      { 'X-Real-IP': '192.0.2.9' },
      { 'True-Client-IP': '192.0.2.9' },
      { 'X-Client-IP': '192.0.2.9' },
      ...(kind === 'node' ? [{ 'CF-Connecting-IP': '127.0.0.1' }] : []),
    ];
    for (const headers of proxied) {
      const res = await fetch(page(), { headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
    }
    const attacker = { Host: `attacker.example:${new URL(host.url).port}` };
    const rebound = await rawGet('127.0.0.1', `${root()}/first-run`, attacker);
    expect(rebound.status).toBe(403);
  });

  it('a cross-site form post is refused and creates nothing', async () => {
    const fields = { login: 'intruder', password: PASSWORD, passwordRepeat: PASSWORD };
    const res = await form(fields, { Origin: 'http://attacker.example', 'Sec-Fetch-Site': 'cross-site' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { reason: string }).reason).toBe('csrf');
    // A sandboxed frame of another site posts with Origin null and Sec-Fetch-Site cross-site; an old
    // browser (or a privacy extension) sends Origin null without Fetch Metadata: neither is same-origin.
    for (const headers of [{ 'Sec-Fetch-Site': 'cross-site' }, { 'Sec-Fetch-Site': 'same-site' }, {}]) {
      const init = { Origin: 'null', 'Sec-Fetch-Site': '', 'Sec-Fetch-Mode': '', ...headers };
      const sent = Object.fromEntries(Object.entries(init).filter(([, v]) => v !== ''));
      const r = await fetch(page(), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...sent },
        body: new URLSearchParams({ code, ...fields }),
      });
      expect(r.status, JSON.stringify(sent)).toBe(403);
      expect(((await r.json()) as { reason: string }).reason).toBe('csrf');
    }
    // A browser's refused form post gets a page in its language with the next step, not JSON.
    const ru = await form(fields, {
      Origin: 'http://attacker.example',
      'Sec-Fetch-Site': 'cross-site',
      Accept: 'text/html',
      'Accept-Language': 'ru-RU,ru;q=0.9',
    });
    expect(ru.status).toBe(403);
    expect(ru.headers.get('content-type')).toMatch(/^text\/html/);
    const text = await ru.text();
    expect(text).toContain('lang="ru"');
    expect(text).toContain('другого сайта');
    expect((await fetch(page())).status).toBe(200);
  });

  it('the form asks for the one-time code; a missing or wrong one changes nothing', async () => {
    expect(await (await fetch(page())).text()).toContain('name="code"');
    const fields = { login: 'guess', password: PASSWORD, passwordRepeat: PASSWORD };
    const missing = await form({ ...fields, code: '' });
    expect(missing.status).toBe(403);
    expect(((await missing.json()) as { reason: string }).reason).toBe('first_run_code');
    const wrong = await form({ ...fields, code: 'AAAA-BBBB-CCCC-DDDD-EEEE' }, { Accept: 'text/html' });
    expect(wrong.status).toBe(403);
    const page403 = await wrong.text();
    expect(page403).toContain('one-time code');
    expect(page403).toContain('value="guess"');
    expect((await fetch(page())).status).toBe(200);
    const login = await fetch(`${host.url}/v3/login_without_session`, {
      method: 'POST',
      headers: { Authorization: basic('guess', PASSWORD) },
    });
    expect(login.status).toBe(401);
  });

  it(`after ${FIRST_RUN_CODE_TRIES} wrong codes even the right one is refused until a new code is issued`, async () => {
    const fields = { login: 'guess', password: PASSWORD, passwordRepeat: PASSWORD };
    // Each wrong try counts (the two of the test before too), also when sent in parallel.
    const tries = Array.from({ length: FIRST_RUN_CODE_TRIES }, (_, i) =>
      form({ ...fields, code: `WRONG-${String(i).padStart(4, '0')}-CODE-XXXX-YYYY` }),
    );
    const statuses = (await Promise.all(tries)).map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(FIRST_RUN_CODE_TRIES - 2).fill(403), 429, 429]);
    const right = await form(fields);
    expect(right.status).toBe(429);
    expect(((await right.json()) as { detail: string }).detail).toContain('new one-time code');
    // A restart (Node: npm start; edge: npm run dev:edge) issues a new code, and the old one is void.
    const old = code;
    if (kind === 'node') {
      await host.stop();
      host = await startTestHost(kind, hostEnv, { database });
    }
    code = await currentCode();
    expect(code).not.toBe(old);
    expect((await form({ ...fields, code: old })).status).toBe(403);
  });

  it(
    'an oversize body is a 413 and a body of another type a 415 (the hostile suite covers every other ' +
      'endpoint); nothing created',
    async () => {
      const big = await form({ login: 'first', password: PASSWORD, pad: 'a'.repeat(70_000) });
      expect(big.status).toBe(413);
      expect(((await big.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
      for (const type of ['application/json', 'text/plain']) {
        const res = await fetch(page(), {
          method: 'POST',
          headers: { 'Content-Type': type, Origin: host.origin },
          body: JSON.stringify({ login: 'first', password: PASSWORD }),
        });
        expect(res.status, type).toBe(415);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      }
      expect((await fetch(page())).status).toBe(200);
    },
  );

  it('checks the password policy and the repeated password (a problem, or the form again for a browser)', async () => {
    const weak = await form({ login: 'first', password: 'weak' });
    expect(weak.status).toBe(422);
    const body = (await weak.json()) as { code: string; violations: { rule: string }[] };
    expect(body.code).toBe('PASSWORD_POLICY');
    expect(body.violations.map((v) => v.rule)).toContain('min_length');
    const differ = await form({ login: 'first', password: PASSWORD, passwordRepeat: 'F1rst@dmiN' });
    expect(differ.status).toBe(422);
    const html = await form({ login: 'first', password: 'weak', passwordRepeat: 'weak' }, { Accept: 'text/html' });
    expect(html.status).toBe(422);
    const text = await html.text();
    expect(text).toContain('at least 8 characters');
    expect(text).toContain('value="first"');
    expect((await fetch(page())).status).toBe(200);
  });
});

describe('creating the first administrator', () => {
  it('creates it (audited), it logs in, and the page is gone', async () => {
    const res = await form({ login: 'first', password: PASSWORD, passwordRepeat: PASSWORD }, { Accept: 'text/html' });
    expect(res.status).toBe(201);
    expect(await res.text()).toContain('Administrator "first" created');

    const auth = { Authorization: basic('first', PASSWORD) };
    const login = await fetch(`${host.url}/v3/login_without_session`, { method: 'POST', headers: auth });
    expect(login.status).toBe(200);
    expect(((await login.json()) as { role: string }).role).toBe('admin');

    const database = openDatabase(parseEnvironment({ LIBSQL_URL: host.libsqlUrl }));
    try {
      const events = await database.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'user.created'));
      expect(events).toHaveLength(1);
      const data = { role: 'admin', via: 'first-run' };
      expect(events[0]).toMatchObject({ stream: 'crud_admin', subjectLogin: 'first', actorId: null, data });
    } finally {
      database.close();
    }

    const gone = await fetch(page());
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { detail: string }).detail).toContain('npm run ops');
    expect((await form({ login: 'second', password: PASSWORD })).status).toBe(404);
  });

  it('ROOT_PATH and / now redirect to the web console', async () => {
    for (const path of [root(), '/']) {
      const res = await fetch(`${host.origin}${path}`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(`${root()}/ui/`);
    }
  });
});

interface Operation {
  security?: unknown[];
  responses: object;
  'x-required-roles'?: unknown;
}

async function openapi(): Promise<{ paths: Record<string, Record<string, Operation>> }> {
  const res = await fetch(`${baseUrl()}/openapi.json`);
  return (await res.json()) as { paths: Record<string, Record<string, Operation>> };
}

describe('the shared host (an administrator exists)', () => {
  it('/ and ROOT_PATH redirect to the web console (not the docs), which answers a browser', async () => {
    const { origin, pathname } = new URL(baseUrl());
    for (const path of ['/', pathname, `${pathname}/`]) {
      const res = await fetch(`${origin}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location'), path).toBe(`${pathname}/ui/`);
    }
    const ui = await fetch(`${baseUrl()}/ui/`, { headers: { Accept: 'text/html' } });
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/^text\/html/);
    expect((await fetch(`${baseUrl()}/first-run`)).status).toBe(404);
  });

  it('the OpenAPI description lists the first-run page without security or roles', async () => {
    const doc = await openapi();
    const op = doc.paths['/first-run']!;
    expect(op.post!.security).toEqual([]);
    expect(op.post!['x-required-roles']).toBeUndefined();
    expect(Object.keys(op.post!.responses)).toEqual(expect.arrayContaining(['201', '403', '404', '422']));
  });

  it('operations that need no login (logins, OIDC, the tunnel, first run) declare no roles', async () => {
    const doc = await openapi();
    const open = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => !op.security || op.security.length === 0)
        .map(([m, op]) => ({ at: `${m} ${path}`, roles: op['x-required-roles'] })),
    );
    const logins = ['post /v3/login', 'post /v3/oauth_login', 'post /v3/login/union', 'get /v3/oidc/login/{idp_name}'];
    const expected = [...logins, 'post /v3/sentry-tunnel'];
    expect(open.map((o) => o.at)).toEqual(expect.arrayContaining(expected));
    expect(open.filter((o) => o.roles !== undefined).map((o) => o.at)).toEqual([]);
  });
});

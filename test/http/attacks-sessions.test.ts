/**
 * Hostile suite (docs/testing.md, "The hostile suite"), attacks on sessions and browsers, on the shared host of each
 * kind: open redirects, session fixation, CSRF, forged session tokens. The endpoints are read from the
 * OpenAPI description, so that a new redirecting or cookie-authenticated route is attacked too.
 * Each `it` is one attack.
 */
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, decodeJwt, exportJWK, importPKCS8, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import { totpCode } from '../harness/totp.js';
import { ADMIN, basic, baseUrl, callJson, createUser, uniqueLogin } from '../harness/client.js';
import { BASE_TEST_ENV } from '../harness/hosts.js';
import { startTestProvider, throughProvider, type TestProvider } from '../harness/oidc-provider.js';
import { operationsOf, type JsonObject } from '../harness/openapi-doc.js';

const PASSWORD = 'Sess10n$atk';
const admin = basic(ADMIN.login, ADMIN.password);
const origin = () => new URL(baseUrl()).origin;
const root = () => new URL(baseUrl()).pathname;
const url = (path: string) => `${baseUrl()}${path}`;
/** DEFAULT_FRONTEND_URL of the test hosts: the one other origin a browser may be sent to. */
const FRONTEND = 'http://localhost';

let doc: JsonObject;
let idp: TestProvider;
const idpName = `atk${Date.now().toString(36)}`;

beforeAll(async () => {
  doc = (await (await fetch(url('/openapi.json'))).json()) as JsonObject;
  idp = await startTestProvider([url(`/v3/oidc/callback/${idpName}`)]);
  const r = await callJson('/v3/settings/identity-providers', {
    method: 'POST',
    auth: admin,
    json: { name: idpName, issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
});
afterAll(async () => {
  await callJson(`/v3/settings/identity-providers/${idpName}`, { method: 'DELETE', auth: admin });
  await idp?.close();
});

const sessionCookieOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => /^auth_session=./.test(c))
    ?.slice('auth_session='.length);

/** A browser logged in with /v3/login (JSON) as a new account; its login. */
async function loggedIn(o: { role?: string } = {}): Promise<{ b: Browser; login: string; id: string }> {
  const login = uniqueLogin('atk');
  const id = await createUser(login, PASSWORD, { sessionLimit: 5, ...o });
  const b = new Browser(origin());
  expect((await b.postJson(url('/v3/login'), { login, password: PASSWORD })).status).toBe(200);
  return { b, login, id };
}

/** Through the OIDC provider with `next`: the callback URL the provider sends the browser back to. */
const oidcCallback = (b: Browser, user: string, next?: string) =>
  throughProvider(b, baseUrl(), next === undefined ? idpName : `${idpName}?next=${encodeURIComponent(next)}`, user);

const OPEN_REDIRECTS = [
  'https://evil.example/steal',
  '%2F%2Fevil.example',
  '//evil.example/',
  '///evil.example/',
  '/\\evil.example/',
  '\\\\evil.example',
  '/%2F%2Fevil.example/',
  '/%5Cevil.example/',
  'https:evil.example',
  ' //evil.example',
  '/\t/evil.example',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  `${FRONTEND}.evil.example/`,
  `${FRONTEND}@evil.example/`,
  `http://${new URL(FRONTEND).host}:1@evil.example/`,
  'http://[::1]:1/',
  '/%0d%0aLocation:%20https://evil.example',
  // Dot segments that resolve to `//host` or `/\host` (the check must look at what is returned).
  '/..//evil.example/phish',
  '/.//evil.example/phish',
  '/%2e%2e//evil.example/phish',
  '/%2E%2E//evil.example/phish',
  '/.%2e//evil.example/phish',
  '/%2e//evil.example/phish',
  '/x/..//evil.example/phish',
  '/x/y/../..//evil.example/phish',
  '/x/%2e%2e//evil.example/phish',
  '/../\\evil.example/phish',
  '/x/../\\evil.example/phish',
  '/..\\/evil.example/phish',
  '/.\n./\t/evil.example/phish',
  '/x/..//%2Fevil.example/phish',
];

/** Where a redirect leads, resolved as a browser does. */
function destination(res: Response): URL {
  const location = res.headers.get('location');
  expect(location, `status ${res.status}`).toBeTruthy();
  return new URL(location!, url('/'));
}

describe('attacks on sessions and browsers', () => {
  it('open-redirect attempts on every redirecting endpoint', async () => {
    // Each redirecting operation of the description, and how to reach its redirect with a `next`.
    const { login, b: signedIn } = await loggedIn();
    const drivers: Record<string, (next: string) => Promise<Response>> = {
      // The gate's way back after a sign-in (docs/integration.md): `rd` instead of `next`; anything but an
      // address of a protected service the account may enter falls back to the console.
      'get /v4/authz/continue': (next) => signedIn.fetch(url(`/v4/authz/continue?rd=${encodeURIComponent(next)}`)),
      'post /v3/login': (next) => new Browser(origin()).postForm(url('/v3/login'), { login, password: PASSWORD, next }),
      'post /v3/login/union': async (next) => {
        const login = uniqueLogin('merge');
        await createUser(login, PASSWORD, { sessionLimit: 5 });
        const b = new Browser(origin());
        const merge = await b.fetch(await oidcCallback(b, login));
        expect(merge.headers.get('location')).toBe(`${FRONTEND}/conflict`);
        return b.postForm(url('/v3/login/union'), { password: PASSWORD, next });
      },
      'post /v3/login/second-factor': async (next) => {
        // A new account with a TOTP factor each time (a code is accepted once): the form login leaves a
        // pending login in the browser, and the second step's form carries the `next`.
        const login = uniqueLogin('mfa-next');
        await createUser(login, PASSWORD, { sessionLimit: 5 });
        const enrolling = new Browser(origin());
        expect((await enrolling.postJson(url('/v3/login'), { login, password: PASSWORD })).status).toBe(200);
        const start = (await (await enrolling.fetch(url('/v4/users/me/totp'), { method: 'POST' })).json()) as {
          otpauthUri: string;
        };
        const secret = new URL(start.otpauthUri).searchParams.get('secret')!;
        const code = (steps: number) => totpCode(secret, Date.now(), steps);
        expect((await enrolling.postJson(url('/v4/users/me/totp/confirm'), { code: code(0) })).status).toBe(204);
        const b = new Browser(origin());
        expect((await b.postForm(url('/v3/login'), { login, password: PASSWORD })).status).toBe(303);
        return b.postForm(url('/v3/login/second-factor'), { code: code(1), next });
      },
      'get /v3/oidc/login/{idp_name}': async (next) => {
        // The provider's own URL is where this one leads: the `next` given here is checked at the end.
        const b = new Browser(origin());
        const start = await b.fetch(url(`/v3/oidc/login/${idpName}?next=${encodeURIComponent(next)}`));
        expect(destination(start).origin).toBe(new URL(idp.issuer).origin);
        return start;
      },
      'get /v3/oidc/callback/{idp_name}': async (next) => {
        const b = new Browser(origin());
        return b.fetch(await oidcCallback(b, uniqueLogin('oidc'), next));
      },
    };
    // The gate's forward-auth answers (nginx's, Caddy's and Traefik's, Envoy's) redirect a browser only to this
    // service's own sign-in, carrying the address asked for in `rd`, which /v4/authz/continue checks (driven
    // here); they answer trusted proxies only, so they are driven in gate.test.ts.
    const gateSignIn = new Set(['get /v4/authz/forward-auth', 'get /v4/authz/ext-authz']);
    const redirecting = operationsOf(doc)
      .filter((o) => Object.keys(o.op.responses as JsonObject).some((s) => s.startsWith('3')))
      .map((o) => `${o.method} ${o.path}`)
      .filter((op) => !gateSignIn.has(op));
    expect(redirecting.sort()).toEqual(Object.keys(drivers).sort());
    for (const [op, send] of Object.entries(drivers)) {
      const provider = op.startsWith('get /v3/oidc/login');
      const gate = op === 'get /v4/authz/continue';
      for (const next of OPEN_REDIRECTS) {
        const res = await send(next);
        expect(res.status, `${op} next=${JSON.stringify(next)}`).toBeGreaterThanOrEqual(300);
        expect(res.status).toBeLessThan(400);
        if (provider) continue;
        // Anything but a same-origin path or a front-end URL falls back to DEFAULT_FRONTEND_URL (the gate's: to
        // the console).
        expect(destination(res).href, `${op} next=${JSON.stringify(next)}`).toBe(gate ? url('/ui/') : `${FRONTEND}/`);
      }
      // A legitimate same-origin next is kept (the check is not a blanket refusal; the gate's: gate.test.ts).
      if (!provider && !gate) expect(destination(await send(`${root()}/docs`)).href).toBe(url('/docs'));
    }
  }, 240_000);

  it('session fixation: a cookie set before login is never kept', async () => {
    // The attacker plants their own live session cookie, a forged one for a made-up session and
    // garbage in the victim's browser; every login replaces it, and none of them becomes the victim's.
    const attacker = await loggedIn();
    const planted = (await attacker.b.cookie(url('/v4/users/me'), 'auth_session'))!;
    const claims = decodeJwt(planted);
    const key = new TextEncoder().encode(BASE_TEST_ENV.SESSION_SECRET_KEY!);
    const madeUp = await new SignJWT({ sid: crypto.randomUUID(), sub: claims.sub })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setAudience('auth-session')
      .setExpirationTime('1h')
      .sign(key);
    const logins: Record<string, (b: Browser, login: string) => Promise<Response>> = {
      'POST /v3/login (JSON)': (b, login) => b.postJson(url('/v3/login'), { login, password: PASSWORD }),
      'POST /v3/login (form)': (b, login) => b.postForm(url('/v3/login'), { login, password: PASSWORD }),
      'POST /v3/oauth_login': (b, login) =>
        b.postForm(url('/v3/oauth_login'), { grant_type: 'password', username: login, password: PASSWORD }),
      'GET /v3/oidc/callback': async (b, login) => b.fetch(await oidcCallback(b, login)),
      'POST /v3/login/union': async (b, login) => {
        await b.fetch(await oidcCallback(b, login));
        return b.postJson(url('/v3/login/union'), { password: PASSWORD });
      },
    };
    for (const [way, logIn] of Object.entries(logins)) {
      for (const fixed of [planted, madeUp, 'fixed-by-the-attacker']) {
        const login = uniqueLogin('victim');
        if (way !== 'GET /v3/oidc/callback') await createUser(login, PASSWORD, { sessionLimit: 5 });
        const b = new Browser(origin());
        await b.jar.setCookie(`auth_session=${fixed}; Path=${root()}`, url('/'));
        const res = await logIn(b, login);
        const at = `${way} over ${fixed.slice(0, 12)}`;
        expect(res.status, at).toBeLessThan(400);
        const issued = sessionCookieOf(res);
        expect(issued, at).toBeDefined();
        expect(issued, at).not.toBe(fixed);
        expect(decodeJwt(issued!).sid, at).not.toBe(decodeJwt(fixed.includes('.') ? fixed : madeUp).sid);
        const me = await callJson<{ login: string }>('/v4/users/me', { headers: { Cookie: `auth_session=${issued}` } });
        expect(me.body.login, at).toBe(login);
        // The planted cookie is still nobody's or the attacker's: never the victim's.
        const fixedMe = await callJson<{ login: string }>('/v4/users/me', {
          headers: { Cookie: `auth_session=${fixed}` },
        });
        if (fixedMe.status === 200) expect(fixedMe.body.login, at).toBe(attacker.login);
        else expect(fixedMe.status, at).toBe(401);
      }
    }
  });

  it('CSRF on every cookie-authenticated unsafe route', async () => {
    // An administrator's browser; a victim account whose id fills {userId}: had a request gone
    // through, the victim would be changed, blocked or deleted.
    const { b } = await loggedIn({ role: 'admin' });
    const victim = uniqueLogin('csrf');
    const victimId = await createUser(victim, PASSWORD);
    const unsafe = operationsOf(doc).filter(
      (o) =>
        ['post', 'put', 'patch', 'delete'].includes(o.method) &&
        ((o.op.security as JsonObject[] | undefined) ?? []).some((s) => 'cookie' in s),
    );
    expect(unsafe.length).toBeGreaterThan(20);
    const attempts: [string, Record<string, string>][] = [
      ['another Origin', { Origin: 'https://evil.example' }],
      ['a look-alike Origin', { Origin: `${origin()}.evil.example` }],
      ['Origin null', { Origin: 'null' }],
      // A sandboxed frame, or a post after a cross-site redirect: Origin null, and Fetch Metadata says so.
      ['Origin null, Sec-Fetch-Site cross-site', { Origin: 'null', 'Sec-Fetch-Site': 'cross-site' }],
      ['Origin null, Sec-Fetch-Site same-site', { Origin: 'null', 'Sec-Fetch-Site': 'same-site' }],
      ['Sec-Fetch-Site cross-site, no Origin', { 'Sec-Fetch-Site': 'cross-site' }],
      ['Sec-Fetch-Site same-site, no Origin', { 'Sec-Fetch-Site': 'same-site' }],
      ['neither', {}],
    ];
    for (const o of unsafe) {
      const path = o.path.replace('{userId}', victimId).replace(/\{[^}]+\}/g, 'x1');
      const hasBody = !!o.op.requestBody;
      for (const [how, headers] of attempts) {
        const res = await b.fetch(url(path), {
          method: o.method.toUpperCase(),
          origin: null,
          headers: { ...headers, ...(hasBody ? { 'Content-Type': 'application/json' } : {}) },
          body: hasBody
            ? JSON.stringify({ role: 'admin', values: { AUTH_FAILED_COUNT: 99 }, password: 'Csrf$pass1', minutes: 60 })
            : undefined,
        });
        const at = `${o.method.toUpperCase()} ${o.path} with ${how}`;
        expect(res.status, at).toBe(403);
        expect(((await res.json()) as { reason?: string }).reason, at).toBe('csrf');
      }
    }
    // Nothing happened to the victim, nor to the settings.
    const after = await callJson<{ role: string; status: string }>(`/v4/users/${victimId}`, { auth: admin });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ role: 'user', status: 'active', superAccessUntil: null });
    const settings = await callJson<{ items: { name: string; value: unknown }[] }>('/v3/settings', { auth: admin });
    expect(settings.body.items.find((s) => s.name === 'AUTH_FAILED_COUNT')?.value).not.toBe(99);
    expect((await callJson('/v4/users/me', { auth: basic(victim, PASSWORD) })).status).toBe(200);
    // A browser's refused form post gets a page with the next step, not JSON (fetch here cannot send
    // Sec-Fetch-Mode navigate: a form that asks for HTML is the other sign of one).
    const navigation = await b.fetch(url('/v3/logout'), {
      method: 'POST',
      origin: null,
      headers: {
        Origin: 'https://evil.example',
        'Sec-Fetch-Site': 'cross-site',
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'text/html,application/xhtml+xml',
        'Accept-Language': 'en',
      },
      body: '',
    });
    expect(navigation.status).toBe(403);
    expect(navigation.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await navigation.text()).toContain(`href="${root()}/ui/"`);
    // The same browser, same-origin, is let through (the refusals were CSRF, not the route): also with
    // the Origin hidden (`null`) by a no-referrer page, as Fetch Metadata still says same-origin.
    const hidden = { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' };
    expect((await b.fetch(url('/v3/logout'), { method: 'POST', origin: null, headers: hidden })).status).toBe(204);
  });

  it(
    'JWT tricks on the session cookie: alg none, HS/RS confusion, kid injection, tampering, foreign ' + 'keys',
    async () => {
      const { b, id } = await loggedIn();
      const real = (await b.cookie(url('/v4/users/me'), 'auth_session'))!;
      const claims = decodeJwt(real) as JWTPayload & { sid: string };
      const me = async (token: string) =>
        (await fetch(url('/v4/users/me'), { headers: { Cookie: `auth_session=${token}` } })).status;
      const secret = new TextEncoder().encode(BASE_TEST_ENV.SESSION_SECRET_KEY!);
      const sign = (header: Record<string, unknown>, key: Uint8Array | CryptoKey, body: JWTPayload = claims) =>
        new SignJWT(body).setProtectedHeader(header as { alg: string }).sign(key);
      const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      const [h, p, s] = real.split('.') as [string, string, string];

      // The control: the same claims signed as the service signs them are a live session.
      expect(await me(await sign({ alg: 'HS256', typ: 'JWT' }, secret))).toBe(200);

      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const rsa = await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
      const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const jwk = await exportJWK(publicKey);
      const forged: [string, string][] = [
        ['alg none', `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`],
        ['alg None', `${b64({ alg: 'None' })}.${p}.`],
        ['alg NONE with the old signature', `${b64({ alg: 'NONE' })}.${p}.${s}`],
        ['RS256 with an attacker key', await sign({ alg: 'RS256' }, rsa)],
        ['RS256 with the attacker key embedded (jwk)', await sign({ alg: 'RS256', jwk }, rsa)],
        ['RS256 with a jku', await sign({ alg: 'RS256', jku: 'https://evil.example/jwks.json' }, rsa)],
        [
          'HS256 keyed with an RSA public key (confusion)',
          await sign({ alg: 'HS256' }, new TextEncoder().encode(publicPem)),
        ],
        [
          'kid path traversal, empty-file key',
          await sign({ alg: 'HS256', kid: '../../../../../../dev/null' }, new Uint8Array(32)),
        ],
        [
          'kid SQL injection',
          await sign(
            { alg: 'HS256', kid: "x' UNION SELECT 'attacker-key-0123456789abcdefghij' --" },
            new TextEncoder().encode('attacker-key-0123456789abcdefghij'),
          ),
        ],
        [
          'kid command injection',
          await sign(
            { alg: 'HS256', kid: '|echo attacker-key' },
            new TextEncoder().encode('attacker-key-0123456789abcdefghij'),
          ),
        ],
        [
          'another key',
          await sign({ alg: 'HS256' }, new TextEncoder().encode('another-key-that-is-long-enough-0123456789')),
        ],
        ['tampered subject', `${h}.${b64({ ...claims, sub: 'someone-else' })}.${s}`],
        ['tampered session', `${h}.${b64({ ...claims, sid: crypto.randomUUID() })}.${s}`],
        ['garbage', 'garbage'],
        ['the real one with a byte more', `${real}x`],
        ['empty', ''],
      ];
      for (const [what, token] of forged) {
        const res = await fetch(url('/v4/users/me'), { headers: { Cookie: `auth_session=${token}` } });
        expect(res.status, what).toBe(401);
        expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
        // As Bearer (the access token of a session is the same token): refused alike.
        expect(
          (await fetch(url('/v4/users/me'), { headers: { Authorization: `Bearer ${token || 'x'}` } })).status,
          `${what} as Bearer`,
        ).toBe(401);
      }
      // The real session still works, and is the account's.
      const still = await callJson<{ id: string }>('/v4/users/me', { headers: { Cookie: `auth_session=${real}` } });
      expect(still.body.id).toBe(id);
    },
  );
});

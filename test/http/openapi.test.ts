/**
 * The OpenAPI description as served (`/openapi.json`), on both hosts, is trustworthy for generated
 * clients: a valid OpenAPI 3.1 document, patterns that are ECMA-262 regular expressions matching
 * real values, examples that satisfy their schemas (that every status an operation answers is
 * documented: fuzz.test.ts), and a client generated from it (openapi-typescript
 * types, committed beside this file and checked to be current; openapi-fetch) that works.
 */
import { get } from 'node:http';
import { Validator } from '@seriousme/openapi-schema-validator';
import createClient from 'openapi-fetch';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ADMIN, basic, baseUrl, uniqueLogin } from '../harness/client.js';
import {
  createSchemaValidator,
  examplesOf,
  operationsOf,
  responseOf,
  schemasOf,
  type JsonObject,
} from '../harness/openapi-doc.js';
import type { components, paths } from './auth-api.js';

let doc: JsonObject;

/**
 * GET on a connection of its own, closed after the answer: the checks that follow keep the CPU
 * busy for seconds, and an idle pooled connection may meanwhile be closed by the host (wrangler
 * dev's proxy) just as the next request reuses it.
 */
function getOnce(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

beforeAll(async () => {
  const res = await getOnce(`${baseUrl()}/openapi.json`);
  expect(res.status).toBe(200);
  doc = JSON.parse(res.body) as JsonObject;
});

describe('the document', () => {
  it('is a valid OpenAPI 3.1 description', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has schemas that a JSON Schema 2020-12 validator compiles (strict)', () => {
    const compile = createSchemaValidator(doc);
    const roots = schemasOf(doc).filter((s) => !s.nested);
    expect(roots.length).toBeGreaterThan(50);
    for (const { where, schema } of roots) expect(() => compile(schema), where).not.toThrow();
  });

  it('names the mount as its server (paths below it) and its licence', () => {
    // Relative to the document's origin: the base path it is served under (ROOT_PATH).
    expect(doc.servers).toEqual([expect.objectContaining({ url: new URL(baseUrl()).pathname })]);
    expect(Object.keys(doc.paths as JsonObject)).toContain('/v3/login');
    expect((doc.info as JsonObject).license).toMatchObject({ name: expect.any(String) });
  });

  it('gives every operation a unique camelCase operationId', () => {
    const ids = operationsOf(doc).map(({ method, path, op }) => {
      expect(op.operationId, `${method.toUpperCase()} ${path}`).toMatch(/^[a-z][A-Za-z0-9]*$/);
      return op.operationId as string;
    });
    expect(ids.length).toBeGreaterThan(60);
    expect(new Set(ids).size).toBe(ids.length);
    // Stable names clients already call: renaming one breaks every generated client.
    const byRoute = Object.fromEntries(operationsOf(doc).map((o) => [`${o.method} ${o.path}`, o.op.operationId]));
    expect(byRoute).toMatchObject({
      'post /v3/login': 'login',
      'post /v3/login_without_session': 'loginWithoutSession',
      'get /v4/users': 'listUsers',
      'get /v4/users/me': 'getCurrentUser',
      'post /v4/users/{userId}/block': 'blockUser',
    });
  });

  it(
    'gives every operation a success answer: a 2xx, or the redirects of the OIDC flow and of the way back to ' +
      'a service',
    () => {
      // The one check Redocly's operation-2xx-response would make, with its exception (redocly.yaml).
      for (const { method, path, op } of operationsOf(doc)) {
        const success = Object.keys(op.responses as JsonObject).filter((s) => /^2/.test(s));
        if (path.startsWith('/v3/oidc/') || path === '/v4/authz/continue')
          expect(success, `${method} ${path}`).toEqual([]);
        else expect(success.length, `${method.toUpperCase()} ${path}`).toBeGreaterThan(0);
      }
    },
  );

  it('declares the security of every operation: none (`[]`) on the public ones', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      expect(Array.isArray(op.security), `${method.toUpperCase()} ${path}`).toBe(true);
    }
    const open = operationsOf(doc).filter((o) => (o.op.security as JsonObject[]).length === 0);
    expect(open.map((o) => `${o.method} ${o.path}`)).toEqual(
      expect.arrayContaining(['get /health/live', 'post /v3/login', 'post /v3/password_reset/request']),
    );
  });

  it("lists the API's Bearer scheme before the metrics one, last, each saying what it is for", () => {
    // Swagger UI's Authorize dialog shows the schemes in this order: a newcomer's API token goes in the first
    // "(http, Bearer)" box, which must be the API's (docs/api.md, "The interactive docs").
    const schemes = (doc.components as JsonObject).securitySchemes as Record<string, { description?: string }>;
    const names = Object.keys(schemes);
    expect(names.at(-1)).toBe('metricsToken');
    expect(names.indexOf('bearer')).toBe(0);
    expect(schemes.bearer!.description).toMatch(/^API token\b/);
    expect(schemes.bearer!.description).toContain('not the metrics token');
    expect(schemes.metricsToken!.description).toMatch(/^Metrics scrape token\b/);
    expect(schemes.metricsToken!.description).toContain('only GET /metrics');
    const descriptions = Object.values(schemes).map((x) => x.description);
    expect(new Set(descriptions).size).toBe(names.length);
  });

  it('documents the shared error responses of each operation from its shape', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      const at = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses as JsonObject).map(Number);
      expect(statuses, at).toContain(500);
      // The body limit bounds every request, also one to an operation that takes no body.
      expect(statuses, at).toContain(413);
      if (op.requestBody) expect(statuses, at).toEqual(expect.arrayContaining([400, 415]));
      const bodyTypes = Object.keys(
        ((op.requestBody as JsonObject | undefined)?.content as JsonObject | undefined) ?? {},
      );
      if (bodyTypes.some((t) => t.endsWith('json') || t.includes('form'))) expect(statuses, at).toContain(422);
      const params = (op.parameters as JsonObject[] | undefined) ?? [];
      if (params.length > 0) expect(statuses, at).toContain(422);
      if ((op.security as JsonObject[] | undefined)?.some((s) => Object.keys(s).length > 0)) {
        expect(statuses, at).toEqual(expect.arrayContaining([401, 403]));
      }
      // Each error answer names its media type (problem+json, or the OAuth shape of oauth_login).
      for (const s of statuses.filter((n) => n >= 400))
        expect(responseOf(doc, op, s)?.content, `${at} ${s}`).toBeDefined();
    }
  });
});

/** Values each pattern must accept and refuse (a pattern can also take its samples from its schema's example). */
const PATTERN_SAMPLES: Record<string, { valid: string[]; invalid: string[] }> = {
  // CreateUser.login: Unicode letters and digits, then also . _ @ -
  '^[\\p{L}\\p{Nd}][\\p{L}\\p{Nd}._@-]*$': {
    valid: ['alice', 'j.doe', 'José', 'Ünal_2', 'bob@example.com'],
    invalid: ['', '.alice', 'a b', 'a/b'],
  },
  // TOTP codes (docs/security-mfa.md)
  '^\\d{6}$': { valid: ['123456', '000000'], invalid: ['12345', '1234567', 'abcdef', ''] },
  // identity provider record names
  '^[a-z0-9][a-z0-9_-]{0,62}$': { valid: ['keycloak', 'corp-sso_2'], invalid: ['Keycloak', '-x', 'a b'] },
  '(^|\\s)openid(\\s|$)': {
    valid: ['openid', 'openid profile email', 'profile openid'],
    invalid: ['profile', 'openidx'],
  },
  // the identity header names of a protected service (docs/integration.md)
  '^[A-Za-z0-9-]{1,64}$': { valid: ['Remote-User', 'X-Auth-Request-Email'], invalid: ['', 'a b', 'X:Y', 'Ä'] },
  // LDAP server record names (X-LDAP-Name)
  '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$': { valid: ['corp', 'Corp.AD-1'], invalid: ['.corp', 'a b'] },
  '^[Ll][Dd][Aa][Pp][Ss]?:\\/\\/[^\\s/?#]+\\/?$': {
    valid: ['ldaps://ldap.example.com', 'ldap://10.0.0.5:389/', 'LDAPS://DC1.corp.local:636'],
    invalid: ['http://ldap.example.com', 'ldaps://host/dc=corp', 'ldap:// host'],
  },
  // WebAuthn responses (passkeys): base64url, padded or not
  '^[A-Za-z0-9_-]*={0,2}$': {
    valid: ['', 'AAAA', 'q83vEjRWeJA', 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0=='],
    invalid: ['a+b', 'a/b', 'a b', 'A==='],
  },
  '-----BEGIN CERTIFICATE-----[\\s\\S]+-----END CERTIFICATE-----': {
    valid: ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'],
    invalid: ['MIIB'],
  },
  '^\\([\\s\\S]*\\)$': { valid: ['(uid={login})', '(&(objectClass=person)\n(uid={login}))'], invalid: ['uid={login}'] },
  '^[A-Za-z][A-Za-z0-9-]{0,63}$': { valid: ['uid', 'sAMAccountName', 'mail'], invalid: ['1uid', 'a_b'] },
};

describe('statuses answered', () => {
  it('documents the 405 of a path parameter sent as a dot segment, which reaches another path', async () => {
    const admin = { Authorization: basic(ADMIN.login, ADMIN.password) };
    // fetch resolves the dot segment: POST /v4/users/block, which GET /v4/users/{userId} fits.
    const res = await fetch(`${baseUrl()}/v4/users/./block`, { method: 'POST', headers: admin });
    expect(res.status).toBe(405);
    expect(res.headers.get('Allow')).toContain('GET');
    const paths = doc.paths as Record<string, Record<string, JsonObject>>;
    expect(responseOf(doc, paths['/v4/users/{userId}/block']!.post!, 405)?.content).toBeDefined();
    expect(responseOf(doc, paths['/v3/settings/ldap-servers/{name}/test']!.post!, 405)).toBeDefined();
    // Where no other path is reached, no 405 is documented.
    expect(responseOf(doc, paths['/v4/users/{userId}']!.get!, 405)).toBeUndefined();
  });
});

describe('patterns', () => {
  it('are ECMA-262 regular expressions (u flag) that accept real values', () => {
    const sites = schemasOf(doc).filter((s) => typeof s.schema.pattern === 'string');
    expect(sites.length).toBeGreaterThan(0);
    for (const { where, schema } of sites) {
      const pattern = schema.pattern as string;
      let re: RegExp | undefined;
      expect(() => (re = new RegExp(pattern, 'u')), `${where}: ${pattern}`).not.toThrow();
      const samples = PATTERN_SAMPLES[pattern] ?? { valid: [], invalid: [] };
      const valid = [...samples.valid, ...(typeof schema.example === 'string' ? [schema.example] : [])];
      expect(valid.length, `${where}: add valid samples of ${pattern} to PATTERN_SAMPLES`).toBeGreaterThan(0);
      for (const v of valid) expect(re!.test(v), `${where}: ${pattern} accepts ${JSON.stringify(v)}`).toBe(true);
      for (const v of samples.invalid)
        expect(re!.test(v), `${where}: ${pattern} refuses ${JSON.stringify(v)}`).toBe(false);
    }
  });

  it('the login pattern accepts alice', () => {
    const login = ((doc.components as JsonObject).schemas as JsonObject).CreateUser as JsonObject;
    const pattern = ((login.properties as JsonObject).login as JsonObject).pattern as string;
    expect(new RegExp(pattern, 'u').test('alice')).toBe(true);
  });
});

describe('examples', () => {
  it('each documented example, default and examples entry satisfies its schema', () => {
    const compile = createSchemaValidator(doc);
    const sites = examplesOf(doc);
    for (const { where, value, schema } of sites) {
      const check = compile(schema);
      expect(check(value) ? [] : check.errors, where).toEqual([]);
    }
  });

  it('the main operations carry request and answer examples', () => {
    const paths = doc.paths as Record<string, Record<string, JsonObject>>;
    const media = (method: string, path: string, where: 'request' | number, type = 'application/json') => {
      const op = paths[path]![method]!;
      const content =
        where === 'request' ? (op.requestBody as JsonObject).content : responseOf(doc, op, where)!.content;
      return (content as JsonObject)[type] as JsonObject;
    };
    const withExamples: [string, string, ('request' | number)[]][] = [
      ['post', '/v4/users', ['request', 201, 422]],
      ['patch', '/v3/settings', ['request', 200, 422]],
      ['post', '/v3/login', ['request', 200]],
      ['put', '/v4/users/me/password', ['request', 422]],
      ['post', '/v4/users/me/tokens', ['request', 201]],
    ];
    for (const [method, path, places] of withExamples) {
      for (const where of places) {
        const type = typeof where === 'number' && where >= 400 ? 'application/problem+json' : 'application/json';
        expect(media(method, path, where, type).example, `${method} ${path} ${where}`).toBeDefined();
      }
    }
    expect((media('patch', '/v3/settings', 'request').example as JsonObject).values).toBeDefined();
  });
});

describe('a client generated from the description', () => {
  /** A client as generated code uses it: the served `servers` entry on the host's origin as its base URL. */
  const clientFor = (headers: Record<string, string> = {}) =>
    createClient<paths>({
      baseUrl: new URL((doc.servers as JsonObject[])[0]!.url as string, baseUrl()).href,
      headers,
    });

  it('logs in with a session (POST /v3/login) and lists users (GET /v4/users) with its cookie', async () => {
    const client = clientFor();
    const login = await client.POST('/v3/login', { body: { login: ADMIN.login, password: ADMIN.password } });
    expect(login.response.status).toBe(200);
    expectTypeOf(login.data).not.toBeAny();
    expect(login.data?.user.login).toBe(ADMIN.login);
    const cookie = login.response.headers.getSetCookie().map((c) => c.split(';')[0]!);
    expect(cookie.length).toBeGreaterThan(0);

    const listed = await client.GET('/v4/users', {
      params: { query: { limit: 5 } },
      headers: { Cookie: cookie.join('; ') },
    });
    expect(listed.response.status).toBe(200);
    expectTypeOf(listed.data).not.toBeAny();
    expect(listed.data?.items.length).toBeGreaterThan(0);
    expect(listed.data?.items.length).toBeLessThanOrEqual(5);
    expect(listed.data?.items.every((u) => typeof u.login === 'string')).toBe(true);

    // A wrong password: the typed problem of the documented 401.
    const refused = await client.POST('/v3/login', { body: { login: ADMIN.login, password: 'Wr0ng$password' } });
    expect(refused.response.status).toBe(401);
    expect(refused.error?.code).toBe('INVALID_CREDENTIALS');
  });

  it('creates a user, reads it, and gets a 422 typed as a problem', async () => {
    const client = clientFor({ Authorization: basic(ADMIN.login, ADMIN.password) });
    const login = uniqueLogin('oa');
    const created = await client.POST('/v4/users', {
      body: { login, password: 'Chang3$me', displayName: 'Open API' },
    });
    expect(created.response.status).toBe(201);
    expectTypeOf(created.data).toEqualTypeOf<components['schemas']['User'] | undefined>();
    expect(created.data?.login).toBe(login);

    const read = await client.GET('/v4/users/{userId}', { params: { path: { userId: created.data!.id } } });
    expect(read.response.status).toBe(200);
    expect(read.data).toEqual(created.data);

    const refused = await client.POST('/v4/users', { body: { login: 'not a login', password: 'Chang3$me' } });
    expect(refused.response.status).toBe(422);
    // The error is typed as the problem shape, both ways assignable (not unknown, not any).
    type Problem = components['schemas']['Problem'];
    expectTypeOf(refused.error).toExtend<Problem | undefined>();
    expectTypeOf<Problem | undefined>().toExtend<typeof refused.error>();
    expectTypeOf(refused.error).not.toBeAny();
    expect(refused.error?.code).toBe('VALIDATION');
    expect(refused.error?.errors?.map((e) => e.path)).toEqual(['login']);

    // @ts-expect-error: the description requires a login, so the generated client does too.
    const _unsent = () => client.POST('/v4/users', { body: { password: 'Chang3$me' } });
    // A password is optional (without one, the welcome mail links to choosing it): typed so.
    expectTypeOf<{ login: string; email: string }>().toExtend<components['schemas']['CreateUser']>();
  });

  it('sends a typed JSON body to PATCH /v3/settings and reads the typed answer', async () => {
    const client = clientFor({ Authorization: basic(ADMIN.login, ADMIN.password) });
    const current = await client.GET('/v3/settings');
    const before = current.data?.items.find((s) => s.name === 'AUTH_FAILED_COUNT')?.value;
    expect(typeof before).toBe('number');
    const changed = await client.PATCH('/v3/settings', {
      body: { values: { AUTH_FAILED_COUNT: before as number } },
    });
    expect(changed.response.status).toBe(200);
    expect(changed.data?.items.find((s) => s.name === 'AUTH_FAILED_COUNT')?.value).toBe(before);
    // Back to the environment's value, as other suites expect.
    const reset = await client.DELETE('/v3/settings/{name}', {
      params: { path: { name: 'AUTH_FAILED_COUNT' } },
    });
    expect(reset.response.status).toBe(200);
  });
});

// Last: generating takes CPU for a while, and no request follows it.
describe('the generated client types', () => {
  it('has generated types, and they are current (npm run openapi:types regenerates them)', async () => {
    // defaultNonNullable off: a request field with a default stays optional (the service fills it in).
    const types = astToString(
      await openapiTS(structuredClone(doc) as unknown as OpenAPI3, { defaultNonNullable: false }),
    );
    await expect(
      `// Generated by openapi-typescript from GET /api/auth/openapi.json: npm run openapi:types\n${types}`,
    ).toMatchFileSnapshot('./auth-api.d.ts');
  });
});

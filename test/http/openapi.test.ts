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

  it('documents the shared error responses of each operation from its shape', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      const at = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses as JsonObject).map(Number);
      expect(statuses, at).toContain(500);
      if (op.requestBody) expect(statuses, at).toEqual(expect.arrayContaining([400, 413, 415]));
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
  // LDAP server record names (X-LDAP-Name)
  '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$': { valid: ['corp', 'Corp.AD-1'], invalid: ['.corp', 'a b'] },
  '^[Ll][Dd][Aa][Pp][Ss]?:\\/\\/[^\\s/?#]+\\/?$': {
    valid: ['ldaps://ldap.example.com', 'ldap://10.0.0.5:389/', 'LDAPS://DC1.corp.local:636'],
    invalid: ['http://ldap.example.com', 'ldaps://host/dc=corp', 'ldap:// host'],
  },
  '-----BEGIN CERTIFICATE-----[\\s\\S]+-----END CERTIFICATE-----': {
    valid: ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'],
    invalid: ['MIIB'],
  },
  '^\\([\\s\\S]*\\)$': { valid: ['(uid={login})', '(&(objectClass=person)\n(uid={login}))'], invalid: ['uid={login}'] },
  '^[A-Za-z][A-Za-z0-9-]{0,63}$': { valid: ['uid', 'sAMAccountName', 'mail'], invalid: ['1uid', 'a_b'] },
};

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
    const root = new URL(baseUrl()).pathname;
    const media = (method: string, path: string, where: 'request' | number, type = 'application/json') => {
      const op = paths[`${root}${path}`]![method]!;
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
  it('creates a user, reads it, and gets a 422 typed as a problem', async () => {
    const client = createClient<paths>({
      baseUrl: new URL(baseUrl()).origin,
      headers: { Authorization: basic(ADMIN.login, ADMIN.password) },
    });
    const login = uniqueLogin('oa');
    const created = await client.POST('/api/auth/v4/users', {
      body: { login, password: 'Chang3$me', displayName: 'Open API' },
    });
    expect(created.response.status).toBe(201);
    expectTypeOf(created.data).toEqualTypeOf<components['schemas']['User'] | undefined>();
    expect(created.data?.login).toBe(login);

    const read = await client.GET('/api/auth/v4/users/{userId}', { params: { path: { userId: created.data!.id } } });
    expect(read.response.status).toBe(200);
    expect(read.data).toEqual(created.data);

    const refused = await client.POST('/api/auth/v4/users', { body: { login: 'not a login', password: 'Chang3$me' } });
    expect(refused.response.status).toBe(422);
    // The error is typed as the problem shape, both ways assignable (not unknown, not any).
    type Problem = components['schemas']['Problem'];
    expectTypeOf(refused.error).toExtend<Problem | undefined>();
    expectTypeOf<Problem | undefined>().toExtend<typeof refused.error>();
    expectTypeOf(refused.error).not.toBeAny();
    expect(refused.error?.code).toBe('VALIDATION');
    expect(refused.error?.errors?.map((e) => e.path)).toEqual(['login']);

    // @ts-expect-error: the description requires a password, so the generated client does too.
    const _unsent = () => client.POST('/api/auth/v4/users', { body: { login } });
  });

  it('sends a typed JSON body to PATCH /v3/settings and reads the typed answer', async () => {
    const client = createClient<paths>({
      baseUrl: new URL(baseUrl()).origin,
      headers: { Authorization: basic(ADMIN.login, ADMIN.password) },
    });
    const current = await client.GET('/api/auth/v3/settings');
    const before = current.data?.items.find((s) => s.name === 'AUTH_FAILED_COUNT')?.value;
    expect(typeof before).toBe('number');
    const changed = await client.PATCH('/api/auth/v3/settings', {
      body: { values: { AUTH_FAILED_COUNT: before as number } },
    });
    expect(changed.response.status).toBe(200);
    expect(changed.data?.items.find((s) => s.name === 'AUTH_FAILED_COUNT')?.value).toBe(before);
    // Back to the environment's value, as other suites expect.
    const reset = await client.DELETE('/api/auth/v3/settings/{name}', {
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

/**
 * Examples of requests and answers, added to the OpenAPI document when it is built (shown by the
 * docs page, used by generated clients' tooling). test/http/openapi.test.ts validates each against
 * its schema, so an example cannot drift from what the service accepts and answers.
 */
import type { ApiDocument, MediaTypeEntry } from './document.js';
import { problemType } from '../../../schema/bridge/problem-type.js';

/** Examples of one operation: its request body by media type, its answers by status. */
interface OperationExamples {
  request?: Record<string, unknown>;
  responses?: Record<number, unknown>;
}

const AT = '2026-01-05T09:30:00.000Z';

const USER = {
  id: '0618abdf-e9ef-4019-8263-57da852f4ac9',
  login: 'j.doe',
  displayName: 'Jane Doe',
  email: 'jane.doe@example.com',
  role: 'user',
  source: 'local',
  kind: 'person',
  sourceName: null,
  status: 'active',
  blockedReason: null,
  lockedUntil: null,
  passwordChangedAt: AT,
  passwordExpiresAt: '2026-03-06T09:30:00.000Z',
  mustChangePassword: false,
  lastLoginAt: null,
  sessionLimit: null,
  superAccessUntil: null,
  groups: [{ name: 'developers', source: 'local' }],
  language: 'en',
  createdAt: AT,
  updatedAt: AT,
};

/** A problem body as the service renders it. */
function problem(code: string, status: number, title: string, path: string, extra: Record<string, unknown>) {
  return {
    type: problemType(code),
    title,
    status,
    ...extra,
    instance: `/api/auth${path}`,
    code,
    requestId: '1e0c106b-9663-4f55-bd34-7406e579c822',
  };
}

/** Examples by operation: 'METHOD /path', the path below ROOT_PATH. */
export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  'POST /v4/users': {
    request: {
      'application/json': {
        login: 'j.doe',
        password: 'Chang3$me',
        displayName: 'Jane Doe',
        email: 'jane.doe@example.com',
        role: 'user',
      },
    },
    responses: {
      201: USER,
      422: problem('VALIDATION', 422, 'Validation failed', '/v4/users', {
        detail: 'json.login: letters, digits and . _ - @, starting with a letter or digit',
        errors: [
          { location: 'json', path: 'login', message: 'letters, digits and . _ - @, starting with a letter or digit' },
        ],
      }),
    },
  },
  'PATCH /v3/settings': {
    request: { 'application/json': { values: { AUTH_FAILED_COUNT: 5, USER_PASSWORD_MIN_LENGTH: '10' } } },
    responses: {
      200: {
        items: [
          {
            name: 'AUTH_FAILED_COUNT',
            env: 'AUTH_FAILED_COUNT',
            group: 'Security',
            type: 'integer',
            value: 5,
            default: 3,
            source: 'ui',
            accepted: 'integer in 1..100',
            min: 1,
            max: 100,
            secret: false,
            restartRequired: false,
            description: 'number of failed attempts after which a restriction applies',
          },
        ],
      },
      422: problem('VALIDATION', 422, 'Validation failed', '/v3/settings', {
        detail: 'values.AUTH_FAILED_COUNT: expected integer in 1..100, received "0"',
        errors: [
          { location: 'json', path: 'values.AUTH_FAILED_COUNT', message: 'expected integer in 1..100, received "0"' },
        ],
      }),
    },
  },
  'POST /v3/login': {
    request: {
      'application/json': { login: 'j.doe', password: 'Chang3$me' },
      'application/x-www-form-urlencoded': { login: 'j.doe', password: 'Chang3$me', next: '/app/' },
    },
    responses: {
      200: { user: { ...USER, lastLoginAt: AT }, expiresAt: '2026-01-06T09:30:00.000Z' },
      401: problem('INVALID_CREDENTIALS', 401, 'Invalid credentials', '/v3/login', {
        detail: 'wrong login or password',
      }),
    },
  },
  'PUT /v4/users/me/password': {
    request: { 'application/json': { oldPassword: 'Chang3$me', newPassword: 'N3w$ecret' } },
    responses: {
      422: problem('PASSWORD_POLICY', 422, 'Password refused by the password policy', '/v4/users/me/password', {
        detail: 'at least 8 characters; at least 1 digit',
        violations: [
          { rule: 'min_length', required: 8, actual: 5, message: 'at least 8 characters' },
          { rule: 'digit_min', required: 1, actual: 0, message: 'at least 1 digit' },
        ],
      }),
    },
  },
  'POST /v4/users/me/tokens': {
    request: {
      'application/json': { name: 'ci-pipeline', expiresInDays: 90, scopes: ['account:read'], audiences: ['srm'] },
    },
    responses: {
      201: {
        id: '97bef43d-f537-4aab-b499-6bcea9500274',
        name: 'ci-pipeline',
        prefix: 'ast_lvgl0RQw',
        createdAt: AT,
        lastUsedAt: null,
        lastUsedIp: null,
        expiresAt: '2026-04-05T09:30:00.000Z',
        scopes: ['account:read'],
        audiences: ['srm'],
        token: 'ast_lvgl0RQwhBv6J0OlefIrE156y8t-4jV-cG0H8pi7tOI',
      },
    },
  },
};

/** The one media type of a response (examples go there), or an error naming where. */
function onlyMediaType(content: Record<string, MediaTypeEntry> | undefined, where: string): MediaTypeEntry {
  const types = Object.values(content ?? {});
  if (types.length !== 1) throw new Error(`${where}: an example needs exactly one media type, found ${types.length}`);
  return types[0]!;
}

/** Adds OPERATION_EXAMPLES to the document (amends `doc`); throws when an example has no place. */
export function addExamples<D extends ApiDocument>(doc: D): D {
  for (const [key, examples] of Object.entries(OPERATION_EXAMPLES)) {
    const [method, path] = key.split(' ') as [string, string];
    const op = doc.paths?.[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`example for ${key}: no such operation`);
    for (const [type, example] of Object.entries(examples.request ?? {})) {
      const media = op.requestBody?.content?.[type];
      if (!media) throw new Error(`example for ${key}: no request body of type ${type}`);
      media.example = example;
    }
    for (const [status, example] of Object.entries(examples.responses ?? {})) {
      const response = op.responses?.[status];
      if (!response || '$ref' in response) throw new Error(`example for ${key} ${status}: no inline response`);
      onlyMediaType(response.content, `${key} ${status}`).example = example;
    }
  }
  return doc;
}

import { describe, expect, it } from 'vitest';
import type { ApiDocument } from './document.js';
import { addSharedResponses, sharedStatuses } from './shared-responses.js';

describe('sharedStatuses', () => {
  it('every operation: 500', () => {
    expect(sharedStatuses({})).toEqual([500]);
  });

  it('a JSON or form body: 400, 413, 415, 422', () => {
    expect(sharedStatuses({ requestBody: { content: { 'application/json': {} } } })).toEqual([400, 413, 415, 422, 500]);
    expect(sharedStatuses({ requestBody: { content: { 'application/x-www-form-urlencoded': {} } } })).toEqual([
      400, 413, 415, 422, 500,
    ]);
  });

  it('a body the route does not validate by a schema (text, binary): no 422', () => {
    expect(sharedStatuses({ requestBody: { content: { 'text/plain': {} } } })).toEqual([400, 413, 415, 500]);
  });

  it('declared parameters (path, query, header): 422', () => {
    expect(sharedStatuses({ parameters: [{ in: 'path', name: 'id' }] })).toEqual([422, 500]);
    expect(sharedStatuses({ parameters: [{ in: 'query', name: 'q' }] })).toEqual([422, 500]);
    expect(sharedStatuses({ parameters: [{ in: 'header', name: 'X-LDAP-Name' }] })).toEqual([422, 500]);
    expect(sharedStatuses({ parameters: [] })).toEqual([500]);
  });

  it('security: 401 and 403, and 429 with Basic (a password login); `security: []` is none', () => {
    expect(sharedStatuses({ security: [{ basic: [] }, { bearer: [] }] })).toEqual([401, 403, 429, 500]);
    expect(sharedStatuses({ security: [{ bearer: [] }] })).toEqual([401, 403, 500]);
    expect(sharedStatuses({ security: [] })).toEqual([500]);
  });
});

describe('addSharedResponses', () => {
  it('adds references to components.responses and keeps what the route declared', () => {
    const routeOwn = { description: "the route's own 422", content: {} };
    const doc: ApiDocument = {
      paths: {
        '/x/{id}': {
          patch: {
            parameters: [{ in: 'path', name: 'id' }],
            requestBody: { content: { 'application/json': {} } },
            responses: { 200: { description: 'ok' }, 422: routeOwn },
          },
        },
      },
    };
    addSharedResponses(doc);
    const responses = doc.paths!['/x/{id}']!.patch!.responses!;
    expect(Object.keys(responses)).toEqual(['200', '400', '413', '415', '422', '500']);
    expect(responses['422']).toBe(routeOwn);
    expect(responses['415']).toEqual({ $ref: '#/components/responses/UnsupportedMediaType' });
    const shared = doc.components!.responses!.UnsupportedMediaType as { content: Record<string, unknown> };
    expect(Object.keys(shared.content)).toEqual(['application/problem+json']);
  });
});

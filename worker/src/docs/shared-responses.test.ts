import { describe, expect, it } from 'vitest';
import type { ApiDocument } from './document.js';
import { addSharedResponses, sharedStatuses } from './shared-responses.js';

describe('sharedStatuses', () => {
  it(
    'every operation: 413 and 422 (the body limit bounds any request, with a body or without, and the ' +
      'nesting of a JSON one) and 500',
    () => {
      expect(sharedStatuses({})).toEqual([413, 422, 500]);
    },
  );

  it('a path that reads its body itself (the Sentry tunnel): no 422 of the nesting bound', () => {
    expect(sharedStatuses({}, true)).toEqual([413, 500]);
    expect(sharedStatuses({ requestBody: { content: { 'text/plain': {} } } }, true)).toEqual([400, 413, 415, 500]);
  });

  it('a JSON or form body: 400, 413, 415, 422', () => {
    expect(sharedStatuses({ requestBody: { content: { 'application/json': {} } } })).toEqual([400, 413, 415, 422, 500]);
    expect(sharedStatuses({ requestBody: { content: { 'application/x-www-form-urlencoded': {} } } })).toEqual([
      400, 413, 415, 422, 500,
    ]);
  });

  it('a body the route does not validate by a schema (text, binary): 422 of the nesting bound only', () => {
    expect(sharedStatuses({ requestBody: { content: { 'text/plain': {} } } })).toEqual([400, 413, 415, 422, 500]);
  });

  it('declared parameters (path, query, header): 422', () => {
    expect(sharedStatuses({ parameters: [{ in: 'path', name: 'id' }] })).toEqual([413, 422, 500]);
    expect(sharedStatuses({ parameters: [{ in: 'query', name: 'q' }] })).toEqual([413, 422, 500]);
    expect(sharedStatuses({ parameters: [{ in: 'header', name: 'X-LDAP-Name' }] })).toEqual([413, 422, 500]);
    expect(sharedStatuses({ parameters: [] })).toEqual([413, 422, 500]);
  });

  it('security: 401 and 403, and 429 with Basic (a password login); `security: []` is none', () => {
    expect(sharedStatuses({ security: [{ basic: [] }, { bearer: [] }] })).toEqual([401, 403, 413, 422, 429, 500]);
    expect(sharedStatuses({ security: [{ bearer: [] }] })).toEqual([401, 403, 413, 422, 500]);
    expect(sharedStatuses({ security: [] })).toEqual([413, 422, 500]);
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

describe('addSharedResponses: statuses that depend on the other paths', () => {
  const ok = { 200: { description: 'ok' } };
  const doc = (): ApiDocument => ({
    paths: {
      '/users/{id}': { get: { responses: { ...ok } } },
      '/users/{id}/block': { post: { responses: { ...ok } } },
      '/users/{id}/tokens': { get: { responses: { ...ok } } },
      '/users/{id}/tokens/{tokenId}': { delete: { responses: { ...ok } } },
      '/v3/sentry-tunnel': { post: { responses: { ...ok, 413: { description: 'generic' } } } },
    },
  });

  it('405 where a dot-segment parameter reaches another path without the method', () => {
    const d = addSharedResponses(doc());
    // POST /users/./block is POST /users/block, which only GET /users/{id} fits.
    expect(d.paths!['/users/{id}/block']!.post!.responses!['405']).toEqual({
      $ref: '#/components/responses/MethodNotAllowed',
    });
    // A last dot segment leaves a trailing slash that no path takes (404, not 405); `..` on tokenId
    // reaches /users/{id}/ likewise, and `.` on id reaches /users/tokens/{tokenId}, which nothing fits.
    expect(d.paths!['/users/{id}']!.get!.responses!['405']).toBeUndefined();
    expect(d.paths!['/users/{id}/tokens/{tokenId}']!.delete!.responses!['405']).toBeUndefined();
    // GET /users/./tokens is GET /users/tokens, which GET /users/{id} takes.
    expect(d.paths!['/users/{id}/tokens']!.get!.responses!['405']).toBeUndefined();
  });

  it('a path that bounds its body itself documents its own limit in its 413', () => {
    const d = addSharedResponses(doc());
    const own = d.paths!['/v3/sentry-tunnel']!.post!.responses!['413'] as { description: string };
    expect(own.description).toContain('FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE');
    const other = d.paths!['/users/{id}']!.get!.responses!['413'];
    expect(other).toEqual({ $ref: '#/components/responses/PayloadTooLarge' });
  });
});

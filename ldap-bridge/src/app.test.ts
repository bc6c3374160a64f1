import { describe, expect, it } from 'vitest';
import { buildBridge } from './app.js';

describe('bridge skeleton', () => {
  it('answers its health endpoint and problem+json for unknown paths', async () => {
    const app = buildBridge({ version: '9.9.9' });
    const health = await app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok', service: 'ldap-bridge', version: '9.9.9' });
    const missing = await app.inject({ method: 'GET', url: '/ldap/bind?x=1' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(missing.json().detail).toBe('no endpoint at /ldap/bind');
    await app.close();
  });

  it('answers every failure of every route as problem+json: malformed JSON, wrong content type, bad body', async () => {
    const app = buildBridge();
    await app.ready();
    const routes = app.printRoutes({ commonPrefix: false });
    const posts = [
      '/v1/ldap/authenticate',
      '/v1/ldap/test',
      '/v1/errtrack/relay',
      '/v1/logstore/bulk',
      '/v1/logstore/query',
    ];
    for (const url of posts) {
      expect(routes, url).toContain(url);
      const cases = [
        { headers: { 'content-type': 'application/json' }, payload: '{"oops": ', status: 400 },
        { headers: { 'content-type': 'application/xml' }, payload: '<x/>', status: 415 },
        { headers: { 'content-type': 'application/json' }, payload: '{"unexpected": true}', status: 400 },
      ];
      for (const c of cases) {
        const res = await app.inject({ method: 'POST', url, headers: c.headers, payload: c.payload });
        expect(res.statusCode, `${url} ${c.payload}`).toBe(c.status);
        expect(res.headers['content-type'], `${url} ${c.payload}`).toMatch(/application\/problem\+json/);
        expect(res.json(), url).toMatchObject({ status: c.status, code: 'BAD_REQUEST' });
      }
    }
    await app.close();
  });
});

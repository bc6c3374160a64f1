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
});

import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import type { AppDeps, AppEnv } from './context.js';
import { clientIp } from './forwarded.js';

/** A tiny app whose only route answers clientIp(c), on a host with `peer` and AUTH_TRUSTED_PROXIES. */
function appWith(o: { proxies?: string; peer?: string; edge?: string }) {
  const env = parseEnvironment({ AUTH_TRUSTED_PROXIES: o.proxies ?? '' });
  const deps = {
    config: { env },
    ...(o.peer !== undefined ? { peerAddress: () => o.peer } : {}),
    ...(o.edge !== undefined ? { clientAddress: () => o.edge } : {}),
  } as unknown as AppDeps;
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    c.set('deps', deps);
    await next();
  });
  app.get('/ip', (c) => c.text(String(clientIp(c))));
  return async (xff?: string) => (await app.request('/ip', { headers: xff ? { 'X-Forwarded-For': xff } : {} })).text();
}

describe('clientIp', () => {
  it('Node: the socket peer; a client’s own X-Forwarded-For is never believed', async () => {
    const ip = appWith({ peer: '198.51.100.7' });
    expect(await ip()).toBe('198.51.100.7');
    expect(await ip('10.9.9.9')).toBe('198.51.100.7');
    const notTrusted = appWith({ peer: '198.51.100.7', proxies: '10.0.0.0/8' });
    expect(await notTrusted('10.9.9.9')).toBe('198.51.100.7');
  });

  it('Node behind trusted proxies: the last address of X-Forwarded-For that is not a trusted proxy', async () => {
    const ip = appWith({ peer: '10.0.0.2', proxies: '10.0.0.0/8, 192.0.2.1' });
    // A client forged the first entry; the proxies appended the real client and each other.
    expect(await ip('1.1.1.1, 203.0.113.9, 192.0.2.1, 10.0.0.3')).toBe('203.0.113.9');
    expect(await ip('203.0.113.9')).toBe('203.0.113.9');
    // Only proxies in the chain: the farthest one; no header: the peer.
    expect(await ip('10.0.0.4, 10.0.0.3')).toBe('10.0.0.4');
    expect(await ip()).toBe('10.0.0.2');
  });

  it('edge: what the host reports (CF-Connecting-IP); null when it cannot tell', async () => {
    expect(await appWith({ edge: '203.0.113.5', proxies: '0.0.0.0/0' })('1.2.3.4')).toBe('203.0.113.5');
    expect(await appWith({})()).toBe('null');
  });
});

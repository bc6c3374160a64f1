/** SESSION_SECRET_KEY rotation and the generated key, each on its own host of the suite's kind. */
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import { ADMIN } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const PREVIOUS = 'previous-session-key-0123456789abcdefghij';
const CURRENT = 'current-session-key-0123456789abcdefghijk';

const sign = (claims: Record<string, unknown>, key: string) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setAudience('auth-session')
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(key));

describe('session keys', () => {
  let rotated: RunningHost;
  let generated: RunningHost;
  beforeAll(async () => {
    [rotated, generated] = await Promise.all([
      startTestHost(kind, { SESSION_SECRET_KEY: CURRENT, SESSION_SECRET_KEY_PREVIOUS: PREVIOUS }),
      startTestHost(kind, { SESSION_SECRET_KEY: '' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([rotated?.stop(), generated?.stop()]);
  });

  it(
    'rotation: new cookies are signed with the current key; the previous key still verifies; others do ' + 'not',
    async () => {
      const b = new Browser(rotated.origin);
      expect((await b.postJson(`${rotated.url}/v3/login`, ADMIN)).status).toBe(200);
      const value = (await b.cookie(`${rotated.url}/v4/users/me`, 'auth_session'))!;
      const claims = decodeJwt(value);
      const me = (token: string) =>
        fetch(`${rotated.url}/v4/users/me`, { headers: { Cookie: `auth_session=${token}` } });
      expect((await me(value)).status).toBe(200);
      expect((await me(await sign({ sid: claims.sid, sub: claims.sub }, CURRENT))).status).toBe(200);
      expect((await me(await sign({ sid: claims.sid, sub: claims.sub }, PREVIOUS))).status).toBe(200);
      expect(
        (await me(await sign({ sid: claims.sid, sub: claims.sub }, 'unknown-key-0123456789abcdefghijklmnop'))).status,
      ).toBe(401);
    },
  );

  it('without SESSION_SECRET_KEY a key is generated and sessions work across requests', async () => {
    const b = new Browser(generated.origin);
    expect((await b.postJson(`${generated.url}/v3/login`, ADMIN)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await b.fetch(`${generated.url}/v4/users/me`)).status).toBe(200);
  });
});

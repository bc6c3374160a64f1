import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import type { Db } from '../store/index.js';
import { nodeHmacSha256 } from '../../node/host.js';
import { sessionKeyResolver, signClaims, verifyClaims, type HmacSha256 } from './session-keys.js';

// The Node host's own HMAC, as it runs.
const nodeHmac = nodeHmacSha256;

async function keysOf(secret: string, hmac?: HmacSha256) {
  // With SESSION_SECRET_KEY set, no database is read.
  return sessionKeyResolver(parseEnvironment({ SESSION_SECRET_KEY: secret }), hmac)(undefined as unknown as Db);
}

describe('signClaims with the host synchronous HMAC', () => {
  afterEach(() => vi.useRealTimers());

  it("makes, byte for byte, jose's token for the same claims and second", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 10, 29, 12, 0, 0, 700));
    const withJose = await keysOf('a-session-secret-of-some-length-0123');
    const withHost = await keysOf('a-session-secret-of-some-length-0123', nodeHmac);
    expect(withJose.signNow).toBeUndefined();
    expect(withHost.signNow).toBeTypeOf('function');
    const claims = { sid: 'Zk3-session_id', sub: 'user-1', did: 'é€😀' };
    const expiresAt = Date.UTC(2026, 11, 29, 12, 0, 0, 999);
    const host = await signClaims(withHost, claims, expiresAt, 'auth-session');
    expect(host).toBe(await signClaims(withJose, claims, expiresAt, 'auth-session'));
    // jose verifies it (another keys object: nothing remembered from the signing).
    const verified = await verifyClaims(withJose, host, 'auth-session', Date.now());
    expect(verified).toMatchObject({ ...claims, aud: 'auth-session', exp: Math.floor(expiresAt / 1000) });
  });

  it('is refused under another key, another audience, or with one character changed', async () => {
    const keys = await keysOf('a-session-secret-of-some-length-0123', nodeHmac);
    const token = await signClaims(keys, { sid: 's1', sub: 'u1' }, Date.now() + 60_000, 'auth-session');
    const other = await keysOf('another-session-secret-of-some-length');
    expect(await verifyClaims(other, token, 'auth-session', Date.now())).toBeUndefined();
    const fresh = await keysOf('a-session-secret-of-some-length-0123');
    expect(await verifyClaims(fresh, token, 'auth-device', Date.now())).toBeUndefined();
    const last = token.at(-2) === 'A' ? 'B' : 'A';
    const tampered = `${token.slice(0, -2)}${last}${token.at(-1)}`;
    expect(await verifyClaims(fresh, tampered, 'auth-session', Date.now())).toBeUndefined();
    expect(await verifyClaims(fresh, token, 'auth-session', Date.now())).toMatchObject({ sid: 's1', sub: 'u1' });
  });

  it("remembers as verified only the tokens it is asked to (a session's), under the same keys", async () => {
    // A signer whose key differs from the verifying one: only a remembered token can pass.
    const verifying = await keysOf('the-verifying-secret-of-some-length-01');
    const keys = { ...verifying, signNow: nodeHmac(new TextEncoder().encode('a-different-signing-secret-0123456')) };
    const expiresAt = Date.now() + 60_000;
    const remembered = await signClaims(keys, { sid: 's2', sub: 'u2' }, expiresAt, 'auth-session', { remember: true });
    const notRemembered = await signClaims(keys, { sid: 's3', sub: 'u3' }, expiresAt, 'auth-session');
    expect(await verifyClaims(keys, remembered, 'auth-session', Date.now())).toMatchObject({ sid: 's2' });
    expect(await verifyClaims(keys, notRemembered, 'auth-session', Date.now())).toBeUndefined();
    // Another audience, or past its end, is refused even when remembered.
    expect(await verifyClaims(keys, remembered, 'auth-device', Date.now())).toBeUndefined();
    expect(await verifyClaims(keys, remembered, 'auth-session', expiresAt + 1_000)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import { openSecret, resealIfStale, sealSecret } from './secret-box.js';

const config = (env: Record<string, string>) => parseEnvironment(env);
const A = config({ AUTH_SECRETS_ENCRYPTION_KEY: 'a-secret-encryption-key-0123456789abcdef' });
const B = config({ AUTH_SECRETS_ENCRYPTION_KEY: 'another-encryption-key-0123456789abcdef' });

describe('secret box', () => {
  it('round-trips, with a fresh IV each time, and the plain text nowhere in the stored value', async () => {
    const one = await sealSecret(A, 'client-secret-value');
    const two = await sealSecret(A, 'client-secret-value');
    expect(one).not.toBe(two);
    expect(one).not.toContain('client-secret-value');
    expect(await openSecret(A, one)).toBe('client-secret-value');
  });

  it('another key, a corrupted value, or no key at all: a clear error, never the secret', async () => {
    const sealed = await sealSecret(A, 'client-secret-value');
    await expect(openSecret(B, sealed)).rejects.toMatchObject({ code: 'BAD_GATEWAY' });
    await expect(openSecret(A, sealed.slice(0, -4) + 'AAAA')).rejects.toMatchObject({ code: 'BAD_GATEWAY' });
    await expect(sealSecret(config({}), 'x')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
  });

  it('falls back to SESSION_SECRET_KEY', async () => {
    const s = config({ SESSION_SECRET_KEY: 'session-secret-key-0123456789abcdefgh' });
    expect(await openSecret(s, await sealSecret(s, 'x'))).toBe('x');
  });
});

describe('secret box: key rotation', () => {
  const OLD = 'old-session-secret-key-0123456789abcdefgh';
  const NEW = 'new-session-secret-key-0123456789abcdefgh';
  const DEDICATED = 'dedicated-encryption-key-0123456789abcdef';

  it(
    'SESSION_SECRET_KEY rotated with the old one in SESSION_SECRET_KEY_PREVIOUS: opens, and re-seals ' +
      'with the new key',
    async () => {
      const sealed = await sealSecret(config({ SESSION_SECRET_KEY: OLD }), 'ldap-bind-password');
      const rotated = config({ SESSION_SECRET_KEY: NEW, SESSION_SECRET_KEY_PREVIOUS: OLD });
      const resealed: string[] = [];
      expect(await openSecret(rotated, sealed, async (fresh) => resealed.push(fresh))).toBe('ldap-bind-password');
      expect(resealed).toHaveLength(1);
      // The re-sealed value needs no previous key any more; the old one does.
      const newOnly = config({ SESSION_SECRET_KEY: NEW });
      expect(await openSecret(newOnly, resealed[0]!)).toBe('ldap-bind-password');
      await expect(openSecret(newOnly, sealed)).rejects.toMatchObject({ code: 'BAD_GATEWAY' });
    },
  );

  it('a value sealed with the current key is not re-sealed', async () => {
    const rotated = config({ SESSION_SECRET_KEY: NEW, SESSION_SECRET_KEY_PREVIOUS: OLD });
    const sealed = await sealSecret(rotated, 'x');
    let calls = 0;
    expect(await openSecret(rotated, sealed, async () => (calls += 1))).toBe('x');
    expect(calls).toBe(0);
    expect(await resealIfStale(rotated, sealed)).toBeNull();
  });

  it(
    'AUTH_SECRETS_ENCRYPTION_KEY set after values were sealed with the session key: they open and move ' + 'to it',
    async () => {
      const sealed = await sealSecret(config({ SESSION_SECRET_KEY: OLD }), 'client-secret');
      const fresh = await resealIfStale(
        config({ SESSION_SECRET_KEY: OLD, AUTH_SECRETS_ENCRYPTION_KEY: DEDICATED }),
        sealed,
      );
      expect(fresh).not.toBeNull();
      // From then on the session key can rotate freely: the dedicated key alone opens it.
      const later = config({ SESSION_SECRET_KEY: NEW, AUTH_SECRETS_ENCRYPTION_KEY: DEDICATED });
      expect(await openSecret(later, fresh!)).toBe('client-secret');
    },
  );

  it('AUTH_SECRETS_ENCRYPTION_KEY rotated with AUTH_SECRETS_ENCRYPTION_KEY_PREVIOUS', async () => {
    const sealed = await sealSecret(config({ AUTH_SECRETS_ENCRYPTION_KEY: DEDICATED }), 'y');
    const rotated = config({ AUTH_SECRETS_ENCRYPTION_KEY: NEW, AUTH_SECRETS_ENCRYPTION_KEY_PREVIOUS: DEDICATED });
    const fresh = await resealIfStale(rotated, sealed);
    expect(await openSecret(config({ AUTH_SECRETS_ENCRYPTION_KEY: NEW }), fresh!)).toBe('y');
    const newOnly = config({ AUTH_SECRETS_ENCRYPTION_KEY: NEW });
    await expect(openSecret(newOnly, sealed)).rejects.toMatchObject({ code: 'BAD_GATEWAY' });
  });

  it('a failure to store the re-sealed value does not fail the read', async () => {
    const sealed = await sealSecret(config({ SESSION_SECRET_KEY: OLD }), 'z');
    const rotated = config({ SESSION_SECRET_KEY: NEW, SESSION_SECRET_KEY_PREVIOUS: OLD });
    expect(await openSecret(rotated, sealed, () => Promise.reject(new Error('database busy')))).toBe('z');
  });
});

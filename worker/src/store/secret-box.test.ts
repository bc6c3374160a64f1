import { describe, expect, it } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import { openSecret, sealSecret } from './secret-box.js';

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
    await expect(sealSecret(config({}), 'x')).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('falls back to SESSION_SECRET_KEY', async () => {
    const s = config({ SESSION_SECRET_KEY: 'session-secret-key-0123456789abcdefgh' });
    expect(await openSecret(s, await sealSecret(s, 'x'))).toBe('x');
  });
});

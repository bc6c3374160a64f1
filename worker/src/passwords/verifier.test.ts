import { describe, expect, it } from 'vitest';
import { createNobleHasher, needsRehash, type PasswordHasher } from './hash/index.js';
import { DUMMY_HASH, createPasswordVerifier } from './verifier.js';

describe('password verifier', () => {
  it('the dummy hash has the current parameters (unknown logins cost the same as known ones)', () => {
    expect(needsRehash(DUMMY_HASH)).toBe(false);
  });

  it('an unknown account costs exactly one verification, against the dummy hash, and fails', async () => {
    const calls: string[] = [];
    const real = createNobleHasher();
    const counting: PasswordHasher = {
      name: 'counting',
      hash: (p) => real.hash(p),
      verify: async (phc, p) => (calls.push(phc), real.verify(phc, p)),
    };
    const v = createPasswordVerifier(counting);
    expect(await v.verify(null, 'anything')).toBe(false);
    expect(calls).toEqual([DUMMY_HASH]);
    const phc = await real.hash('Str0ng$pass');
    expect(await v.verify(phc, 'Str0ng$pass')).toBe(true);
    expect(await v.verify(phc, 'other')).toBe(false);
    expect(calls).toEqual([DUMMY_HASH, phc, phc]);
  });
});

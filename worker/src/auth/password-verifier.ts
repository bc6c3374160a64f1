/**
 * Password verification that takes the same time whether or not the account exists: an unknown
 * login is checked against a dummy hash of the same parameters (no enumeration by timing).
 */
import { needsRehash, type PasswordHasher } from './password-hash/index.js';

export interface PasswordVerifier {
  hasher: PasswordHasher;
  /** True only when `phc` is a hash and `password` matches it; costs one hash either way. */
  verify(phc: string | null | undefined, password: string): Promise<boolean>;
  /** Whether a stored hash should be replaced by one with the current parameters. */
  needsRehash(phc: string): boolean;
}

/** Wraps a hasher; the dummy hash is made once, at first use. */
export function createPasswordVerifier(hasher: PasswordHasher): PasswordVerifier {
  let dummy: Promise<string> | undefined;
  const dummyHash = () => (dummy ??= hasher.hash(crypto.randomUUID()));
  return {
    hasher,
    async verify(phc, password) {
      if (phc) return hasher.verify(phc, password);
      await hasher.verify(await dummyHash(), password);
      return false;
    },
    needsRehash: (phc) => needsRehash(phc),
  };
}

/**
 * Password verification that takes the same time whether or not the account exists: an unknown
 * login is checked against a dummy hash of the same parameters (no enumeration by timing).
 */
import { UNBOUNDED, type AdmitOptions, type HashSlots } from './admission.js';
import { needsRehash, type PasswordHasher } from './hash/index.js';

/**
 * A hash of 32 random bytes that were thrown away: no password matches it. A constant (not made
 * at first use) so that no request ever waits on work started by another one (Workers forbid it).
 * Its parameters must stay those of DEFAULT_ARGON2_PARAMS (a test checks), or timing would differ.
 */
export const DUMMY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$l3vozBOfHYhlr9NENYdCwQ$zquDS1yqsPNSPQJpvcoWrTdQxRJZc6q4k85eGavrQkA';

export interface PasswordVerifier {
  hasher: PasswordHasher;
  /** True only when `phc` is a hash and `password` matches it; costs one hash either way. */
  verify(phc: string | null | undefined, password: string): Promise<boolean>;
  /** Whether a stored hash should be replaced by one with the current parameters. */
  needsRehash(phc: string): boolean;
  /**
   * Runs password work (checks, hashes) admitted for the client at `ip` (the request's trusted
   * address, http/forwarded.ts) in one of the bounded hashing slots (admission.ts), or throws its
   * 429 before anything ran. Every request-time hashing goes through it, never nested. `o.trusted`:
   * the priority lane of a valid device cookie of the login tried (docs/security-admission.md).
   */
  limit<T>(ip: string | null, work: () => Promise<T>, o?: AdmitOptions): Promise<T>;
  /** Runs a password check done elsewhere (an LDAP bind at the bridge) admitted for `ip`, without a slot. */
  admit<T>(ip: string | null, work: () => Promise<T>): Promise<T>;
  /** Whether password work of `ip` would start at once, in no lane behind others (admission.ts). */
  startsAtOnce(ip: string | null): boolean;
  /** A failed login from `ip`: its address waits behind clean ones for a while (admission.ts). */
  noteFailure(ip: string | null): void;
}

/** Wraps a hasher with the dummy-hash rule and, when given, a bound on concurrent hashing. */
export function createPasswordVerifier(hasher: PasswordHasher, slots: HashSlots = UNBOUNDED): PasswordVerifier {
  return {
    limit: (ip, work, o) => slots.run(ip, work, o),
    admit: (ip, work) => slots.admit(ip, work),
    startsAtOnce: (ip) => slots.startsAtOnce(ip),
    noteFailure: (ip) => slots.noteFailure(ip),
    hasher,
    async verify(phc, password) {
      if (phc) return hasher.verify(phc, password);
      await hasher.verify(DUMMY_HASH, password);
      return false;
    },
    needsRehash: (phc) => needsRehash(phc),
  };
}

/** The same verifier with its work bounded by `slots`. */
export function withHashSlots(verifier: PasswordVerifier, slots: HashSlots): PasswordVerifier {
  return {
    ...verifier,
    limit: (ip, work, o) => slots.run(ip, work, o),
    admit: (ip, work) => slots.admit(ip, work),
    startsAtOnce: (ip) => slots.startsAtOnce(ip),
    noteFailure: (ip) => slots.noteFailure(ip),
  };
}

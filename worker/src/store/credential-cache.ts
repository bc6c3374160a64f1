/**
 * A small in-process cache of the lookups behind every authenticated request (architecture.md §6): an API
 * token's account, a session's row and account. Without it, every Bearer or cookie request costs
 * a database query; with it, at most one per credential per AUTH_REVOCATION_CHECK_SEC (the
 * revocation re-check: a warm credential makes no round trip to a far database).
 *
 * Staleness (architecture.md, "Performance"):
 * - In this process (edge: isolate), any write that can change a credential (a revocation, a
 *   logout, a block, a deletion, a role or password change, a new session's limit: every insert,
 *   update or delete of users, sessions or api_tokens through the service's database handle, see
 *   credential-writes.ts) empties the cache when it starts and again when it ends, and a
 *   lookup that overlapped such a write is not kept. So the change holds at once here.
 * - A change made by another process or instance is seen within the re-check bound the caller passes
 *   (AUTH_REVOCATION_CHECK_SEC; CREDENTIAL_CACHE_TTL_MS when none): an entry is used for at most that
 *   long after it was read, then read again.
 * - Only live credentials are kept (never "unknown" answers, so a new token or session works at
 *   once everywhere), and what depends on the clock is checked at every use against the cached
 *   row: expiry, the idle timeout, super-access. When such a check fails the database decides.
 * - Bounded: at most CREDENTIAL_CACHE_MAX entries per kind, the oldest out first.
 */
import { credentialEpoch } from './credential-writes.js';

/** How long a cached lookup is used before it is read again when the caller names no bound. */
export const CREDENTIAL_CACHE_TTL_MS = 1000;
/** Entries per kind of credential. */
export const CREDENTIAL_CACHE_MAX = 10_000;

interface Entry<V> {
  value: V;
  /** service clock when it was read */
  at: number;
}

/** A cache of one kind of lookup (token hash -> account, session id -> session and account). */
export class CredentialCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private epoch = credentialEpoch();

  constructor(
    private readonly ttlMs = CREDENTIAL_CACHE_TTL_MS,
    private readonly max = CREDENTIAL_CACHE_MAX,
  ) {}

  /**
   * The value of `key`: cached when read less than `ttlMs` (the revocation re-check bound; the
   * cache's own TTL by default) ago, since the last credential write, and `stillValid` at `now`; else
   * `load()`, kept when it found something and no credential write happened meanwhile.
   */
  async get(
    key: string,
    now: number,
    stillValid: (v: V) => boolean,
    load: () => Promise<V | undefined>,
    ttlMs = this.ttlMs,
  ): Promise<V | undefined> {
    const epoch = credentialEpoch();
    if (epoch !== this.epoch) {
      this.entries.clear();
      this.epoch = epoch;
    }
    const hit = this.entries.get(key);
    // `now < hit.at`: the service clock went back (tests); read again rather than trust it.
    if (hit && now - hit.at < ttlMs && now >= hit.at && stillValid(hit.value)) return hit.value;
    if (hit) this.entries.delete(key);
    const value = await load();
    if (value !== undefined && credentialEpoch() === epoch) {
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value, at: now });
    }
    return value;
  }

  /** Forgets everything (tests). */
  clear(): void {
    this.entries.clear();
  }

  /** Entries held (tests, memory figures). */
  get size(): number {
    return this.entries.size;
  }
}

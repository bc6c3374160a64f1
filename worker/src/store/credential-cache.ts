/**
 * A small in-process cache of the lookups behind every authenticated request (architecture.md §6): an API
 * token's account, a session's row and account. Without it, every Bearer or cookie request costs
 * a database query; with it, at most one per credential per AUTH_REVOCATION_CHECK_SEC (the
 * revocation re-check: a warm credential makes no round trip to a far database).
 *
 * Staleness (architecture.md, "Performance"):
 * - In this process (edge: isolate), every write that can change a credential (a revocation, a
 *   logout, a block, a deletion, a role or password change, a new session's limit) is made by
 *   accounts/ (accounts/writes.ts), which calls `invalidateAccount` for the account it touches when
 *   the write starts and again when it ends: that account's entries are dropped, and a lookup of
 *   that account that overlapped the write is not kept. So the change holds at once here, and the
 *   other accounts' entries stay.
 * - A change made by another process or instance is seen within the re-check bound the caller passes
 *   (AUTH_REVOCATION_CHECK_SEC; CREDENTIAL_CACHE_TTL_MS when none): an entry is used for at most that
 *   long after it was read, then read again.
 * - Only live credentials are kept (never "unknown" answers, so a new token or session works at
 *   once everywhere), and what depends on the clock is checked at every use against the cached
 *   row: expiry, the idle timeout, super-access. When such a check fails the database decides.
 * - Bounded: at most CREDENTIAL_CACHE_MAX entries per kind, the oldest out first.
 */

/** How long a cached lookup is used before it is read again when the caller names no bound. */
export const CREDENTIAL_CACHE_TTL_MS = 1000;
/** Entries per kind of credential. */
export const CREDENTIAL_CACHE_MAX = 10_000;

interface Entry<V> {
  value: V;
  /** service clock when it was read */
  at: number;
  /** the account it authenticates (undefined: any invalidation drops it) */
  account: string | undefined;
}

// Per-account write marks: `writes` counts invalidations; `lastWrite` holds, per account, the count at
// its last one; `floor` stands for every account whose mark was forgotten (the map is bounded).
let writes = 0;
let floor = 0;
const lastWrite = new Map<string, number>();
const caches = new Set<{ forget(account: string): void }>();

/**
 * A write of `userId`'s credentials is starting or has ended (accounts/writes.ts calls it on both
 * sides): its cached lookups are dropped, and one running meanwhile is not kept.
 */
export function invalidateAccount(userId: string): void {
  writes++;
  if (lastWrite.size >= CREDENTIAL_CACHE_MAX) {
    lastWrite.clear();
    floor = writes;
  }
  lastWrite.delete(userId);
  lastWrite.set(userId, writes);
  for (const cache of caches) cache.forget(userId);
}

/** The current write mark: a value read after it may be kept (`keep`) unless a write of its account followed. */
export function writeMark(): number {
  return writes;
}

/** Whether a write of `account` (or, when unknown, of any account) started or ended after mark `since`. */
function writtenSince(account: string | undefined, since: number): boolean {
  if (floor > since) return true;
  if (account === undefined) return writes > since;
  return (lastWrite.get(account) ?? 0) > since;
}

/** A cache of one kind of lookup (token hash -> account, session id -> session and account). */
export class CredentialCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** The keys of each account's entries (entries of no known account under ''). */
  private readonly byAccount = new Map<string, Set<string>>();
  /** Database lookups made (tests: a cached answer costs none). */
  loads = 0;

  constructor(
    private readonly ttlMs = CREDENTIAL_CACHE_TTL_MS,
    private readonly max = CREDENTIAL_CACHE_MAX,
    /** The account a value authenticates, so that invalidateAccount finds it. */
    private readonly accountOf: (value: V) => string | undefined = () => undefined,
  ) {
    caches.add(this);
  }

  /**
   * The value of `key`: cached when read less than `ttlMs` (the revocation re-check bound; the
   * cache's own TTL by default) ago, since the last write of its account, and `stillValid` at `now`;
   * else `load()`, kept when it found something and no write of its account happened meanwhile.
   */
  async get(
    key: string,
    now: number,
    stillValid: (v: V) => boolean,
    load: () => Promise<V | undefined>,
    ttlMs = this.ttlMs,
  ): Promise<V | undefined> {
    const hit = this.entries.get(key);
    // `now < hit.at`: the service clock went back (tests); read again rather than trust it.
    if (hit && now - hit.at < ttlMs && now >= hit.at && stillValid(hit.value)) return hit.value;
    if (hit) this.drop(key);
    const since = writes;
    this.loads++;
    const value = await load();
    if (value !== undefined) this.keep(key, value, now, since);
    return value;
  }

  /**
   * Keeps `value` of `key`, read at `now` after write mark `since` (writeMark) by a lookup made
   * elsewhere (a batch of other reads), unless a write of its account happened meanwhile.
   */
  keep(key: string, value: V, now: number, since: number): void {
    const account = this.accountOf(value);
    if (writtenSince(account, since)) return;
    this.drop(key);
    if (this.entries.size >= this.max) this.drop(this.entries.keys().next().value!);
    this.entries.set(key, { value, at: now, account });
    const keys = this.byAccount.get(account ?? '') ?? new Set<string>();
    this.byAccount.set(account ?? '', keys.add(key));
  }

  /** Drops the entries of `account` (and those of no known account). */
  forget(account: string): void {
    for (const a of [account, '']) {
      for (const key of this.byAccount.get(a) ?? []) this.entries.delete(key);
      this.byAccount.delete(a);
    }
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    const keys = this.byAccount.get(e.account ?? '');
    keys?.delete(key);
    if (keys?.size === 0) this.byAccount.delete(e.account ?? '');
  }

  /** Forgets everything (tests). */
  clear(): void {
    this.entries.clear();
    this.byAccount.clear();
  }

  /** Entries held (tests, memory figures). */
  get size(): number {
    return this.entries.size;
  }
}

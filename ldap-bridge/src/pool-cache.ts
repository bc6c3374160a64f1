/** The connection pools a plugin keeps per upstream (undici Agents, OpenSearch Clients), at most a few. */

/** A pool that can be closed. */
interface Closable {
  close(): Promise<unknown>;
}

/** Pools by key: a key not seen makes a new pool, which past `max` pools closes the oldest one. */
export interface PoolCache<T extends Closable> {
  /** The pool of `key`, made by `make` the first time. */
  get(key: string, make: () => T): T;
  /** Closes every pool (the plugin's onClose hook). */
  closeAll(): Promise<void>;
}

/** Creates a pool cache of at most `max` pools. */
export function createPoolCache<T extends Closable>(max: number): PoolCache<T> {
  const pools = new Map<string, T>();
  return {
    get(key, make) {
      let pool = pools.get(key);
      if (!pool) {
        if (pools.size >= max) {
          const [oldestKey, oldest] = pools.entries().next().value as [string, T];
          pools.delete(oldestKey);
          void oldest.close();
        }
        pool = make();
        pools.set(key, pool);
      }
      return pool;
    },
    async closeAll() {
      await Promise.all([...pools.values()].map((p) => p.close()));
    },
  };
}

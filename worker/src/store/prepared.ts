/** Queries on hot paths, built and prepared once per database handle rather than at every request. */
import type { Db } from './db.js';

/** Returns `build(db)`, made once for each database handle. */
export function preparedPerDb<Q>(build: (db: Db) => Q): (db: Db) => Q {
  const cache = new WeakMap<Db, Q>();
  return (db) => {
    let q = cache.get(db);
    if (!q) cache.set(db, (q = build(db)));
    return q;
  };
}

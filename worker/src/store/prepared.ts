/**
 * Queries on hot paths, built once per database handle rather than at every request
 * (architecture.md §6, "Statements built once").
 */
import {
  Param,
  Placeholder,
  QueryPromise,
  entityKind,
  is,
  sql as drizzleSql,
  type DriverValueEncoder,
} from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import type { RunnableQuery } from 'drizzle-orm/runnable-query';
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

/** The values of a statement's placeholders, by name. */
export type PlaceholderValues<K extends string> = { readonly [N in K]: unknown };

/**
 * Values with no key beyond the placeholders' names: a value the statement has no place for (a column
 * added to a row but not to the statement) is a type error, not silently left out.
 */
export type ExactValues<K extends string, V> = V & { readonly [X in Exclude<keyof V, K>]: never };

/** A statement built once: bind it to its values (`statement(db, values)`). */
export type ReusableStatement<K extends string, R> = <V extends PlaceholderValues<K>>(
  db: Db,
  values: ExactValues<K, V>,
) => BoundStatement<R>;

/** A parameter of a built statement: a value of its own, or a placeholder's (with its column's encoder). */
type Slot = { value: unknown } | { name: string; encoder?: DriverValueEncoder<unknown, unknown> };

function slotOf(p: unknown): Slot {
  if (is(p, Placeholder)) return { name: p.name };
  if (is(p, Param) && is(p.value, Placeholder)) return { name: p.value.name, encoder: p.encoder };
  return { value: p };
}

/** A slot's value: null stays null (as drizzle binds a null it is given), others through their column's encoder. */
function boundValue(slot: Slot, values: Record<string, unknown>): unknown {
  if ('value' in slot) return slot.value;
  const v = values[slot.name];
  if (v === undefined) throw new Error(`no value for the placeholder ${slot.name}`);
  return v === null || !slot.encoder ? v : slot.encoder.mapToDriverValue(v);
}

/** What drizzle's batch asks of each item: its query, and how its result is read (drizzle-orm/libsql/session). */
interface Built {
  getQuery(): { sql: string; params: unknown[] };
  mapResult(result: unknown, isFromBatch?: boolean): unknown;
}

/**
 * A statement with its values: an item of `db.batch` (drizzle asks it for `_prepare()`, then for its query
 * and the reading of its result), or run alone with `await`, as drizzle's own queries (a QueryPromise).
 */
export class BoundStatement<R> extends QueryPromise<R> implements RunnableQuery<R, 'sqlite'> {
  static override readonly [entityKind] = 'BoundStatement';
  declare readonly _: { readonly dialect: 'sqlite'; readonly result: R };

  constructor(
    private readonly db: Db,
    private readonly query: { sql: string; params: unknown[] },
    private readonly built: Built,
  ) {
    super();
  }

  /** Its SQL and values. */
  getQuery(): { sql: string; params: unknown[] } {
    return this.query;
  }

  /** @internal drizzle's batch */
  _prepare(): this {
    return this;
  }

  /** @internal drizzle's batch */
  mapResult(result: unknown, isFromBatch?: boolean): unknown {
    return this.built.mapResult(result, isFromBatch);
  }

  override async execute(): Promise<R> {
    const [result] = await this.db.batch([this]);
    return result as R;
  }
}

/**
 * A statement whose SQL is built once per database handle, with `sql.placeholder(name)` where its
 * values go, then bound to values for each use: `statement(db, values)` is an item of `db.batch` (one
 * transaction with the others, as a statement built at each call would be) or awaited alone. Building
 * a statement with drizzle's query builder costs more than running it on the embedded database (over
 * a third of a login's own CPU outside the engine, docs/performance.md "Logins and the hot path");
 * drizzle's `.prepare()` builds once too, but its prepared queries cannot join a batch. Each
 * placeholder's value is encoded as its column encodes it (a JSON column's object is stringified), as
 * drizzle does for its own prepared queries, and a null stays null (as when a statement is built with
 * it); a missing value (undefined) throws. The result is drizzle's for the built statement: rows for a
 * select, the ResultSet for an insert, update, delete or `db.run`.
 */
export function reusableStatement<K extends string, Q extends BatchItem<'sqlite'>>(
  build: (db: Db, p: { readonly [N in K]: Placeholder<N> }) => Q,
  names: readonly K[],
): ReusableStatement<K, Q['_']['result']> {
  const placeholders = Object.fromEntries(names.map((n) => [n, drizzleSql.placeholder(n)])) as {
    readonly [N in K]: Placeholder<N>;
  };
  const once = preparedPerDb((db) => {
    const built = (build(db, placeholders) as unknown as { _prepare(): Built })._prepare();
    const { sql, params } = built.getQuery();
    return { sql, slots: params.map(slotOf), built };
  });
  return (db, values) => {
    const { sql, slots, built } = once(db);
    const query = { sql, params: slots.map((slot) => boundValue(slot, values as Record<string, unknown>)) };
    return new BoundStatement<Q['_']['result']>(db, query, built);
  };
}

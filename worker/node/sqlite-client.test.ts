/**
 * The Node host's embedded client (statements prepared once) answers exactly as @libsql/client's
 * embedded client does, for everything drizzle and the service use; and it does reuse statements.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, LibsqlBatchError, LibsqlError, type Client, type ResultSet } from '@libsql/client';
import { eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/libsql/web';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import Database from 'libsql';
import { createEmbeddedClient } from './sqlite-client.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-client-'));
let ours: Client;
let reference: Client;

const SETUP = [
  'create table t (id integer primary key, name text unique, qty integer, price real, data blob, flag integer)',
  "insert into t values (1, 'a', 3, 1.5, x'00ff10', 1)",
  "insert into t values (2, 'b', 9007199254740993, null, null, 0)",
  'create table u (id integer primary key, t_id integer, name text)',
  "insert into u values (10, 1, 'u-a')",
];

beforeAll(async () => {
  ours = createEmbeddedClient(join(dir, 'ours.db'), { busyTimeoutMs: 1000 });
  reference = createClient({ url: `file:${join(dir, 'reference.db')}` });
  for (const c of [ours, reference]) await c.batch(SETUP);
});
afterAll(() => {
  ours.close();
  reference.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What a consumer can observe of a result set. */
function observe(rs: ResultSet) {
  return {
    columns: rs.columns,
    columnTypes: rs.columnTypes,
    rowsAffected: rs.rowsAffected,
    lastInsertRowid: rs.lastInsertRowid,
    byIndex: rs.rows.map((r) => Array.prototype.slice.call(r)),
    keys: rs.rows.map((r) => Object.keys(r)),
    entries: rs.rows.map((r) => Object.fromEntries(Object.entries(r))),
    lengths: rs.rows.map((r) => r.length),
    json: JSON.parse(JSON.stringify(rs.rows)) as unknown,
  };
}

/** Runs `f` on both clients; the results (or the errors) must be the same. */
async function same(f: (c: Client) => Promise<ResultSet | ResultSet[]>) {
  const run = async (c: Client) => {
    try {
      const r = await f(c);
      return { ok: Array.isArray(r) ? r.map(observe) : observe(r) };
    } catch (e) {
      const err = e as LibsqlError & { statementIndex?: number };
      return {
        error: {
          type: e instanceof LibsqlBatchError ? 'batch' : e instanceof LibsqlError ? 'libsql' : (e as Error).name,
          code: err.code,
          index: err.statementIndex,
          message: err.message,
        },
      };
    }
  };
  const [a, b] = [await run(ours), await run(reference)];
  expect(a).toEqual(b);
  return a;
}

describe('embedded client with prepared statements', () => {
  it(
    'reads rows as @libsql/client does: by index and by name, integers, reals, blobs, nulls, duplicate ' + 'names',
    async () => {
      await same((c) => c.execute('select id, name, price, data, flag from t where id = 1'));
      await same((c) =>
        c.execute({ sql: 'select t.id, u.id, u.name from t join u on u.t_id = t.id where t.name = ?', args: ['a'] }),
      );
      await same((c) => c.execute({ sql: 'select * from t where id = :id', args: { id: 1 } }));
      await same((c) => c.execute('select count(*) as n, sum(qty) is null as none from t where id > 5'));
      const blob = (await ours.execute('select data from t where id = 1')).rows[0]!.data;
      expect(blob).toBeInstanceOf(ArrayBuffer);
      expect([...new Uint8Array(blob as ArrayBuffer)]).toEqual([0, 255, 16]);
    },
  );

  it('refuses integers past 2^53 as @libsql/client does (RangeError)', async () => {
    const r = await same((c) => c.execute('select qty from t where id = 2'));
    expect(r.error?.type).toBe('RangeError');
  });

  it('reports writes (rowsAffected, lastInsertRowid) and binds booleans, dates, bigints and blobs', async () => {
    await same((c) =>
      c.execute({
        sql: 'insert into t (id, name, qty, flag, data) values (?, ?, ?, ?, ?)',
        args: [3, 'c', 7n, true, new Uint8Array([1, 2])],
      }),
    );
    await same((c) => c.execute({ sql: 'update t set qty = ? where id >= ?', args: [new Date(5000), 2] }));
    await same((c) => c.execute('select id, qty, flag, hex(data) as h from t order by id'));
  });

  it(
    'maps engine errors to LibsqlError codes, and a failed batch to LibsqlBatchError with its index, ' + 'rolled back',
    async () => {
      const dup = await same((c) => c.execute("insert into t (id, name) values (4, 'a')"));
      expect(dup.error).toMatchObject({ type: 'libsql', code: 'SQLITE_CONSTRAINT' });
      const failed = await same((c) =>
        c.batch(["insert into t (id, name) values (5, 'e')", "insert into t (id, name) values (6, 'a')"]),
      );
      expect(failed.error).toMatchObject({ type: 'batch', index: 1, code: 'SQLITE_CONSTRAINT' });
      await same((c) => c.execute('select count(*) as n from t where id = 5'));
      expect((await ours.execute('select count(*) as n from t where id = 5')).rows[0]!.n).toBe(0);
      await same((c) => c.execute('select nope from t'));
    },
  );

  it('runs a batch in one transaction and returns each result', async () => {
    await same((c) =>
      c.batch(
        [
          { sql: 'insert into u (id, t_id, name) values (?, ?, ?)', args: [11, 2, 'u-b'] },
          'select count(*) as n from u',
          ['update u set name = ? where id = ?', ['u-b2', 11]],
        ],
        'write',
      ),
    );
  });

  it('gives drizzle the same rows (selects with joins, raw sql, batches with changes())', async () => {
    const t = sqliteTable('t', {
      id: integer('id').primaryKey(),
      name: text('name'),
      flag: integer('flag', { mode: 'boolean' }),
    });
    const u = sqliteTable('u', { id: integer('id').primaryKey(), tId: integer('t_id'), name: text('name') });
    const query = async (c: Client) => {
      const db = drizzle(c);
      const prepared = db
        .select({ t, uName: u.name })
        .from(t)
        .innerJoin(u, eq(u.tId, t.id))
        .where(eq(t.name, sql.placeholder('name')))
        .prepare();
      return {
        joined: await prepared.all({ name: 'a' }),
        one: await prepared.get({ name: 'b' }),
        raw: await db.all(sql`select name, flag from t order by id`),
        batch: await db.batch([
          db.update(t).set({ flag: false }).where(eq(t.id, 1)),
          db.select().from(t).where(eq(t.id, 1)),
        ]),
      };
    };
    const [a, b] = [await query(ours), await query(reference)];
    expect(a).toEqual(b);
    expect(a.joined).toEqual([{ t: { id: 1, name: 'a', flag: true }, uName: 'u-a' }]);
  });

  it('prepares each statement once, and still sees a schema change', async () => {
    const prepare = vi.spyOn(Database.prototype, 'prepare');
    const c = createEmbeddedClient(join(dir, 'count.db'));
    try {
      await c.execute('create table k (a integer)');
      for (let i = 0; i < 5; i++) await c.execute({ sql: 'insert into k (a) values (?)', args: [i] });
      for (let i = 0; i < 5; i++) await c.execute('select * from k');
      const calls = (text: string) => prepare.mock.calls.filter(([q]) => q === text).length;
      expect(calls('insert into k (a) values (?)')).toBe(1);
      expect(calls('select * from k')).toBe(1);
      await c.execute('alter table k add column b text');
      const after = await c.execute('select * from k');
      expect(after.columns).toEqual(['a', 'b']);
      expect(Object.keys(after.rows[0]!)).toEqual(['a', 'b']);
      expect(after.rows[0]!.length).toBe(2);
    } finally {
      c.close();
      prepare.mockRestore();
    }
  });

  it('gives an interactive transaction its own connection; commit and rollback', async () => {
    const tx = await ours.transaction('write');
    await tx.execute({ sql: 'insert into u (id, t_id, name) values (?, ?, ?)', args: [20, 1, 'tx'] });
    await tx.rollback();
    expect((await ours.execute('select count(*) as n from u where id = 20')).rows[0]!.n).toBe(0);
    const tx2 = await ours.transaction('write');
    await tx2.execute({ sql: 'insert into u (id, t_id, name) values (?, ?, ?)', args: [21, 1, 'tx'] });
    await tx2.commit();
    expect(tx2.closed).toBe(true);
    expect((await ours.execute('select count(*) as n from u where id = 21')).rows[0]!.n).toBe(1);
  });

  it('is closed after close()', async () => {
    const c = createEmbeddedClient(join(dir, 'closed.db'));
    c.close();
    expect(c.closed).toBe(true);
    await expect(c.execute('select 1')).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });

  it(
    'lazyDurability: commits without fsync (synchronous NORMAL) in WAL mode only, visible to the other ' + 'connection',
    async () => {
      const file = join(dir, 'lazy.db');
      const main = createEmbeddedClient(file);
      // Before WAL mode: a rollback journal keeps FULL (NORMAL could corrupt it on a power failure).
      const early = createEmbeddedClient(file, { lazyDurability: true });
      expect((await early.execute('PRAGMA synchronous')).rows[0]![0]).toBe(2);
      early.close();
      await main.execute('PRAGMA journal_mode = WAL');
      await main.execute('create table ev (id text primary key)');
      const lazy = createEmbeddedClient(file, { lazyDurability: true });
      expect((await lazy.execute('PRAGMA synchronous')).rows[0]![0]).toBe(1);
      expect((await main.execute('PRAGMA synchronous')).rows[0]![0]).toBe(2);
      await lazy.batch(
        [
          { sql: 'insert into ev values (?)', args: ['a'] },
          { sql: 'insert into ev values (?)', args: ['b'] },
        ],
        'write',
      );
      expect((await main.execute('select count(*) from ev')).rows[0]![0]).toBe(2);
      lazy.close();
      main.close();
    },
  );
});

describe('lazyDurability: the WAL reaches the disk within flushAfterMs', () => {
  /** Counts fdatasync calls made through fs/promises file handles (how the client flushes). */
  const spyDatasync = async () => {
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
    await probe.close();
    return vi.spyOn(proto, 'datasync');
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const wal = async (name: string) => {
    const file = join(dir, name);
    const main = createEmbeddedClient(file);
    await main.execute('PRAGMA journal_mode = WAL');
    await main.execute('create table ev (id text primary key)');
    return { file, main };
  };

  it('one flush, off the event loop, covers the commits made before it; none for a FULL connection', async () => {
    const { file, main } = await wal('flush.db');
    const datasync = await spyDatasync();
    const lazy = createEmbeddedClient(file, { lazyDurability: true, flushAfterMs: 100 });
    await lazy.execute({ sql: 'insert into ev values (?)', args: ['a'] });
    await lazy.batch([{ sql: 'insert into ev values (?)', args: ['b'] }], 'write');
    expect(datasync).not.toHaveBeenCalled(); // the commits did not wait for the disk
    await vi.waitFor(() => expect(datasync).toHaveBeenCalledTimes(1), { timeout: 2_000 });
    await sleep(250);
    expect(datasync).toHaveBeenCalledTimes(1); // nothing new to flush: no timer left
    await lazy.execute({ sql: 'insert into ev values (?)', args: ['c'] });
    await vi.waitFor(() => expect(datasync).toHaveBeenCalledTimes(2), { timeout: 2_000 });
    await main.execute({ sql: 'insert into ev values (?)', args: ['d'] });
    await sleep(250);
    expect(datasync).toHaveBeenCalledTimes(2); // FULL commits wait for the disk themselves
    datasync.mockRestore();
    lazy.close();
    main.close();
  });

  it('close() flushes what is pending at once: no flush is left behind', async () => {
    const { file, main } = await wal('flush-close.db');
    const datasync = await spyDatasync();
    const errors: unknown[] = [];
    const lazy = createEmbeddedClient(file, {
      lazyDurability: true,
      flushAfterMs: 100,
      onFlushError: (e) => errors.push(e),
    });
    await lazy.execute({ sql: 'insert into ev values (?)', args: ['a'] });
    lazy.close(); // synchronous fdatasync of the WAL, and the timer cleared
    await sleep(250);
    expect(datasync).not.toHaveBeenCalled();
    expect(errors).toEqual([]);
    expect((await main.execute('select count(*) from ev')).rows[0]![0]).toBe(1);
    datasync.mockRestore();
    main.close();
  });
});

describe('another connection holding the lock (docs/operations.md, "Fault drills")', () => {
  const lockedClient = async () => {
    const path = join(dir, `locked-${Math.random().toString(36).slice(2)}.db`);
    const client = createEmbeddedClient(path, { busyTimeoutMs: 400 });
    await client.execute('PRAGMA journal_mode = WAL');
    await client.execute('create table w (id integer primary key, v text)');
    const other = new Database(path);
    other.exec('BEGIN EXCLUSIVE');
    const release = () => {
      other.exec('ROLLBACK');
      other.close();
    };
    return { client, release };
  };

  it('a call waits for a short lock without blocking the event loop, then succeeds', async () => {
    const { client, release } = await lockedClient();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const write = client.batch([{ sql: 'insert into w (v) values (?)', args: ['x'] }], 'write');
    setTimeout(release, 150);
    await write;
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(5);
    expect((await client.execute('select v from w')).rows.map((r) => r.v)).toEqual(['x']);
    client.close();
  });

  it('past the wait: SQLITE_BUSY, nothing written; afterwards every call (batches too) works again', async () => {
    const { client, release } = await lockedClient();
    const insert = { sql: 'insert into w (v) values (?)', args: ['y'] };
    await expect(client.execute(insert)).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    await expect(client.batch([insert, 'select count(*) from w'], 'deferred')).rejects.toMatchObject({
      code: 'SQLITE_BUSY',
    });
    release();
    // The statements that met the lock do not hold up later commits ("SQL statements in progress").
    await client.batch([{ sql: "insert into w (v) values ('z')", args: [] }, 'select count(*) from w'], 'deferred');
    await client.execute(insert);
    expect((await client.execute('select v from w order by id')).rows.map((r) => r.v)).toEqual(['z', 'y']);
    client.close();
  });
});

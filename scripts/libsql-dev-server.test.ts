import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, LibsqlError, type Client } from '@libsql/client';
import { drizzle } from 'drizzle-orm/libsql';
import { eq } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { startLibsqlDevServer } from './libsql-dev-server.js';

type Server = Awaited<ReturnType<typeof startLibsqlDevServer>>;

let dir: string;
let server: Server;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'libsql-dev-server-'));
  server = await startLibsqlDevServer({ path: path.join(dir, 'test.db'), port: 0, idleTimeoutMs: 500 });
  client = createClient({ url: server.url, intMode: 'bigint' });
  await client.batch(
    [
      'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, qty INTEGER)',
      'CREATE TABLE vals (id INTEGER PRIMARY KEY, v)', // no declared type: values are stored as sent
      'CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT)',
    ],
    'write',
  );
});

afterAll(async () => {
  client?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = async (sql: string, args: (string | bigint)[] = []) => (await client.execute({ sql, args })).rows[0]![0];
const pipeline = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/v2/pipeline`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('libsql dev server (Hrana v2 over HTTP)', () => {
  it('answers the version probes so clients settle on v2', async () => {
    expect((await fetch(`${server.url}/v2`)).status).toBe(200);
    expect((await fetch(`${server.url}/v3-protobuf`)).status).toBe(404);
    expect((await fetch(`${server.url}/v3`)).status).toBe(404);
  });

  it('executes statements with positional and named args', async () => {
    const ins = await client.execute({ sql: 'INSERT INTO items (name, qty) VALUES (?, ?)', args: ['pos', 3n] });
    expect(ins.rowsAffected).toBe(1);
    expect(typeof ins.lastInsertRowid).toBe('bigint');
    await client.execute({
      sql: 'INSERT INTO items (name, qty) VALUES (:name, @qty)',
      args: { name: 'named', qty: 7n },
    });
    await client.execute({
      sql: 'INSERT INTO items (name, qty) VALUES ($name, ?2)',
      args: { $name: 'dollar', '?2': 9n },
    });

    const rs = await client.execute({
      sql: 'SELECT name, qty FROM items WHERE name IN (:a, :b, :c) ORDER BY qty',
      args: { a: 'pos', b: 'named', c: 'dollar' },
    });
    expect(rs.columns).toEqual(['name', 'qty']);
    expect(rs.columnTypes).toEqual(['TEXT', 'INTEGER']);
    expect(rs.rows.map((r) => [r.name, r.qty])).toEqual([
      ['pos', 3n],
      ['named', 7n],
      ['dollar', 9n],
    ]);
    const row = await client.execute({ sql: 'SELECT qty FROM items WHERE id = ?', args: [ins.lastInsertRowid!] });
    expect(row.rows[0]!.qty).toBe(3n);
    // A SELECT must not report the previous statement's changes() or an insert rowid.
    expect(rs.rowsAffected).toBe(0);
    expect(rs.lastInsertRowid).toBeUndefined();
  });

  it('rejects missing, unknown and extra arguments instead of binding NULL', async () => {
    await expect(client.execute({ sql: 'SELECT :a, :b', args: { a: 1n } })).rejects.toMatchObject({
      code: 'ARGS_INVALID',
    });
    await expect(client.execute({ sql: 'SELECT :a', args: { zz: 1n } })).rejects.toMatchObject({
      code: 'ARGS_INVALID',
    });
    await expect(client.execute({ sql: 'SELECT ?', args: [1n, 2n] })).rejects.toMatchObject({ code: 'ARGS_INVALID' });
    // Named args combined with a bare `?` (this would crash libsql-js's own named binding).
    const mixed = await client.execute({ sql: 'SELECT ?, :x', args: { x: 'named', '?1': 'first' } });
    expect(Object.values(mixed.rows[0]!)).toEqual(['first', 'named']);
  });

  it('round-trips every value type', async () => {
    const blob = new Uint8Array([0, 1, 2, 254, 255]);
    const values = [
      null,
      9007199254740993n,
      9223372036854775807n,
      -9223372036854775808n,
      3.25,
      2,
      'héllo wörld 😀 ✓ 日本',
      blob,
    ];
    for (const v of values) await client.execute({ sql: 'INSERT INTO vals (v) VALUES (?)', args: [v] });
    const rs = await client.execute('SELECT v, typeof(v) AS t FROM vals ORDER BY id');
    expect(rs.rows.map((r) => r.t)).toEqual(['null', 'integer', 'integer', 'integer', 'real', 'real', 'text', 'blob']);
    const got = rs.rows.map((r) => r.v);
    expect(got.slice(0, 7)).toEqual(values.slice(0, 7));
    expect(got[7]).toBeInstanceOf(ArrayBuffer);
    expect(new Uint8Array(got[7] as ArrayBuffer)).toEqual(blob);
  });

  it('makes client.batch(..., "write") atomic', async () => {
    const ok = await client.batch(
      [
        { sql: 'INSERT INTO items (name, qty) VALUES (?, ?)', args: ['batch-1', 1n] },
        { sql: 'INSERT INTO items (name, qty) VALUES (?, ?)', args: ['batch-2', 2n] },
        "SELECT count(*) AS n FROM items WHERE name LIKE 'batch-%'",
      ],
      'write',
    );
    expect(ok[2]!.rows[0]!.n).toBe(2n);

    const failing = client.batch(
      [
        { sql: 'INSERT INTO items (name, qty) VALUES (?, ?)', args: ['atomic-1', 1n] },
        { sql: 'INSERT INTO items (name, qty) VALUES (?, ?)', args: ['atomic-2', 2n] },
        { sql: 'INSERT INTO items (name, qty) VALUES (?, ?)', args: ['batch-1', 3n] }, // UNIQUE violation
      ],
      'write',
    );
    await expect(failing).rejects.toMatchObject({ code: expect.stringContaining('SQLITE_CONSTRAINT') });
    expect(await count("SELECT count(*) FROM items WHERE name LIKE 'atomic-%'")).toBe(0n);
  });

  it('commits and rolls back interactive transactions', async () => {
    const tx = await client.transaction('write');
    const ins = await tx.execute({ sql: 'INSERT INTO items (name) VALUES (?)', args: ['tx-commit'] });
    expect(ins.rowsAffected).toBe(1);
    const sel = await tx.execute("SELECT count(*) AS n FROM items WHERE name = 'tx-commit'");
    expect(sel.rows[0]!.n).toBe(1n);
    // Same connection: the SELECT must not report the INSERT's sticky changes() / rowid.
    expect(sel.rowsAffected).toBe(0);
    expect(sel.lastInsertRowid).toBeUndefined();
    const upd = await tx.execute({ sql: 'UPDATE items SET qty = 5 WHERE id = ?', args: [ins.lastInsertRowid!] });
    expect(upd.rowsAffected).toBe(1);
    expect(upd.lastInsertRowid).toBeUndefined();
    await tx.commit();
    expect(await count("SELECT count(*) FROM items WHERE name = 'tx-commit'")).toBe(1n);

    const tx2 = await client.transaction('write');
    await tx2.execute({ sql: 'INSERT INTO items (name) VALUES (?)', args: ['tx-rollback'] });
    expect((await tx2.execute("SELECT count(*) AS n FROM items WHERE name = 'tx-rollback'")).rows[0]!.n).toBe(1n);
    await tx2.rollback();
    expect(await count("SELECT count(*) FROM items WHERE name = 'tx-rollback'")).toBe(0n);
  });

  it('isolates concurrent transactions and makes a second writer wait for the first', async () => {
    const writer = await client.transaction('write');
    await writer.execute({ sql: 'INSERT INTO items (name) VALUES (?)', args: ['uncommitted'] });

    const reader = await client.transaction('read');
    expect((await reader.execute("SELECT count(*) AS n FROM items WHERE name = 'uncommitted'")).rows[0]!.n).toBe(0n);
    expect(await count("SELECT count(*) FROM items WHERE name = 'uncommitted'")).toBe(0n);

    // A second write transaction cannot take the lock yet: it must wait (not fail with SQLITE_BUSY)...
    const writer2 = await client.transaction('write');
    let secondDone = false;
    const second = writer2.execute("SELECT count(*) AS n FROM items WHERE name = 'uncommitted'").then((rs) => {
      secondDone = true;
      return rs;
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(secondDone).toBe(false);

    await writer.commit();
    // ...and once the first commits it proceeds and sees the committed row.
    expect((await second).rows[0]!.n).toBe(1n);
    await writer2.rollback();
    // The read transaction keeps its snapshot from before the commit.
    expect((await reader.execute("SELECT count(*) AS n FROM items WHERE name = 'uncommitted'")).rows[0]!.n).toBe(0n);
    await reader.commit();
    expect(await count("SELECT count(*) FROM items WHERE name = 'uncommitted'")).toBe(1n);
  });

  it('raises LibsqlError with the SQLite code on constraint violations', async () => {
    await client.execute({ sql: 'INSERT INTO items (name) VALUES (?)', args: ['dup'] });
    const err = await client
      .execute({ sql: 'INSERT INTO items (name) VALUES (?)', args: ['dup'] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LibsqlError);
    expect((err as LibsqlError).code).toContain('SQLITE_CONSTRAINT');
    expect((err as LibsqlError).message).toContain('UNIQUE');
  });

  it('runs executeMultiple (sequence), keeping trigger bodies with CASE ... END; intact', async () => {
    await client.executeMultiple(`
      CREATE TABLE seq_log (msg TEXT); -- comment with ; inside
      CREATE TRIGGER seq_trg AFTER INSERT ON seq_log BEGIN
        INSERT INTO items (name, qty) VALUES ('trg:' || new.msg, CASE WHEN new.msg = 'a;b' THEN 1 ELSE 0 END);
      END;
      INSERT INTO seq_log VALUES ('a;b');
    `);
    expect(await count("SELECT qty FROM items WHERE name = 'trg:a;b'")).toBe(1n);
    await expect(client.execute('SELECT 1; SELECT 2')).rejects.toMatchObject({ code: 'SQL_MANY_STATEMENTS' });
  });

  it('works with drizzle-orm', async () => {
    const users = sqliteTable('users', {
      id: integer('id').primaryKey({ autoIncrement: true }),
      email: text('email').notNull().unique(),
      name: text('name'),
    });
    const db = drizzle(createClient({ url: server.url }));
    const [created] = await db.insert(users).values({ email: 'ada@example.com', name: 'Ada' }).returning();
    expect(created).toMatchObject({ email: 'ada@example.com', name: 'Ada' });
    expect(typeof created!.id).toBe('number');
    await db.insert(users).values({ email: 'bob@example.com', name: null });
    const rows = await db.select().from(users).where(eq(users.email, 'ada@example.com'));
    expect(rows).toEqual([created]);
    expect(await db.$count(users)).toBe(2);
    await expect(db.insert(users).values({ email: 'ada@example.com' })).rejects.toThrow();
  });

  it('speaks the raw protocol: batons, stored SQL, batch conditions, describe, errors', async () => {
    const r1 = await pipeline({
      baton: null,
      requests: [
        { type: 'store_sql', sql_id: 1, sql: 'SELECT :x AS x' },
        { type: 'execute', stmt: { sql_id: 1, named_args: [{ name: ':x', value: { type: 'text', value: 'hi' } }] } },
        { type: 'describe', sql: 'SELECT id, name FROM items WHERE id = ? AND name = :n' },
        { type: 'execute', stmt: { sql: 'BEGIN' } },
        { type: 'get_autocommit' },
        {
          type: 'batch',
          batch: {
            steps: [
              { stmt: { sql: 'SELECT no_such_column' } },
              { condition: { type: 'error', step: 0 }, stmt: { sql: 'SELECT 1' } },
              { condition: { type: 'ok', step: 0 }, stmt: { sql: 'SELECT 2' } },
              {
                condition: {
                  type: 'and',
                  conds: [
                    { type: 'not', cond: { type: 'is_autocommit' } },
                    { type: 'ok', step: 1 },
                  ],
                },
                stmt: { sql: 'SELECT 3', want_rows: false },
              },
            ],
          },
        },
        { type: 'execute', stmt: { sql: 'SELECT 1', args: [{ type: 'integer', value: '1' }] } },
      ],
    });
    expect(r1.status).toBe(200);
    const b1 = (await r1.json()) as { baton: string; base_url: null; results: any[] };
    expect(typeof b1.baton).toBe('string');
    const [stored, exec, desc, , autocommit, batch, extraArg] = b1.results;
    expect(stored).toEqual({ type: 'ok', response: { type: 'store_sql' } });
    expect(exec.response.result.rows).toEqual([[{ type: 'text', value: 'hi' }]]);
    expect(desc.response.result).toEqual({
      params: [{ name: null }, { name: ':n' }],
      cols: [
        { name: 'id', decltype: 'INTEGER' },
        { name: 'name', decltype: 'TEXT' },
      ],
      is_explain: false,
      is_readonly: true,
    });
    expect(autocommit.response.is_autocommit).toBe(false);
    const { step_results, step_errors } = batch.response.result;
    expect(step_errors[0].message).toContain('no_such_column');
    expect(step_results.map((r: unknown) => r !== null)).toEqual([false, true, false, true]);
    expect(step_results[3].rows).toEqual([]);
    expect(extraArg).toMatchObject({ type: 'error', error: { code: 'ARGS_INVALID' } });

    // The baton is single-use; the next one refers to the same connection (still inside BEGIN).
    const r2 = await pipeline({
      baton: b1.baton,
      requests: [{ type: 'get_autocommit' }, { type: 'execute', stmt: { sql: 'ROLLBACK' } }, { type: 'close' }],
    });
    const b2 = (await r2.json()) as { baton: string | null; results: any[] };
    expect(b2.results[0].response.is_autocommit).toBe(false);
    expect(b2.baton).toBeNull();
    const reused = await pipeline({ baton: b1.baton, requests: [] });
    expect(reused.status).toBe(400);
    expect(reused.headers.get('content-type')).toBe('application/json');
    expect(((await reused.json()) as { message: string }).message).toMatch(/baton/i);
  });

  it('closes idle streams and rolls back their open transaction', async () => {
    const r = await pipeline({
      baton: null,
      requests: [
        { type: 'execute', stmt: { sql: 'BEGIN IMMEDIATE' } },
        { type: 'execute', stmt: { sql: "INSERT INTO items (name) VALUES ('idle')" } },
      ],
    });
    const { baton } = (await r.json()) as { baton: string };
    await new Promise((res) => setTimeout(res, 800)); // idleTimeoutMs is 500 in this suite
    expect((await pipeline({ baton, requests: [{ type: 'execute', stmt: { sql: 'COMMIT' } }] })).status).toBe(400);
    expect(await count("SELECT count(*) FROM items WHERE name = 'idle'")).toBe(0n);
    // The write lock was released: a new write succeeds immediately.
    await client.execute("INSERT INTO items (name) VALUES ('after-idle')");
  });

  it('rejects bodies over 10 MiB with 413', async () => {
    const big = await pipeline({
      baton: null,
      requests: [{ type: 'execute', stmt: { sql: `SELECT '${'x'.repeat(11 * 1024 * 1024)}'` } }],
    });
    expect(big.status).toBe(413);
    const justUnder = await pipeline({
      baton: null,
      requests: [{ type: 'execute', stmt: { sql: `SELECT length('${'x'.repeat(1024 * 1024)}')` } }, { type: 'close' }],
    });
    expect(justUnder.status).toBe(200);
  });
});

describe('libsql dev server with an auth token', () => {
  let authed: Server;
  beforeAll(async () => {
    authed = await startLibsqlDevServer({ path: path.join(dir, 'auth.db'), authToken: 's3cret' });
  });
  afterAll(async () => authed?.close());

  it('requires Authorization: Bearer <token>', async () => {
    for (const authToken of [undefined, 'wrong']) {
      const c = createClient({ url: authed.url, authToken });
      await expect(c.execute('SELECT 1')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      c.close();
    }
    expect((await fetch(`${authed.url}/v2`)).status).toBe(401);
    const good = createClient({ url: authed.url, authToken: 's3cret' });
    expect((await good.execute('SELECT 41 + 1 AS n')).rows[0]!.n).toBe(42);
    good.close();
  });
});

describe('libsql dev server shutdown', () => {
  it('closes cleanly while a stream is waiting for a lock (no crash, waiting request fails)', async () => {
    const srv = await startLibsqlDevServer({ path: path.join(dir, 'shutdown.db') });
    const c = createClient({ url: srv.url });
    await c.execute('CREATE TABLE t (x)');
    const holder = await c.transaction('write');
    await holder.execute('INSERT INTO t VALUES (1)');
    // Raw batch: after the waiting step, the is_autocommit condition touches the connection again,
    // which must not happen once shutdown has closed it (libsql-js would abort the process).
    const waiting = fetch(`${srv.url}/v2/pipeline`, {
      method: 'POST',
      body: JSON.stringify({
        baton: null,
        requests: [
          {
            type: 'batch',
            batch: {
              steps: [
                { stmt: { sql: 'INSERT INTO t VALUES (2)' } },
                { condition: { type: 'is_autocommit' }, stmt: { sql: 'SELECT 1' } },
              ],
            },
          },
        ],
      }),
    }).then(
      (r) => (r.ok ? 'resolved' : 'rejected'),
      () => 'rejected',
    );
    await new Promise((r) => setTimeout(r, 100));
    await srv.close();
    expect(await waiting).toBe('rejected');
    c.close();
    // The process survived; the holder's uncommitted row was rolled back when its stream was closed.
    const srv2 = await startLibsqlDevServer({ path: path.join(dir, 'shutdown.db') });
    const c2 = createClient({ url: srv2.url });
    expect((await c2.execute('SELECT count(*) AS n FROM t')).rows[0]!.n).toBe(0);
    c2.close();
    await srv2.close();
  });

  it('serves @libsql/client/web (the build used inside workerd)', async () => {
    const { createClient: createWebClient } = await import('@libsql/client/web');
    const srv = await startLibsqlDevServer({ path: path.join(dir, 'web.db') });
    const web = createWebClient({ url: srv.url });
    await web.batch(
      ['CREATE TABLE w (id INTEGER PRIMARY KEY, s TEXT)', { sql: 'INSERT INTO w (s) VALUES (?)', args: ['from web'] }],
      'write',
    );
    expect((await web.execute('SELECT s FROM w')).rows[0]!.s).toBe('from web');
    web.close();
    await srv.close();
  });
});

/**
 * Statements built once and bound to values at each use (reusableStatement): the same rows and results
 * as the statement built at the call, in a batch's transaction or alone, each placeholder's value
 * encoded as its column encodes it, a null kept as SQL NULL.
 */
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useEmbeddedDb } from '../../../test/harness/embedded-db.js';
import { auditOutbox } from '../../../schema/index.js';
import { createDb, reusableStatement } from './index.js';

const t = useEmbeddedDb('prepared');

let builds = 0;
const insertEvent = reusableStatement(
  (d, p) => {
    builds++;
    return d
      .insert(auditOutbox)
      .values({ id: p.id, at: p.at, stream: 'crud_admin', type: 'settings.changed', data: p.data });
  },
  ['id', 'at', 'data'],
);
const eventById = reusableStatement(
  (d, p) => d.select({ id: auditOutbox.id, data: auditOutbox.data }).from(auditOutbox).where(eq(auditOutbox.id, p.id)),
  ['id'],
);
const stamp = reusableStatement(
  (d, p) => d.run(sql`update ${auditOutbox} set attempts = attempts + 1 where id = ${p.id}`),
  ['id'],
);

describe('reusableStatement', () => {
  it('joins a batch: the same SQL, rows and results as the statement built at the call', async () => {
    const built = t.db
      .insert(auditOutbox)
      .values({ id: 'built', at: 1, stream: 'crud_admin', type: 'settings.changed', data: { a: [1, 'x'] } });
    expect(insertEvent(t.db, { id: 'bound', at: 1, data: { a: [1, 'x'] } }).getQuery().sql).toBe(built.toSQL().sql);
    const [a, b, rows, none, updated] = await t.db.batch([
      built,
      insertEvent(t.db, { id: 'bound', at: 1, data: { a: [1, 'x'] } }),
      eventById(t.db, { id: 'bound' }),
      eventById(t.db, { id: 'nobody' }),
      stamp(t.db, { id: 'bound' }),
    ]);
    expect(b.rowsAffected).toBe(a.rowsAffected);
    expect(rows).toEqual([{ id: 'bound', data: { a: [1, 'x'] } }]);
    expect(none).toEqual([]);
    expect(updated.rowsAffected).toBe(1);
    const stored = await t.client.execute(
      `select id, data from audit_outbox where id in ('built', 'bound') order by id`,
    );
    expect(stored.rows.map((r) => [r.id, r.data])).toEqual([
      ['bound', '{"a":[1,"x"]}'],
      ['built', '{"a":[1,"x"]}'],
    ]);
  });

  it('keeps a null as SQL NULL, as a built statement binds it (not the JSON text "null")', async () => {
    await insertEvent(t.db, { id: 'no-data', at: 2, data: null });
    const r = await t.client.execute(`select data is null as empty from audit_outbox where id = 'no-data'`);
    expect(r.rows[0]!.empty).toBe(1);
  });

  it('builds once per database handle, binds new values at each use', async () => {
    const before = builds;
    for (let i = 0; i < 5; i++) await insertEvent(t.db, { id: `many-${i}`, at: i, data: { i } });
    expect(builds).toBe(before);
    const other = createDb(t.client);
    await insertEvent(other, { id: 'other-handle', at: 1, data: null });
    expect(builds).toBe(before + 1);
    expect(await eventById(t.db, { id: 'many-3' })).toEqual([{ id: 'many-3', data: { i: 3 } }]);
  });

  it('a missing value throws, naming the placeholder, and writes nothing', async () => {
    expect(() => insertEvent(t.db, { id: 'missing', at: 1 } as never)).toThrow(/placeholder data/);
    expect(await eventById(t.db, { id: 'missing' })).toEqual([]);
  });

  it("is part of its batch's transaction: a later failure rolls it back", async () => {
    await expect(
      t.db.batch([
        insertEvent(t.db, { id: 'rolled-back', at: 1, data: null }),
        insertEvent(t.db, { id: 'bound', at: 1, data: null }), // the primary key exists: fails
      ]),
    ).rejects.toThrow();
    expect(await eventById(t.db, { id: 'rolled-back' })).toEqual([]);
  });
});

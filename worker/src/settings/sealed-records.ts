/**
 * Admin-managed records keyed by name that hold a sealed secret (LDAP servers, OIDC identity
 * providers): reading one or 404, creating with its audit event (a taken name: 409), the "secret
 * required again" rule (http/secret-again.ts), changing and removing with their audit events. Each
 * kind passes in what differs: its table, its words, its secret's field and when a change moves
 * that secret, and its audit event types (docs/architecture.md §2: settings sits below ldap and oidc).
 */
import { asc, eq } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Context } from 'hono';
import { auditInsert, type AuditEventType } from '../audit/events.js';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { assertSecretGivenAgain } from '../http/secret-again.js';
import type { Db } from '../store/index.js';
import { sealSecret } from '../store/secret-box.js';
import { isUniqueViolation } from '../store/unique-violation.js';

export interface SealedRecordKind<Row extends { name: string }> {
  /** Its table, keyed by `name`; `Row` is its `$inferSelect`. */
  table: SQLiteTable & { name: SQLiteColumn };
  /** The record in words after "no" and "a(n) ... named": "LDAP server", "identity provider". */
  noun: string;
  /** "a" or "an", for the 409 detail. */
  article: 'a' | 'an';
  events: { created: AuditEventType; updated: AuditEventType; deleted: AuditEventType };
  /** The data of the created event (never the secret). */
  createdData(row: Row): Record<string, unknown>;
  /** The secret's field in the request body, in words, and when a change would send it somewhere new. */
  secret: {
    path: string;
    what: string;
    /** Why `change` moves the stored secret (empty: it goes nowhere new). */
    moves(before: Row, change: Partial<Row>): string[];
    /** Whether a stored secret would follow `change`. */
    stored(before: Row, change: Partial<Row>): boolean;
  };
}

type Batch = [BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]];

/** The operations on one kind of sealed record. */
export function sealedRecords<Row extends { name: string }>(kind: SealedRecordKind<Row>) {
  const { table } = kind;
  const audit = (c: Context<AppEnv>, type: AuditEventType, data: Record<string, unknown>) =>
    auditInsert(c.var.scope.db, c.var.scope.now(), {
      stream: 'crud_admin',
      type,
      actor: c.var.principal.user,
      request: c.var.scope.request,
      data,
    });

  async function find(db: Db, name: string): Promise<Row | undefined> {
    const rows = (await db.select().from(table).where(eq(table.name, name)).limit(1)) as Row[];
    return rows[0];
  }

  return {
    /** Every record, by name. */
    list: (db: Db): Promise<Row[]> => db.select().from(table).orderBy(asc(table.name)) as Promise<Row[]>,

    /** The record named `name`, if any. */
    find,

    /** The record named `name`, or 404. */
    async byName(db: Db, name: string): Promise<Row> {
      const row = await find(db, name);
      if (!row) throw new ProblemError('NOT_FOUND', { detail: `no ${kind.noun} named ${name}` });
      return row;
    },

    /** The secret sealed with the current key, for a column. */
    seal: (c: Context<AppEnv>, secret: string): Promise<string> => sealSecret(c.var.scope.config, secret),

    /** 422 naming the secret's field when `change` would move the stored secret without giving it again. */
    assertSecretGivenAgain(before: Row, change: Partial<Row>, given: boolean): void {
      assertSecretGivenAgain({
        location: 'json',
        path: kind.secret.path,
        what: kind.secret.what,
        reasons: kind.secret.moves(before, change),
        stored: kind.secret.stored(before, change),
        given,
      });
    },

    /** Inserts `row` with its created event; 409 when the name is taken. */
    async create(c: Context<AppEnv>, row: Row): Promise<void> {
      try {
        await c.var.scope.db.batch([
          c.var.scope.db.insert(table).values(row as never),
          audit(c, kind.events.created, kind.createdData(row)),
        ]);
      } catch (err) {
        if (isUniqueViolation(err))
          throw new ProblemError('CONFLICT', { detail: `${kind.article} ${kind.noun} named ${row.name} exists` });
        throw err;
      }
    },

    /**
     * Sets `set` on the record `before` with its updated event (`data`), and runs `also` in the same
     * batch (their results are returned). `conflict`: the 409 detail when a unique index refuses the
     * batch; without it that error goes on.
     */
    async update(
      c: Context<AppEnv>,
      before: Row,
      set: Partial<Row>,
      data: Record<string, unknown>,
      { also = [], conflict }: { also?: BatchItem<'sqlite'>[]; conflict?: string } = {},
    ): Promise<unknown[]> {
      try {
        const batch: Batch = [
          c.var.scope.db
            .update(table)
            .set(set as never)
            .where(eq(table.name, before.name)),
          audit(c, kind.events.updated, { name: before.name, ...data }),
          ...also,
        ];
        return (await c.var.scope.db.batch(batch)).slice(2);
      } catch (err) {
        if (conflict !== undefined && isUniqueViolation(err)) throw new ProblemError('CONFLICT', { detail: conflict });
        throw err;
      }
    },

    /** Deletes the record `row` with its deleted event. */
    async remove(c: Context<AppEnv>, row: Row): Promise<void> {
      await c.var.scope.db.batch([
        c.var.scope.db.delete(table).where(eq(table.name, row.name)),
        audit(c, kind.events.deleted, { name: row.name }),
      ]);
    },
  };
}

/**
 * DB_SCHEMA on libSQL. SQLite has no schemas: one libSQL database is one schema. DB_SCHEMA is the
 * name the database is stamped with at its first migration; a service whose DB_SCHEMA differs from
 * the stamp refuses to use the database, so two deployments never share (and corrupt) one database
 * by mistake.
 */
import type { Db } from './db.js';
import { claimMeta } from './settings-store.js';

export const SCHEMA_STAMP_KEY = 'db_schema';

/** Thrown when the database belongs to another DB_SCHEMA. */
export class SchemaMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly found: string,
  ) {
    super(
      `the database is stamped with DB_SCHEMA "${found}", but this service uses DB_SCHEMA "${expected}" ` +
        `(AUTH_DB_SCHEMA)`,
    );
    this.name = 'SchemaMismatchError';
  }
}

/** Stamps an unstamped database with `schemaName`, or checks that the stamp matches. */
export async function ensureSchemaStamp(db: Db, schemaName: string): Promise<void> {
  const found = await claimMeta(db, SCHEMA_STAMP_KEY, schemaName);
  if (found !== schemaName) throw new SchemaMismatchError(schemaName, found);
}

/** The typed database handle every capability uses; built from a libSQL client by the host. */
import type { Client } from '@libsql/client';
import type { LibSQLDatabase } from 'drizzle-orm/libsql/driver-core';
// drizzle's web entry only wraps the client it is given; it works with the embedded client too.
import { drizzle } from 'drizzle-orm/libsql/web';
import * as schema from '../../../schema/index.js';

/** drizzle over libSQL; `$client` is the libSQL client, for the few raw batches. */
export type Db = LibSQLDatabase<typeof schema> & { $client: Client };

/**
 * Wraps a libSQL client (embedded on Node, HTTP on the edge) in drizzle with the service schema.
 * Writes that can change a credential invalidate the credential cache themselves (accounts/writes.ts).
 */
export function createDb(client: Client): Db {
  return drizzle(client, { schema });
}

export { schema };

/**
 * The Node host's data folder: the folder of an embedded database file (`data/` for the default
 * `file:data/auth.db`), else `data/` in the working directory (a remote or in-memory database). The
 * development outbox (mail-outbox.ts) and the kept sealing key (sealing-key.ts) live there.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfigSnapshot } from '../src/config/index.js';

/** The absolute path of the data folder for LIBSQL_URL. */
export function dataFolder(config: ConfigSnapshot): string {
  const url = config.get('LIBSQL_URL');
  const bare = url.split('?')[0]!;
  const path = bare.startsWith('file:') ? bare.slice('file:'.length) : '';
  if (path === '' || path === ':memory:') return resolve('data');
  const file = path.startsWith('//') ? fileURLToPath(bare) : decodeURIComponent(path);
  return resolve(dirname(file));
}

/** Whether LIBSQL_URL names an in-memory database (nothing outlives the process). */
export function inMemoryDatabase(config: ConfigSnapshot): boolean {
  const url = config.get('LIBSQL_URL').split('?')[0]!;
  return url === 'file::memory:' || url === 'file:' || url === ':memory:';
}

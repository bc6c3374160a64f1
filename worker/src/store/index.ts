export { createDb, type Db } from './db.js';
export { loadSavedSettings, readMeta, claimMeta } from './settings-store.js';
export { ensureSchemaStamp, SchemaMismatchError, SCHEMA_STAMP_KEY } from './schema-stamp.js';
export { preparedPerDb } from './prepared.js';

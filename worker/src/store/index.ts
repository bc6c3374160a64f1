export { createDb, type Db } from './db.js';
export {
  loadSavedSettings,
  readMeta,
  claimMeta,
  metaQuery,
  savedSettingsQuery,
  savedValues,
} from './settings-store.js';
export { ensureSchemaStamp, SchemaMismatchError, SCHEMA_STAMP_KEY } from './schema-stamp.js';
export {
  preparedPerDb,
  reusableStatement,
  type BoundStatement,
  type ExactValues,
  type PlaceholderValues,
  type ReusableStatement,
} from './prepared.js';
export {
  CredentialCache,
  CREDENTIAL_CACHE_MAX,
  CREDENTIAL_CACHE_TTL_MS,
  invalidateAccount,
  writeMark,
} from './credential-cache.js';
export {
  databaseBusyProblem,
  databaseFetch,
  databaseUnreachable,
  databaseUnreachableProblem,
  isDatabaseBusy,
  DATABASE_BUSY_RETRY_AFTER_S,
} from './db-unavailable.js';

/** Where the log store is, as the bridge's calls need it (the effective LOGSTORE_* values). */
import { LOGSTORE_PLACEHOLDER, type ConfigSnapshot } from '../config/index.js';
import type { LogstoreTarget } from '../../../schema/bridge/index.js';

/** The store's target, or null while LOGSTORE_URLS is still the specification's placeholder. */
export function logstoreTarget(config: ConfigSnapshot): LogstoreTarget | null {
  const urls = config.get('LOGSTORE_URLS').trim();
  if (urls === LOGSTORE_PLACEHOLDER) return null;
  return {
    urls: urls
      .split(';')
      .map((u) => u.trim())
      .filter(Boolean),
    timeoutMs: config.get('LOGSTORE_TIMEOUT') * 1000,
    verifyCerts: config.get('LOGSTORE_VERIFY_CERTS'),
  };
}

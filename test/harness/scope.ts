/** A request scope for unit tests of domain code (no HTTP): what the app's middleware would build. */
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { createPasswordVerifier } from '../../worker/src/passwords/verifier.js';
import type { ConfigSnapshot } from '../../worker/src/config/index.js';
import { createLogger } from '../../worker/src/http/logger.js';
import type { RequestMeta, RequestScope } from '../../worker/src/http/scope.js';
import type { Db } from '../../worker/src/store/index.js';

/** A scope over `db` and `config` at the instant `now`, for a request from `request` (defaults: a test client). */
export function testScope(
  db: Db,
  config: ConfigSnapshot,
  o: { now?: number; request?: Partial<RequestMeta> } = {},
): RequestScope {
  const now = o.now ?? Date.now();
  return {
    db,
    config,
    now: () => now,
    request: { id: crypto.randomUUID(), ip: '192.0.2.1', userAgent: 'unit-test', host: 'unit-host', ...o.request },
    logger: createLogger({ threshold: () => 'CRITICAL' }),
    verifier: createPasswordVerifier(createNodeNativeHasher()),
    sessionKeys: () => Promise.reject(new Error('no session keys in this test scope')),
    inBackground: () => {},
  };
}

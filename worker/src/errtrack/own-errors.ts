/**
 * Hooks the reporter into the app's error handler: an unhandled error of a request (a 500) is
 * reported to ERRTRACK_DSN after the response, with `waitUntil` on the edge and as a detached
 * promise on Node; a failed report is only logged.
 */
import type { BridgeClient } from '../bridge/client.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Logger } from '../http/logger.js';
import { reportError, secretValues } from './reporter.js';

/** What reporting needs of the service, and where the report runs after the response. */
export interface OwnErrorContext {
  /** The environment snapshot (ERRTRACK_* are restart-only). */
  env: ConfigSnapshot;
  bridge?: BridgeClient;
  clock: () => number;
  logger?: Logger;
  background: (work: () => Promise<unknown>) => void;
}

/** Reports `err` of a request in the background, when ERRTRACK_DSN and ERRTRACK_ENV are set. */
export function reportUnhandled(
  o: OwnErrorContext,
  request: { method: string; url: URL; requestId?: string },
  err: unknown,
): void {
  const env = o.env;
  if (env.get('ERRTRACK_DSN') === '' || env.get('ERRTRACK_ENV') === '') return;
  o.background(() =>
    reportError(
      {
        dsn: env.get('ERRTRACK_DSN'),
        environment: env.get('ERRTRACK_ENV'),
        ca: env.get('ERRTRACK_CA'),
        bridge: o.bridge,
        secrets: secretValues(env),
        logger: 'auth-service',
        clock: o.clock,
      },
      err,
      { method: request.method, url: `${request.url.origin}${request.url.pathname}`, requestId: request.requestId },
    ).catch((e: unknown) => {
      o.logger?.warning('error report not delivered', { err: e instanceof Error ? e.message : String(e) });
    }),
  );
}

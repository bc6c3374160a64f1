/**
 * Hooks the reporter into the app's error handler: an unhandled error of a request (a 500) is
 * reported to ERRTRACK_DSN after the response, with `waitUntil` on the edge and as a detached
 * promise on Node; a failed report is only logged.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import { reportError, secretValues } from './reporter.js';

/** Reports `err` of request `c` in the background, when ERRTRACK_DSN and ERRTRACK_ENV are set. */
export function reportUnhandled(c: Context<AppEnv>, err: unknown): void {
  const deps = c.var.deps;
  if (!deps) return;
  const env = deps.config.env;
  if (env.get('ERRTRACK_DSN') === '' || env.get('ERRTRACK_ENV') === '') return;
  const url = new URL(c.req.url);
  const work = reportError(
    { dsn: env.get('ERRTRACK_DSN'), environment: env.get('ERRTRACK_ENV'), ca: env.get('ERRTRACK_CA'), bridge: deps.bridge, secrets: secretValues(env), logger: 'auth-service', clock: deps.clock },
    err,
    { method: c.req.method, url: `${url.origin}${url.pathname}`, requestId: c.var.requestId },
  ).catch((e: unknown) => c.var.logger?.warning('error report not delivered', { err: e instanceof Error ? e.message : String(e) }));
  try {
    c.executionCtx.waitUntil(work);
  } catch {
    // No ExecutionContext (Node host): the promise runs on by itself.
  }
}

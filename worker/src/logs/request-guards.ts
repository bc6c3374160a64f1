/**
 * What the logs endpoints check before any work: the log type in the path is one of the streams
 * (else 404, so no caller string ever becomes an index name), the query string holds only the
 * route's own parameters (the store's `expand_wildcards`, `routing`, `preference`, `scroll`, ... are
 * refused by name). Bodies are bounded by the service-wide limit (http/body-limit.ts).
 */
import type { MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { isStream } from './streams.js';

/** 404 unless the path's `audit_log_type` is a stream. */
export const knownStream: MiddlewareHandler<AppEnv> = createMiddleware<AppEnv>(async (c, next) => {
  const type = c.req.param('audit_log_type') ?? '';
  if (!isStream(type)) {
    // Not echoed in full: the value may be anything a caller tried (a very long string, a pattern).
    throw new ProblemError('NOT_FOUND', {
      detail: `no audit log type "${type.slice(0, 64)}"; see GET /v3/logs/audit_log_types`,
    });
  }
  await next();
});

/** Middleware refusing, with 422 naming each, query parameters other than `allowed`. */
export function allowQueryParameters(allowed: readonly string[]): MiddlewareHandler<AppEnv> {
  return createMiddleware<AppEnv>(async (c, next) => {
    const names = [...new Set(new URL(c.req.url).searchParams.keys())].filter((k) => !allowed.includes(k));
    if (names.length > 0) {
      const message =
        allowed.length === 0
          ? 'this endpoint takes no query parameters: the store is queried with the body only'
          : `not a parameter of this endpoint (allowed: ${allowed.join(', ')})`;
      const errors = names.map((n) => ({ location: 'query', path: n.slice(0, 64), message }));
      throw new ProblemError('VALIDATION', {
        detail: `query parameters not allowed: ${errors.map((e) => e.path).join(', ')}`,
        extensions: { errors },
      });
    }
    await next();
  });
}

/**
 * What the logs endpoints check before any work: the log type in the path is one of the streams
 * (else 404, so no caller string ever becomes an index name), the query string holds only the
 * route's own parameters (the store's `expand_wildcards`, `routing`, `preference`, `scroll`, ... are
 * refused by name), and the body is read up to LOGS_BODY_MAX_BYTES (413 before it is buffered).
 */
import type { MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { isStream } from './streams.js';

/** The largest body of POST /v3/logs/{type}/search and /field_caps. */
export const LOGS_BODY_MAX_BYTES = 64 * 1024;

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

function tooLarge(max: number): ProblemError {
  return new ProblemError('PAYLOAD_TOO_LARGE', {
    detail: `the body is larger than ${max} bytes`,
    extensions: { maxBytes: max },
  });
}

/** Reads and drops up to `budget` more bytes (the connection stays usable); cancels beyond that. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let left = budget;
  while (left >= 0) {
    const { done, value } = await reader.read();
    if (done) return;
    left -= value.byteLength;
  }
  await reader.cancel().catch(() => {});
}

/**
 * Middleware reading the body up to `max` bytes, counted while it streams in whatever
 * Content-Length says, then handing the bytes on to the route's validator; past `max`, 413.
 */
export function limitBody(max: number): MiddlewareHandler<AppEnv> {
  return createMiddleware<AppEnv>(async (c, next) => {
    const req = c.req.raw;
    if (!req.body) return next();
    const declared = req.headers.get('content-length');
    const length = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
    if (length !== null && length > 2 * max) {
      await req.body.cancel().catch(() => {});
      throw tooLarge(max);
    }
    const reader = req.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await drain(reader, 2 * max - size);
        throw tooLarge(max);
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    c.req.raw = new Request(req, { body: bytes });
    await next();
  });
}

/**
 * Request ids: the service generates its own id for every request (X-Request-Id of the answer,
 * `requestId` of problems, logs and audit events), so that an id always names exactly one request.
 * A caller's X-Request-Id is not adopted (a repeated or forged one would merge two requests' logs
 * and audit trails): when well-formed it is kept as `clientRequestId` beside ours in every log line
 * of the request, the access log included, which pairs the caller's id with ours.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './context.js';

/** What a caller's id may look like to be logged: short, and no characters that could forge log fields. */
const CLIENT_ID = /^[A-Za-z0-9._:=-]{1,128}$/;

/** Sets `requestId` (ours) and `clientRequestId` (the caller's, when well-formed); answers with ours. */
export function assignRequestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = crypto.randomUUID();
    c.set('requestId', id);
    const incoming = c.req.header('X-Request-Id');
    if (incoming !== undefined && CLIENT_ID.test(incoming)) c.set('clientRequestId', incoming);
    c.header('X-Request-Id', id);
    await next();
  };
}

/**
 * Request ids: the service generates its own id for every request (X-Request-Id of the answer,
 * `requestId` of problems, logs and audit events), so that an id always names exactly one request.
 * A caller's X-Request-Id is not adopted (a repeated or forged one would merge two requests' logs
 * and audit trails): when well-formed it is kept as `clientRequestId` beside ours in every log line
 * of the request, the access log included, which pairs the caller's id with ours. app.ts sets both
 * at the start of every request, and answers with ours (http/response-headers.ts).
 */

/** What a caller's id may look like to be logged: short, and no characters that could forge log fields. */
const CLIENT_ID = /^[A-Za-z0-9._:=-]{1,128}$/;

/** The caller's X-Request-Id when well-formed enough to be logged, else undefined. */
export function acceptedClientRequestId(header: string | undefined): string | undefined {
  return header !== undefined && CLIENT_ID.test(header) ? header : undefined;
}

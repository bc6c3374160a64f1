/**
 * The error responses that follow from an operation's shape, added to every operation when the
 * OpenAPI document is built: one place, so that a new route cannot forget them and generated
 * clients know every status an operation can answer. A route's own entry for a status (with a
 * more specific description) is kept.
 */
import { listOperations, type ApiDocument, type OperationEntry } from './document.js';

const PROBLEM_CONTENT = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

/** The 429 of a client address past its budget of failed password logins (accounts/throttle.ts). */
export const ADDRESS_FAILURES_THROTTLED =
  'ADDRESS_THROTTLED: too many failed password logins from the client address (AUTH_ADDRESS_FAILED_COUNT ' +
  'within AUTH_ADDRESS_FAILED_WINDOW_MIN, across all logins); the password was not checked; Retry-After';

/** Shared responses by status: their name in components.responses and what they mean. */
const SHARED: Record<number, { name: string; description: string }> = {
  400: { name: 'MalformedRequest', description: 'Malformed request: the body is not valid JSON or form data' },
  401: {
    name: 'Unauthenticated',
    description:
      'Missing, wrong, expired or revoked credentials (`code` says which); WWW-Authenticate names the accepted ' +
      "schemes, without Basic for a page's script (Sec-Fetch-Dest: empty or X-Requested-With: XMLHttpRequest), " +
      'which browsers would answer with their login prompt',
  },
  403: {
    name: 'Forbidden',
    description:
      'Authenticated but not allowed: the role, a blocked account, an expired password or a cross-site request',
  },
  413: {
    name: 'PayloadTooLarge',
    description:
      'The body is larger than the limit (AUTH_MAX_BODY_SIZE; the Sentry tunnel: ' +
      'FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE), announced or counted while reading: refused before it is buffered',
  },
  415: { name: 'UnsupportedMediaType', description: "The Content-Type is not one of the request body's media types" },
  422: {
    name: 'ValidationFailed',
    description:
      'Validation failed: `errors` lists every bad field (body, path or query); a JSON body nested deeper ' +
      'than 64 levels (`maxDepth`) is refused as a whole',
  },
  429: { name: 'AddressThrottled', description: ADDRESS_FAILURES_THROTTLED },
  500: {
    name: 'InternalError',
    description: 'Unexpected failure (for one, the database does not answer); the cause is logged under the request id',
  },
};

/** Media types of bodies that the route validator checks against their schema. */
const VALIDATED_BODY = /^(application\/([a-z.-]+\+)?json|application\/x-www-form-urlencoded|multipart\/form-data)$/;

/** The statuses an operation can answer because of its shape alone. */
export function sharedStatuses(op: OperationEntry): number[] {
  const statuses = new Set<number>([500]);
  // A body is malformed (400), too large (413) or of another media type (415); JSON and form bodies
  // are validated against their schema (422), other media types (the Sentry tunnel's) are not.
  if (op.requestBody) for (const s of [400, 413, 415]) statuses.add(s);
  if (Object.keys(op.requestBody?.content ?? {}).some((type) => VALIDATED_BODY.test(type))) statuses.add(422);
  // Declared parameters (path, query, header, cookie) are validated before the handler runs.
  if (op.parameters?.length) statuses.add(422);
  // Any credential may be missing or wrong (401) or not enough (403). `security: []` means none.
  if (op.security?.some((requirement) => Object.keys(requirement).length > 0)) {
    statuses.add(401);
    statuses.add(403);
  }
  // A Basic password is a password login: its client address may be throttled (accounts/throttle.ts).
  if (op.security?.some((requirement) => 'basic' in requirement)) statuses.add(429);
  return [...statuses].sort((a, b) => a - b);
}

/** Adds the shared error responses to every operation that lacks them (amends `doc`). */
export function addSharedResponses<D extends ApiDocument>(doc: D): D {
  const components = (doc.components ??= {});
  const responses = (components.responses ??= {});
  for (const { name, description } of Object.values(SHARED))
    responses[name] = { description, content: PROBLEM_CONTENT };
  for (const { op } of listOperations(doc)) {
    const declared = (op.responses ??= {});
    for (const status of sharedStatuses(op)) {
      declared[String(status)] ??= { $ref: `#/components/responses/${SHARED[status]!.name}` };
    }
  }
  return doc;
}

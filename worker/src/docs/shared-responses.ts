/**
 * The error responses that follow from an operation's shape, added to every operation when the
 * OpenAPI document is built: one place, so that a new route cannot forget them and generated
 * clients know every status an operation can answer. A route's own entry for a status (with a
 * more specific description) is kept.
 */
import { SELF_LIMITED_BODIES } from '../http/body-limit.js';
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
      'The body is larger than AUTH_MAX_BODY_SIZE, announced or counted while reading: refused before it is ' +
      'buffered. Any request is bounded, whatever its method, also one to an operation that takes no body',
  },
  415: { name: 'UnsupportedMediaType', description: "The Content-Type is not one of the request body's media types" },
  422: {
    name: 'ValidationFailed',
    description:
      'Validation failed: `errors` lists every bad field (body, path or query); a JSON body nested deeper ' +
      'than 64 levels (`maxDepth`) is refused as a whole, also one sent to an operation that takes no body',
  },
  405: {
    name: 'MethodNotAllowed',
    description:
      'A path parameter that is a dot segment (`.` or `..`, which URL parsers resolve) addressed another path, ' +
      'which does not take this method: Allow names the methods it does',
  },
  429: { name: 'AddressThrottled', description: ADDRESS_FAILURES_THROTTLED },
  500: {
    name: 'InternalError',
    description: 'Unexpected failure (for one, the database does not answer); the cause is logged under the request id',
  },
};

/** Media types of bodies that the route validator checks against their schema. */
const VALIDATED_BODY = /^(application\/([a-z.-]+\+)?json|application\/x-www-form-urlencoded|multipart\/form-data)$/;

/**
 * The statuses an operation can answer because of its shape alone; `selfLimited`: its path reads its body
 * itself (SELF_LIMITED_BODIES), past the body limit and the JSON nesting bound.
 */
export function sharedStatuses(op: OperationEntry, selfLimited = false): number[] {
  // Any request may carry a body, and the body limit bounds every one before its route runs (413:
  // http/body-limit.ts), so an operation without a request body answers it too.
  const statuses = new Set<number>([413, 500]);
  // The limit measures the nesting of every JSON body it bounds (http/json-depth.ts), whatever the operation:
  // a body nested too deep is a 422, also for an operation that takes no body.
  if (!selfLimited) statuses.add(422);
  // A body is malformed (400) or of another media type (415); JSON and form bodies are validated
  // against their schema (422), other media types (the Sentry tunnel's) are not.
  if (op.requestBody) for (const s of [400, 415]) statuses.add(s);
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

/** Whether a concrete path's segments fit a path template's (a parameter fits any non-empty segment). */
function fits(segments: string[], template: string[]): boolean {
  return (
    segments.length === template.length &&
    template.every((t, i) => t === segments[i] || (t.startsWith('{') && segments[i] !== ''))
  );
}

/**
 * Whether a path parameter of the operation, sent as a dot segment, reaches another path of the
 * document that lacks `method`: the router then answers 405 (app.ts). Clients and the URL parser
 * resolve `.` and `..` before the router sees the path, so `/v4/users/./block` is `/v4/users/block`,
 * which `/v4/users/{userId}` fits.
 */
function dotSegmentMeets405(doc: ApiDocument, method: string, path: string): boolean {
  const segments = path.split('/');
  const templates = Object.keys(doc.paths ?? {}).map((p) => [p, p.split('/')] as const);
  for (const [i, segment] of segments.entries()) {
    if (!segment.startsWith('{')) continue;
    // `.` drops the segment, `..` also the one before it.
    // A last dot segment leaves a trailing slash (RFC 3986 §5.2.4), which no route takes (404).
    const rest = i === segments.length - 1 ? [''] : segments.slice(i + 1);
    const dot = [...segments.slice(0, i), ...rest];
    const dotDot = [...segments.slice(0, i - 1), ...rest];
    for (const resolved of [dot, dotDot]) {
      const concrete = resolved.map((s) => (s.startsWith('{') ? 'x' : s));
      for (const [other, template] of templates) {
        if (fits(concrete, template) && !(method in doc.paths![other]!)) return true;
      }
    }
  }
  return false;
}

/** Adds the shared error responses to every operation that lacks them (amends `doc`). */
export function addSharedResponses<D extends ApiDocument>(doc: D): D {
  const components = (doc.components ??= {});
  const responses = (components.responses ??= {});
  for (const { name, description } of Object.values(SHARED))
    responses[name] = { description, content: PROBLEM_CONTENT };
  for (const { method, path, op } of listOperations(doc)) {
    const declared = (op.responses ??= {});
    // A path that bounds its body itself: its 413 names its own limit.
    const ownLimit = SELF_LIMITED_BODIES[path];
    if (ownLimit) {
      const description = `The body is larger than ${ownLimit}, announced or counted while reading`;
      declared['413'] = { description, content: PROBLEM_CONTENT };
    }
    const statuses = sharedStatuses(op, ownLimit !== undefined);
    if (dotSegmentMeets405(doc, method, path)) statuses.push(405);
    for (const status of statuses) {
      declared[String(status)] ??= { $ref: `#/components/responses/${SHARED[status]!.name}` };
    }
  }
  return doc;
}

/**
 * Drops the shared responses no operation refers to (amends `doc`): a later step may have replaced
 * one everywhere (the 429 of Basic, with the password-check bounds: docs/routes.ts).
 */
export function dropUnusedResponses<D extends ApiDocument>(doc: D): D {
  const used = JSON.stringify(doc.paths ?? {});
  const responses = doc.components?.responses ?? {};
  for (const name of Object.keys(responses)) {
    if (!used.includes(`"#/components/responses/${name}"`)) delete responses[name];
  }
  return doc;
}

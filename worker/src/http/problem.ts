/**
 * The one error type of the service, rendered once as RFC 9457 application/problem+json.
 * Each code has a stable `type` URI (urn:auth-service:problem:<code>) that clients can switch on.
 */
import { z } from '@hono/zod-openapi';
import { problemType as typeOfCode } from '../../../schema/bridge/problem-type.js';

/** Every problem code, its HTTP status and title. Mapped in this one place. */
export const PROBLEM_CODES = {
  MALFORMED_REQUEST: { status: 400, title: 'Malformed request' },
  UNKNOWN_LDAP_SERVER: { status: 400, title: 'Unknown LDAP server' },
  INVALID_RESET_TOKEN: { status: 400, title: 'The password-reset link is invalid, used or expired' },
  QUERY_REJECTED: { status: 400, title: 'The log store rejected the query' },
  UNAUTHENTICATED: { status: 401, title: 'Authentication required' },
  INVALID_CREDENTIALS: { status: 401, title: 'Invalid credentials' },
  ACCOUNT_LOCKED: { status: 401, title: 'Too many login attempts: try again later' },
  ACCOUNT_BLOCKED: { status: 403, title: 'Account blocked' },
  PASSWORD_EXPIRED: { status: 403, title: 'Password expired' },
  REAUTHENTICATION_REQUIRED: { status: 403, title: 'Re-authentication with the password required' },
  SECOND_FACTOR_REQUIRED: { status: 401, title: 'A second factor is required' },
  SECOND_FACTOR_NOT_ALLOWED_HERE: {
    status: 403,
    title: 'This account has a second factor: use a session or an API token',
  },
  STEP_UP_REQUIRED: { status: 403, title: 'A recent second-factor verification is required' },
  INSUFFICIENT_SCOPE: { status: 403, title: 'The API token does not have the scope this operation needs' },
  MFA_ENROLMENT_REQUIRED: { status: 403, title: 'Enrol a second factor first' },
  LOGIN_NOT_ALLOWED: { status: 403, title: 'The login is not allowed here' },
  PASSWORD_POLICY: { status: 422, title: 'Password refused by the password policy' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  NOT_ACCEPTABLE: { status: 406, title: 'Not acceptable' },
  CONFLICT: { status: 409, title: 'Conflict' },
  MERGE_REQUIRED: { status: 409, title: 'The login belongs to a local account: merge required' },
  LOGIN_CONFLICT: {
    status: 409,
    title: 'The login belongs to another external account: an administrator must resolve it',
  },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  VALIDATION: { status: 422, title: 'Validation failed' },
  TOO_MANY_REQUESTS: { status: 429, title: 'Too many requests' },
  PASSWORD_CHECKS_THROTTLED: { status: 429, title: 'Too many password checks from this address: retry later' },
  ADDRESS_THROTTLED: { status: 429, title: 'Too many failed logins from this address: try again later' },
  INTERNAL: { status: 500, title: 'Internal server error' },
  NOT_IMPLEMENTED: { status: 501, title: 'Not implemented' },
  BAD_GATEWAY: { status: 502, title: 'Bad gateway' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
  GATEWAY_TIMEOUT: { status: 504, title: 'Gateway timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** One entry of a validation problem's `errors` list. */
export interface FieldError {
  /** Where the bad input was: json (a JSON body, whichever route), form, query, param, header, cookie. */
  readonly location: string;
  /** Dotted path inside that location ('' for the whole). */
  readonly path: string;
  readonly message: string;
}

export interface ProblemOptions {
  detail?: string;
  /** Extension members (RFC 9457 §3.2), e.g. `errors` or `violations`. */
  extensions?: Record<string, unknown>;
  headers?: Record<string, string>;
  cause?: unknown;
  /**
   * The service log's line for an expected failure of a dependency (5xx other than INTERNAL): one
   * WARNING line without a stack, written by the app's error handler; never sent. `false`: the
   * thrower logged it already. Absent: the handler logs the code, cause and detail.
   */
  log?: ProblemLog | false;
}

/** A problem's log line (msg and fields, never secrets). */
export interface ProblemLog {
  msg: string;
  fields?: Record<string, unknown>;
  /** INFO for a configuration state (e.g. a part that is not set up), not a failure; default WARNING. */
  level?: 'INFO' | 'WARNING';
}

/** A failure meant for the caller; thrown anywhere, rendered by the app's error handler. */
export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly title: string;
  readonly detail: string | undefined;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly log: ProblemLog | false | undefined;

  constructor(code: ProblemCode, o: ProblemOptions = {}) {
    super(o.detail ?? PROBLEM_CODES[code].title, { cause: o.cause });
    this.name = 'ProblemError';
    this.code = code;
    this.status = PROBLEM_CODES[code].status;
    this.title = PROBLEM_CODES[code].title;
    this.detail = o.detail;
    this.extensions = o.extensions ?? {};
    this.headers = o.headers ?? {};
    this.log = o.log;
  }
}

/** The stable type URI of a code. */
export function problemType(code: ProblemCode): string {
  return typeOfCode(code);
}

/** The problem body of an error, as sent. 5xx details are generic unless debug is on. */
export function problemBody(e: ProblemError, instance: string, requestId: string | undefined): Record<string, unknown> {
  return {
    type: problemType(e.code),
    title: e.title,
    status: e.status,
    ...(e.detail !== undefined ? { detail: e.detail } : {}),
    instance,
    code: e.code,
    ...(requestId ? { requestId } : {}),
    ...e.extensions,
  };
}

/** Renders a problem as a Response; `headers` replace the problem's own of the same name. */
export function problemResponse(
  e: ProblemError,
  instance: string,
  requestId: string | undefined,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(problemBody(e, instance, requestId)), {
    status: e.status,
    headers: { 'content-type': 'application/problem+json', ...e.headers, ...headers },
  });
}

/** OpenAPI schema of a problem body. */
export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: 'urn:auth-service:problem:validation' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string(),
    code: z.string().openapi({ example: 'VALIDATION' }),
    requestId: z.string().optional(),
    errors: z
      .array(z.object({ location: z.string(), path: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: 'validation failures, one per bad field' }),
    passwordReason: z
      .enum(['initial', 'reset', 'expired'])
      .optional()
      .openapi({
        description:
          'PASSWORD_EXPIRED of a local account: `initial` (a new account, created to choose its own password at ' +
          'the first login), `reset` (an administrator reset the password to be changed at the next login) or ' +
          '`expired` (its lifetime ended)',
      }),
  })
  .passthrough()
  .openapi('Problem', { description: 'RFC 9457 problem details' });

/**
 * The code that names a status in general where several codes share it: a route declaring 403 or
 * 422 is described as "Forbidden" and "Validation failed", not by the first code of that status in
 * the table ("Account blocked", "Password refused by the password policy").
 */
const GENERAL_CODE: Partial<Record<number, ProblemCode>> = {
  400: 'MALFORMED_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  409: 'CONFLICT',
  422: 'VALIDATION',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

/** The shared error responses every route declares, by status. */
export function problemResponses<S extends number>(...statuses: S[]) {
  const out = {} as Record<
    S,
    { description: string; content: { 'application/problem+json': { schema: typeof ProblemSchema } } }
  >;
  for (const s of statuses) {
    const general = GENERAL_CODE[s];
    const entry = general ? PROBLEM_CODES[general] : Object.values(PROBLEM_CODES).find((p) => p.status === s);
    out[s] = {
      description: entry?.title ?? 'Error',
      content: { 'application/problem+json': { schema: ProblemSchema } },
    };
  }
  return out;
}

/**
 * The console's one way to call the service: the public API under ROOT_PATH, with the session
 * cookie (same origin). CSRF: the browser sends Origin on every unsafe fetch, which is what the
 * service checks (worker/src/http/csrf.ts); nothing else is needed and no token is kept in the page.
 * Failures become ApiError with the problem's `detail`, shown to the user as is.
 */
import { t } from './i18n.js';

/** An RFC 9457 problem as the service sends it. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  requestId?: string;
  [extension: string]: unknown;
}

/** A failed call: HTTP status (0: no answer), the problem, and the response headers. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: Problem,
    readonly headers: Headers = new Headers(),
  ) {
    super(problem.detail ?? problem.title ?? t('error.generic', { status }));
  }

  /** The problem's code (e.g. ACCOUNT_LOCKED), '' when none. */
  get code(): string {
    return this.problem.code ?? '';
  }
}

export interface CallOptions {
  method?: string;
  json?: unknown;
  headers?: Record<string, string>;
  /** false: a refusal is thrown as is, never handed to the refusal handler (a probe). */
  resolve?: boolean;
}

let root = '';

/** Sets ROOT_PATH (from `<body data-root>`), once at start. */
export function setRoot(value: string): void {
  root = value;
}

/** ROOT_PATH of the service. */
export function rootPath(): string {
  return root;
}

/**
 * What the console does about a refusal it can resolve for the user (console/step-up.ts: a step-up
 * asks for a code; an enrolment-only session goes to the security page): true to repeat the call once.
 */
export type RefusalHandler = (err: ApiError) => Promise<boolean>;
let refusalHandler: RefusalHandler | null = null;

/** Sets the refusal handler, once at start. */
export function setRefusalHandler(handler: RefusalHandler): void {
  refusalHandler = handler;
}

/**
 * Calls `path` below ROOT_PATH; resolves to the JSON body (undefined for 204), or throws ApiError.
 * A refusal the handler resolves (e.g. a step-up) is followed by the same call once more.
 */
export async function api<T = unknown>(path: string, o: CallOptions = {}): Promise<T> {
  try {
    return await callOnce<T>(path, o);
  } catch (err) {
    if (err instanceof ApiError && o.resolve !== false && refusalHandler && (await refusalHandler(err)))
      return callOnce<T>(path, o);
    throw err;
  }
}

async function callOnce<T>(path: string, o: CallOptions): Promise<T> {
  // X-Requested-With: no Basic challenge in a 401, so the browser never opens its login prompt.
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'X-Requested-With': 'XMLHttpRequest',
    ...o.headers,
  };
  if (o.json !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${root}${path}`, {
      method: o.method ?? 'GET',
      headers,
      body: o.json === undefined ? undefined : JSON.stringify(o.json),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, { detail: t('error.network') });
  }
  const body = await res.text();
  let parsed: unknown;
  try {
    parsed = body ? JSON.parse(body) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const problem = parsed && typeof parsed === 'object' ? (parsed as Problem) : {};
    throw new ApiError(res.status, { status: res.status, ...problem }, res.headers);
  }
  return parsed as T;
}

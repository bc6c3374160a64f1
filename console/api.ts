/**
 * The console's one way to call the service: the public API under ROOT_PATH, with the session
 * cookie (same origin). CSRF: the browser sends Origin on every unsafe fetch, which is what the
 * service checks (worker/src/http/csrf.ts); nothing else is needed and no token is kept in the page.
 * Failures become ApiError, whose message is the problem in the page's language (`problemMessage`).
 */
import '../worker/src/pages/problem-texts.js';
import { lang, t } from './i18n.js';

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

/** A text of the dictionary, or undefined when it has none. */
function known(key: string, vars: Record<string, string | number> = {}): string | undefined {
  const value = t(key, vars);
  return value === key ? undefined : value;
}

/**
 * A refusal in the page's language (docs/console.md, "Layout and words"): on an English page the API's
 * `detail` (English, and the most precise), else the console's text of the bridge failure (`cause`), of
 * the fields a validation problem names, or of the problem's `code`; never the API's English on a
 * Russian page.
 */
export function problemMessage(problem: Problem, status: number): string {
  if (lang() === 'en' && problem.detail) return problem.detail;
  const cause = typeof problem.cause === 'string' ? known(`problem.cause.${problem.cause}`) : undefined;
  if (cause) return cause;
  const errors = Array.isArray(problem.errors) ? (problem.errors as Array<{ path?: unknown }>) : [];
  const fields = [
    ...new Set(errors.map((e) => (typeof e.path === 'string' ? e.path.replace(/^values\./, '') : '')).filter(Boolean)),
  ];
  if (problem.code === 'VALIDATION' && fields.length > 0)
    return t('problem.VALIDATION.fields', { fields: fields.map((f) => known(`field.${f}`) ?? f).join(', ') });
  return (
    known(`problem.${problem.code ?? ''}`) ??
    (lang() === 'en' ? problem.title : undefined) ??
    t('error.generic', { status })
  );
}

/**
 * A failed call: HTTP status (0: no answer), the problem, and the response headers. Its message is
 * `problemMessage`, or the console's own words (`message`: no answer, a cancelled step-up).
 */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: Problem,
    readonly headers: Headers = new Headers(),
    message?: string,
  ) {
    super(message ?? problemMessage(problem, status));
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
    throw new ApiError(0, {}, undefined, t('error.network'));
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

/**
 * The first-run page (ROOT_PATH/first-run) and the redirect of ROOT_PATH and `/`. While no
 * administrator exists, a person on the service's machine creates the first one in a browser; the
 * page is refused (403) to any other client and gone (404) once an administrator exists.
 */
import { z } from '@hono/zod-openapi';
import { and, eq, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import { passwordPolicy } from '../passwords/policy.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses, type FieldError } from '../http/problem.js';
import { serviceMeta, users } from '../../../schema/index.js';
import { adminExists } from '../accounts/lookup.js';
import { LoginSchema } from '../accounts/login-name.js';
import { FIRST_RUN_PATH } from '../users/bootstrap.js';
import { createLocalAccount } from '../users/create.js';
import { PublicUserSchema, toPublicUser } from '../accounts/model.js';
import { isLocalRequest } from './local-client.js';
import { FIRST_RUN_CODE_TRIES, checkFirstRunCode, dropFirstRunCode } from './code.js';
import { isHiddenSameOrigin } from '../http/csrf.js';
import { CONSOLE_PATH } from '../pages/page.js';
import { FIRST_RUN_CSP, firstRunDone, firstRunForm } from './page.js';
import { requestHeader } from '../http/node-messages.js';
import { publicRoute } from '../auth/protected-route.js';
import { liveAccounts } from '../accounts/live.js';
import { W } from './first-run-api-words.js';

/**
 * The page ROOT_PATH and `/` send a browser to once an administrator exists, below ROOT_PATH: the
 * web console (its home signs a visitor in first). Change it here only.
 */
export function homePath(_o: { docsPrefix: string }): string {
  return `${CONSOLE_PATH}/`;
}

/** service_meta key claimed in the transaction that creates the first administrator. */
const CLAIM_KEY = 'first_admin';

const Form = z
  .object({
    code: z.string().max(100).openapi({
      description: W.d1,
    }),
    login: LoginSchema,
    password: z.string().min(1).max(1024),
    passwordRepeat: z.string().max(1024).optional().openapi({ description: W.d2 }),
  })
  .openapi('FirstRunForm');

// Documented in the OpenAPI description; served by plain handlers (HTML or JSON by Accept, and the
// form checked by the handler so that a browser gets the form back with what to fix).
const getRoute = publicRoute({
  method: 'get',
  operationId: 'getFirstRunPage',
  path: FIRST_RUN_PATH,
  tags: ['user_v4'],
  summary: W.s3,
  description: W.get,
  responses: {
    200: { description: 'the form (HTML)', content: { 'text/html': { schema: z.string() } } },
    ...problemResponses(403, 404),
  },
});

const postRoute = publicRoute({
  method: 'post',
  operationId: 'createFirstAdmin',
  path: FIRST_RUN_PATH,
  tags: ['user_v4'],
  summary: W.s4,
  description: W.post,
  request: { body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: Form } } } },
  responses: {
    201: {
      description: 'the administrator (HTML page for a browser)',
      content: { 'application/json': { schema: PublicUserSchema } },
    },
    ...problemResponses(400, 403, 404, 409, 415, 422, 429),
  },
});

/** 404 once an administrator exists; 403 for a client that is not on this machine. */
async function assertOffered(c: Context<AppEnv>): Promise<void> {
  if (await adminExists(c.var.scope.db)) {
    const detail = 'an administrator exists: the first-run page is gone (a locked-out or forgotten one: npm run ops)';
    throw new ProblemError('NOT_FOUND', { detail });
  }
  if (!isLocal(c)) {
    const detail =
      "the first-run page answers only on the service's own machine: open it from a browser there, " +
      'through 127.0.0.1 or localhost, without a proxy';
    throw new ProblemError('FORBIDDEN', { detail });
  }
}

function isLocal(c: Context<AppEnv>): boolean {
  const deps = c.var.deps;
  return isLocalRequest(c.req.raw, deps.clientAddress?.(c.req.raw, c.env), deps.clientAddressHeader);
}

/**
 * A same-origin form post only (CSRF): the browser's Origin (`null` with Sec-Fetch-Site same-origin
 * is what Chromium sends for this page's form, csrf.ts), else its Sec-Fetch-Site.
 */
function assertSameOrigin(c: Context<AppEnv>): void {
  const origin = requestHeader(c, 'Origin');
  const site = requestHeader(c, 'Sec-Fetch-Site');
  const own = new URL(c.req.url).origin;
  const sameSite = site === undefined || site === 'same-origin' || site === 'none';
  const crossSite = origin !== undefined ? origin !== own && !isHiddenSameOrigin(c, origin) : !sameSite;
  if (crossSite) {
    throw new ProblemError('FORBIDDEN', { detail: 'cross-site form post refused', extensions: { reason: 'csrf' } });
  }
}

/** Refuses the post unless it carries the current one-time code (code.ts); nothing else is read before. */
async function assertCode(c: Context<AppEnv>, given: string): Promise<void> {
  const outcome = await checkFirstRunCode(c.var.scope.db, given);
  if (outcome === 'right') return;
  const extensions = { reason: 'first_run_code' };
  if (outcome === 'used-up') {
    const detail =
      `${FIRST_RUN_CODE_TRIES} wrong one-time codes: this code is used up. Restart the service (npm start, or ` +
      'npm run dev:edge) for a new one-time code in its terminal';
    throw new ProblemError('TOO_MANY_REQUESTS', { detail, extensions });
  }
  const detail =
    outcome === 'none'
      ? 'no one-time code was issued: start the service with npm start (or npm run dev:edge), which prints one'
      : 'the one-time code is missing or wrong: copy it from the terminal (or log) where the service was started';
  throw new ProblemError('FORBIDDEN', { detail, extensions });
}

/** The form's errors as a validation problem. */
function invalid(errors: FieldError[]): ProblemError {
  const detail = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  return new ProblemError('VALIDATION', { detail, extensions: { errors } });
}

const PAGE_HEADERS = { 'Content-Security-Policy': FIRST_RUN_CSP, 'Cache-Control': 'no-store' };

const wantsHtml = (c: Context<AppEnv>) => (requestHeader(c, 'Accept') ?? '').includes('text/html');

/** The page's labels of the fields an error may name (the API's field names are not words of the page). */
const LABELS: Record<string, string> = {
  code: 'One-time code',
  login: 'Login',
  password: 'Password',
  passwordRepeat: 'Repeat the password',
};

function messagesOf(err: ProblemError): string[] {
  const list = (err.extensions.violations ?? err.extensions.errors) as { message: string; path?: string }[] | undefined;
  const named = (v: { message: string; path?: string }) =>
    v.path ? `${LABELS[v.path] ?? v.path}: ${v.message}` : v.message;
  return list?.map(named) ?? [err.detail ?? err.title];
}

/** Registers the first-run page on `api` (below ROOT_PATH) and the redirects of ROOT_PATH and `/` on `app`. */
export function registerFirstRun(app: App, api: App, o: { root: string; docsPrefix: string; title: string }): void {
  const pageUrl = `${o.root}${FIRST_RUN_PATH}`;

  // ROOT_PATH and `/` answered 404, though `npm start` prints ROOT_PATH: they lead somewhere now.
  const home = async (c: Context<AppEnv>) => {
    const target = !(await adminExists(c.var.scope.db)) && isLocal(c) ? pageUrl : `${o.root}${homePath(o)}`;
    return c.redirect(target, 302);
  };
  for (const path of new Set(['/', o.root || '/', `${o.root}/`])) app.get(path, home);

  api.openAPIRegistry.registerPath(getRoute);
  api.openAPIRegistry.registerPath(postRoute);

  api.get(FIRST_RUN_PATH, async (c) => {
    await assertOffered(c);
    const form = firstRunForm({ title: o.title, action: pageUrl, policy: passwordPolicy(c.var.scope.config) });
    return c.html(form, 200, PAGE_HEADERS);
  });

  api.post(FIRST_RUN_PATH, async (c) => {
    await assertOffered(c);
    assertSameOrigin(c);
    const type = requestHeader(c, 'Content-Type') ?? '';
    if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data')) {
      const detail = 'send the form as application/x-www-form-urlencoded';
      throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', { detail });
    }
    const raw = Object.fromEntries(Object.entries(await c.req.parseBody()).filter(([, v]) => typeof v === 'string'));
    const login = typeof raw.login === 'string' ? raw.login : '';
    try {
      await assertCode(c, typeof raw.code === 'string' ? raw.code : '');
      const parsed = Form.safeParse(raw);
      if (!parsed.success) {
        const path = (i: { path: readonly PropertyKey[] }) => i.path.map(String).join('.');
        throw invalid(parsed.error.issues.map((i) => ({ location: 'form', path: path(i), message: i.message })));
      }
      const body = parsed.data;
      if (body.passwordRepeat !== undefined && body.passwordRepeat !== body.password) {
        throw invalid([{ location: 'form', path: 'passwordRepeat', message: 'the two passwords differ' }]);
      }
      const user = await createFirstAdmin(c, body.login, body.password);
      if (!wantsHtml(c)) return c.json(toPublicUser(user, c.var.scope.config), 201);
      const apiUrl = `${new URL(c.req.url).origin}${o.root}`;
      const done = firstRunDone({
        title: o.title,
        login: user.login,
        docsUrl: `${o.root}${o.docsPrefix}`,
        apiUrl,
        signInUrl: `${o.root}${CONSOLE_PATH}/login`,
      });
      return c.html(done, 201, PAGE_HEADERS);
    } catch (err) {
      // A browser gets the form again with what to fix; other clients the problem.
      if (!(err instanceof ProblemError) || !wantsHtml(c) || err.status === 404) throw err;
      const policy = passwordPolicy(c.var.scope.config);
      const code = typeof raw.code === 'string' ? raw.code.slice(0, 100) : '';
      const form = firstRunForm({ title: o.title, action: pageUrl, policy, login, code, errors: messagesOf(err) });
      return c.html(form, err.status as 400, PAGE_HEADERS);
    }
  });
}

/**
 * Creates the administrator in a transaction that also claims CLAIM_KEY, so that of two concurrent
 * first-run posts only one commits (the other's claim violates the key); a claim left from an
 * earlier administrator, when none is left at all, is cleared first.
 */
async function createFirstAdmin(c: Context<AppEnv>, login: string, password: string) {
  const { scope } = c.var;
  const db = scope.db;
  const noAdmin = sql`not exists (select 1 from ${users} where role = 'admin' and ${liveAccounts})`;
  await db.delete(serviceMeta).where(and(eq(serviceMeta.key, CLAIM_KEY), noAdmin));
  try {
    return await createLocalAccount(
      scope,
      { login, password, role: 'admin' },
      {
        actor: null,
        via: 'first-run',
        extra: (u) => [db.insert(serviceMeta).values({ key: CLAIM_KEY, value: u.id }), dropFirstRunCode(db)],
      },
    );
  } catch (err) {
    if (err instanceof ProblemError && err.code === 'CONFLICT' && (await adminExists(db))) {
      const detail = 'an administrator was created meanwhile: the first-run page is gone';
      throw new ProblemError('NOT_FOUND', { detail });
    }
    throw err;
  }
}

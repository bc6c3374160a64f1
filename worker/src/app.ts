/**
 * The app factory: one Hono app for both hosts (edge and Node). It wires the request frame
 * (http/request-frame.ts: request ids, the per-request context, access logs), RFC 9457 errors, 404/405, the
 * OpenAPI docs, every capability's routes and, on test hosts, the test hooks (test-hooks.ts).
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import { methodNotAllowed } from 'hono/method-not-allowed';
import type { Context } from 'hono';
import { registerSessionlessLogins } from './auth/routes.js';
import { challengeForCaller } from './auth/credentials.js';
import { addressBound, createHashSlots, hashConcurrency } from './passwords/admission.js';
import { withHashSlots } from './passwords/verifier.js';
import { registerSessionRoutes } from './sessions/routes.js';
import { registerDocs, type DocsOptions } from './docs/routes.js';
import { registerConsole } from './pages/routes.js';
import { registerErrtrack } from './errtrack/routes.js';
import { reportUnhandled } from './errtrack/own-errors.js';
import { registerHealth } from './health/routes.js';
import type { App, AppDeps, AppEnv } from './http/context.js';
import { limitBody, SELF_LIMITED_BODIES } from './http/body-limit.js';
import { RememberingRouter } from './http/router.js';
import { requestHeader } from './http/node-messages.js';
import { inBackground, type BackgroundWork } from './http/background.js';
import { frameLoggers, requestFrame } from './http/request-frame.js';
import { ProblemError, problemResponse, type FieldError, type ProblemCode } from './http/problem.js';
import { registerMe } from './users/me-routes.js';
import { registerPasskeyRoutes } from './passkeys/routes.js';
import { registerMfa } from './mfa/routes.js';
import {
  databaseBusyProblem,
  databaseUnreachable,
  databaseUnreachableProblem,
  isDatabaseBusy,
  loadSavedSettings,
} from './store/index.js';
import { sessionKeyResolver } from './accounts/session-keys.js';
import { registerAccountCreation } from './users/create-routes.js';
import { registerUserSessions } from './users/session-routes.js';
import { registerAccountAdmin } from './users/account-routes.js';
import { registerServiceTokens } from './users/service-token-routes.js';
import { registerSettings } from './settings/routes.js';
import { registerIdentityProviderAdmin } from './oidc/admin-routes.js';
import { registerServiceAdmin } from './gate/admin-routes.js';
import { registerForwardAuth } from './gate/authz-routes.js';
import { registerIntrospection } from './gate/introspect.js';
import { audienceChoices } from './gate/token-audiences.js';
import { registerLdapServerAdmin } from './ldap/admin-routes.js';
import { registerGroups } from './groups/routes.js';
import { registerOidc } from './oidc/routes.js';
import { registerLogs } from './logs/routes.js';
import { createTestClock, registerTestHooks } from './test-hooks.js';
import { outboxKicker } from './logs/kick.js';
import { registerFirstRun } from './first-run/routes.js';
import { csrfRefusalPage } from './pages/refusal-page.js';
import { CONSOLE_PATH } from './pages/page.js';
import { FIRST_RUN_PATH } from './users/bootstrap.js';
import { createNotificationKicker } from './notifications/kick.js';
import { registerNotifications } from './notifications/routes.js';
import { registerOverview } from './overview/routes.js';
import { createWebhookKicker } from './webhooks/kick.js';
import { registerWebhooks } from './webhooks/routes.js';
import { registerTestMail } from './notifications/mail-test-routes.js';
import { registerPasswordReset } from './password-reset/routes.js';
import { observeRequest, registerMetrics } from './metrics-route/routes.js';
import { authenticate } from './authentication/middleware.js';
import { requireFactorChangeProof, requireStepUp } from './mfa/enforcement.js';

/** Maps statuses of framework exceptions (malformed JSON, body limits) to problem codes. */
const STATUS_CODES: Record<number, ProblemCode> = {
  400: 'MALFORMED_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

function toProblem(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  // A database locked beyond the busy wait, or a remote one out of reach: 503 with Retry-After, not a 500
  // (docs/operations.md, "Fault drills").
  if (isDatabaseBusy(err)) return databaseBusyProblem(err);
  const unreachable = databaseUnreachable(err);
  if (unreachable) return databaseUnreachableProblem(unreachable);
  if (err instanceof HTTPException) {
    const code = STATUS_CODES[err.status] ?? (err.status >= 500 ? 'INTERNAL' : 'MALFORMED_REQUEST');
    const headers: Record<string, string> = {};
    const auth = err.getResponse().headers.get('WWW-Authenticate');
    if (auth) headers['WWW-Authenticate'] = auth;
    return new ProblemError(code, {
      detail: err.status < 500 ? err.message || undefined : undefined,
      headers,
      cause: err,
    });
  }
  return new ProblemError('INTERNAL', { cause: err });
}

/** Turns zod issues into the `errors` list of a validation problem. */
function fieldErrors(
  target: string,
  error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> },
): FieldError[] {
  return error.issues.map((i) => ({ location: target, path: i.path.map(String).join('.'), message: i.message }));
}

/** Builds the service's Hono app from its dependencies. */
export function createApp(hostDeps: AppDeps): App {
  return buildApp(hostDeps).app;
}

/** The OpenAPI document's description where the deployment names none (AUTH_PROJECT_DESCRIPTION unset). */
export const API_DESCRIPTION =
  'The authorization service: local, LDAP and OIDC accounts, sessions and API tokens, second factors, ' +
  'user management, security settings, audit-log search and mail notifications.';

/**
 * The app, the app of its routes below ROOT_PATH (`api`, whose routes the OpenAPI document describes:
 * docs/generate.ts, run at build time) and the options of its docs.
 */
export function buildApp(hostDeps: AppDeps): { app: App; api: App; docs: DocsOptions } {
  const env = hostDeps.config.env;
  const testClock = env.get('TEST_CLOCK_CONTROL') ? createTestClock(hostDeps.clock) : undefined;
  // One bound on concurrent password hashing per process (edge: per isolate), for every request,
  // admitted per client address (docs/security.md, "Password checks under load").
  const slots = createHashSlots({
    concurrency: hashConcurrency(env, hostDeps.hashConcurrency),
    handOver: hostDeps.crossRequestWaits === true,
    queue: env.get('PASSWORD_HASH_QUEUE'),
    perAddress: addressBound(env),
  });
  const bounded: AppDeps = { ...hostDeps, verifier: withHashSlots(hostDeps.verifier, slots) };
  const deps: AppDeps = testClock ? { ...bounded, clock: testClock.now } : bounded;
  const root = env.get('ROOT_PATH');
  const livePath = `${root}/health/live`;
  // After the response: the outbox's shipping, the notifications and webhooks of the events the request
  // may have written.
  const kickNotifications = createNotificationKicker();
  const afterResponse = [
    outboxKicker(),
    (c: Context<AppEnv>) => kickNotifications.afterResponse(c),
    createWebhookKicker(),
  ];
  const debug = env.get('DEBUG');
  const loggers = frameLoggers(deps);
  const baseLogger = loggers.base;

  const app: App = new OpenAPIHono<AppEnv>({
    router: new RememberingRouter(),
    defaultHook: (result) => {
      if (!result.success) {
        const errors = fieldErrors(result.target, result.error);
        throw new ProblemError('VALIDATION', {
          detail: errors.map((e) => `${e.location}${e.path ? `.${e.path}` : ''}: ${e.message}`).join('; '),
          extensions: { errors },
        });
      }
    },
  });

  // Every body is bounded before anything buffers it; the tunnel reads its own, larger limit.
  const selfLimited = new Set(Object.keys(SELF_LIMITED_BODIES).map((path) => `${root}${path}`));
  const bodyLimit = limitBody({
    max: env.get('MAX_BODY_SIZE'),
    variable: 'AUTH_MAX_BODY_SIZE',
    exempt: (path) => selfLimited.has(path),
  });
  // 405 for a known path asked with another method (called on 404s only, below).
  const notAllowed = methodNotAllowed({
    app,
    onMethodNotAllowed: (c, methods) =>
      render(
        c,
        new ProblemError('METHOD_NOT_ALLOWED', {
          detail: `${c.req.method} is not allowed on this path; allowed: ${methods.join(', ')}`,
          headers: { Allow: methods.join(', ') },
        }),
      ),
  });

  // The frame of every request (http/request-frame.ts): ids, context and scope, the body limit; after
  // the route, 405, headers, metrics, the background kicks and the access log line.
  app.use(
    '*',
    requestFrame({
      deps,
      loggers,
      livePath,
      authenticate,
      stepUpRules: { sensitive: requireStepUp, factors: requireFactorChangeProof },
      loadSaved: loadSavedSettings,
      sessionKeys: sessionKeyResolver(env, deps.hmacSha256),
      bodyLimit,
      notAllowed,
      handleError: (err, c) => handleError(err, c),
      observe: observeRequest,
      afterResponse,
    }),
  );

  const render = (c: Context<AppEnv>, problem: ProblemError): Response => {
    // No Basic challenge for a page's script: the browser would prompt (credentials.ts).
    const challenge = problem.headers['WWW-Authenticate'];
    const headers: Record<string, string> = challenge
      ? {
          'WWW-Authenticate': challengeForCaller(challenge, {
            fetchDest: requestHeader(c, 'Sec-Fetch-Dest'),
            requestedWith: requestHeader(c, 'X-Requested-With'),
          }),
        }
      : {};
    const res = problemResponse(problem, c.req.path, c.var.requestId, headers);
    // Responses built here replace c.res: cookies set before the failure are kept (e.g. a used OIDC
    // flow cookie is still cleared when the flow fails).
    for (const cookie of c.res.headers.getSetCookie()) res.headers.append('Set-Cookie', cookie);
    return res;
  };

  const handleError = (err: unknown, c: Context<AppEnv>): Response => {
    const problem = toProblem(err);
    const logger = c.var.logger ?? baseLogger;
    if (problem.status >= 500 && problem.code !== 'INTERNAL' && problem.log !== false) {
      // An expected failure of a dependency (the bridge, the directory, the log store, the database):
      // one WARNING line naming the cause, no stack; ERROR and stacks are for defects.
      const { cause } = problem.extensions;
      const level = problem.log?.level ?? 'WARNING';
      logger.log(level, problem.log ? problem.log.msg : `${problem.code}: ${problem.detail ?? problem.title}`, {
        requestId: c.var.requestId,
        status: problem.status,
        code: problem.code,
        ...(typeof cause === 'string' ? { cause } : {}),
        ...problem.log?.fields,
      });
    }
    if (problem.code === 'INTERNAL') {
      logger.error('unhandled error', { requestId: c.var.requestId, err: problem.cause ?? err });
      // Unhandled errors only (not the deliberate 502/503/504 problems), after the response.
      const background = (work: BackgroundWork) => inBackground(c, work);
      const own = { env, bridge: deps.bridge, clock: deps.clock, logger: c.var.logger, background };
      const request = { method: c.req.method, url: new URL(c.req.url), requestId: c.var.requestId };
      reportUnhandled(own, request, problem.cause ?? err);
      // 5xx bodies stay generic; the cause is in the log under the request id (or here when DEBUG).
      if (debug && err instanceof Error) {
        return render(
          c,
          new ProblemError('INTERNAL', { detail: `${err.name}: ${err.message}`, extensions: { stack: err.stack } }),
        );
      }
    }
    // A browser's refused form post: a page with the next step (the form's page, else the console).
    const firstRun = `${root}${FIRST_RUN_PATH}`;
    const refused = csrfRefusalPage(c, problem, c.req.path === firstRun ? firstRun : `${root}${CONSOLE_PATH}/`);
    return refused ?? render(c, problem);
  };
  app.onError(handleError);
  app.notFound((c) => render(c, new ProblemError('NOT_FOUND', { detail: `no endpoint at ${c.req.path}` })));

  const api = root === '' ? app : (app.basePath(root) as App);
  registerHealth(api);
  registerErrtrack(api);
  registerSessionlessLogins(api);
  registerSessionRoutes(api);
  registerMe(api, audienceChoices);
  registerPasskeyRoutes(api);
  registerMfa(api);
  registerAccountCreation(api);
  registerUserSessions(api);
  registerAccountAdmin(api);
  registerServiceTokens(api, audienceChoices);
  registerSettings(api);
  registerIdentityProviderAdmin(api);
  registerLdapServerAdmin(api);
  registerGroups(api);
  registerServiceAdmin(api);
  registerForwardAuth(api);
  registerIntrospection(api, app, root);
  registerOidc(api);
  registerLogs(api);
  registerNotifications(api);
  registerOverview(api);
  registerWebhooks(api);
  registerTestMail(api);
  registerPasswordReset(api);
  registerMetrics(api);
  registerConsole(api);
  if (testClock) registerTestHooks(api, testClock);
  registerFirstRun(app, api, { root, docsPrefix: env.get('DOCS_PREFIX'), title: env.get('PROJECT_NAME') });
  const docs: DocsOptions = {
    root,
    docsPrefix: env.get('DOCS_PREFIX'),
    staticPath: env.get('STATIC_PATH'),
    title: env.get('PROJECT_NAME'),
    // The document is English (docs/api.md): its description too, unless the operator set one of their own;
    // the default AUTH_PROJECT_DESCRIPTION is the service's Russian name (authenticator apps, passkeys).
    description: env.source('PROJECT_DESCRIPTION') === 'default' ? API_DESCRIPTION : env.get('PROJECT_DESCRIPTION'),
  };
  registerDocs(api, docs);
  return { app, api, docs };
}

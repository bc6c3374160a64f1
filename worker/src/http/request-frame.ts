/**
 * The frame of every request (architecture.md §3, "The frame"): one middleware step, since each step
 * costs on the hot path (architecture.md §6). Before the route: the request ids, the per-request
 * context (the configuration snapshot, the logger, the scope) and the body limit; after it, for every
 * answer (an error of the frame's own steps, such as the body limit's 413 or an unreadable
 * configuration, included): 405, the response headers, metrics, the kicks of background work and the
 * access log line. What it runs of the capabilities above `http/` (the settings read, the session
 * keys, the metrics, the kicks, the error handler) the app hands it (app.ts), so this folder stays
 * below them (architecture.md §2).
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { ConfigSnapshot } from '../config/index.js';
import { inBackground } from './background.js';
import type { AppDeps, AppEnv } from './context.js';
import { clientIp } from './forwarded.js';
import { createLogger, toLevel, type Level, type Logger } from './logger.js';
import { requestHeader } from './node-messages.js';
import { acceptedClientRequestId } from './request-id.js';
import { setResponseHeaders } from './response-headers.js';
import type { RequestScope } from './scope.js';

type Db = ReturnType<AppDeps['db']>;

/** The service's two loggers, whose levels follow the configuration snapshot in force. */
export interface FrameLoggers {
  /** The log (LOG_LEVEL); each request's logger is its child, bound to the request's ids. */
  base: Logger;
  /** The access log (ACCESS_LOG_LEVEL): a line per request. */
  access: Logger;
  /** Reads the levels of `config` when it is a new snapshot (a settings change, or its refresh). */
  follow(config: ConfigSnapshot): void;
}

/** The loggers of an app, at the levels of the environment until a snapshot says otherwise. */
export function frameLoggers(deps: AppDeps): FrameLoggers {
  const env = deps.config.env;
  const levels: { log: Level; access: Level } = {
    log: toLevel(env.get('LOG_LEVEL')),
    access: toLevel(env.get('ACCESS_LOG_LEVEL')),
  };
  let levelsOf: ConfigSnapshot | undefined;
  return {
    base: createLogger({ threshold: () => levels.log, write: deps.writeLog, now: deps.clock }),
    access: createLogger({
      threshold: () => levels.access,
      write: deps.writeLog,
      now: deps.clock,
      fields: { logger: 'access' },
    }),
    follow(config) {
      if (config === levelsOf) return;
      levelsOf = config;
      levels.log = toLevel(config.get('LOG_LEVEL'));
      levels.access = toLevel(config.get('ACCESS_LOG_LEVEL'));
    },
  };
}

export interface RequestFrameOptions {
  deps: AppDeps;
  loggers: FrameLoggers;
  /** The liveness path, which reads nothing: without a snapshot it answers on the environment's values. */
  livePath: string;
  /** The authentication middleware protected routes run (AppVariables.authenticate). */
  authenticate: AppEnv['Variables']['authenticate'];
  /** The step-up rules protected routes run (AppVariables.stepUpRules). */
  stepUpRules: AppEnv['Variables']['stepUpRules'];
  /** Reads the saved settings (store/settings-store.ts). */
  loadSaved: (db: Db) => Promise<Record<string, string>>;
  /** The session keys of a database (accounts/session-keys.ts), resolved at first use. */
  sessionKeys: (db: Db) => ReturnType<RequestScope['sessionKeys']>;
  /** The body limit (body-limit.ts), which then runs the route. */
  bodyLimit: MiddlewareHandler<AppEnv>;
  /** 405 for a known path asked with another method; run on 404s only. */
  notAllowed: MiddlewareHandler<AppEnv>;
  /** The app's error handler: the problem answer of an error. */
  handleError: (err: unknown, c: Context<AppEnv>) => Response;
  /** Counts the answer (GET /metrics). */
  observe: (c: Context<AppEnv>, startedAt: number) => void;
  /** Kicks of background work after the response, run when the request got as far as its scope. */
  afterResponse: ReadonlyArray<(c: Context<AppEnv>) => void>;
}

/**
 * Makes `c.var` read the request's variables in place. Hono's `c.var` copies every variable into a
 * new object at each access (Object.fromEntries), and the code reads `c.var.x` a dozen times per
 * request: that copying was a measurable share of an authenticated request's CPU (architecture.md §6). The
 * view reads through `c.get`, so it always shows the current values; it is read-only, as before.
 */
function readVarsInPlace(c: Context<AppEnv>): void {
  type Vars = AppEnv['Variables'];
  const view = new Proxy({} as Vars, {
    get: (_, key) => (typeof key === 'string' ? c.get(key as keyof Vars) : undefined),
  });
  Object.defineProperty(c, 'var', { value: view, configurable: true });
}

/** The frame of every request, as one middleware (registered first, on every path). */
export function requestFrame(o: RequestFrameOptions): MiddlewareHandler<AppEnv> {
  const { deps, loggers } = o;

  /** The per-request context: database, configuration snapshot, logger and the request scope. */
  const setRequestContext = (
    c: Context<AppEnv>,
    db: Db,
    config: ConfigSnapshot,
    requestId: string,
    clientRequestId: string | undefined,
  ) => {
    loggers.follow(config);
    const logger = loggers.base.child({ requestId, clientRequestId });
    c.set('logger', logger);
    c.set('scope', {
      db,
      lazyDb: deps.lazyDb?.(),
      config,
      now: deps.clock,
      request: {
        id: requestId,
        clientRequestId,
        ip: clientIp(c),
        userAgent: requestHeader(c, 'User-Agent') ?? null,
        host: deps.hostName,
      },
      logger,
      bridge: deps.bridge,
      mailOutbox: deps.mailOutbox,
      webhookFetch: deps.webhookFetch,
      verifier: deps.verifier,
      sessionKeys: () => o.sessionKeys(db),
      inBackground: (work) => inBackground(c, work),
    });
  };

  return async (c, next) => {
    readVarsInPlace(c);
    c.set('deps', deps);
    c.set('authenticate', o.authenticate);
    c.set('stepUpRules', o.stepUpRules);
    const requestId = crypto.randomUUID();
    c.set('requestId', requestId);
    const clientRequestId = acceptedClientRequestId(requestHeader(c, 'X-Request-Id'));
    if (clientRequestId) c.set('clientRequestId', clientRequestId);
    const started = deps.clock();
    const startedAt = performance.now();
    try {
      const db = deps.db();
      // Saved settings are served from the cache and refreshed in the background; a request waits
      // for their read only when there is no snapshot younger than 5 s (docs/architecture.md §3).
      // Liveness reads nothing: without a snapshot it answers on the environment's values.
      const loadSaved = () => o.loadSaved(db);
      const config =
        deps.config.served(loadSaved, (work) => inBackground(c, work)) ??
        (c.req.path === o.livePath ? deps.config.env : await deps.config.current(loadSaved));
      setRequestContext(c, db, config, requestId, clientRequestId);
      await o.bodyLimit(c, next);
    } catch (err) {
      c.error = err instanceof Error ? err : new Error(String(err));
      c.res = o.handleError(err, c);
    }
    if (c.res.status === 404 && !c.error) await o.notAllowed(c, async () => {});
    setResponseHeaders(c, requestId);
    o.observe(c, startedAt);
    if (c.var.scope) for (const kick of o.afterResponse) kick(c);
    const status = c.res.status;
    // Only the path: query strings may carry codes or tokens, and headers are never logged. (An
    // undefined clientRequestId is left out of the line, as JSON leaves out undefined values.)
    // ERROR for a defect (500) only: a 502/503/504 is a dependency's expected failure (its cause is on
    // the WARNING line the error handler wrote).
    loggers.access.log(status === 500 ? 'ERROR' : status >= 400 ? 'WARNING' : 'INFO', 'request', {
      requestId,
      clientRequestId,
      method: c.req.method,
      path: c.req.path,
      status,
      durationMs: deps.clock() - started,
    });
  };
}

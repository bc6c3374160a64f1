/** Typed context shared by every route: per-request services live in context variables. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { ConfigService } from '../config/index.js';
import type { Db } from '../store/db.js';
import type { PasswordVerifier } from '../passwords/verifier.js';
import type { AuthenticateOptions } from '../auth/credentials.js';
import type { UserRow } from '../accounts/model.js';
import type { SessionRow } from '../accounts/sessions.js';
import type { HmacSha256 } from '../accounts/session-keys.js';
import type { Logger } from './logger.js';
import type { MailOutbox, RequestScope } from './scope.js';

export type { MailOutbox } from './scope.js';

/** Serves a file of STATIC_DIR by its path relative to that directory, or null when absent. */
export type StaticFiles = (relativePath: string) => Promise<Response | null>;

import type { BridgeClient } from '../bridge/client.js';
import type { ApiAccessRecorder } from '../audit/api-access.js';
import type { WebhookFetch } from '../webhooks/transport.js';

/**
 * What of the Node request and response the app uses on the Node host (http.IncomingMessage,
 * http.ServerResponse): their headers, read and set directly on the hot path (node-messages.ts).
 */
export interface NodeMessages {
  /** The request: its raw header list, and its body as it streams in. */
  incoming: { rawHeaders: string[] } & AsyncIterable<Uint8Array>;
  outgoing: { setHeader(name: string, value: string): unknown };
}

/** What a host hands to the app factory. Nothing in routes asks which host it runs on. */
export interface AppDeps {
  /**
   * The database handle of a request. Node returns one shared handle; the edge opens a client per
   * request, because Workers must not share I/O objects (an HTTP client's streams) across requests.
   */
  db: () => Db;
  /** The handle of writes that need not wait for the disk (RequestScope.lazyDb); default db. */
  lazyDb?: () => Db;
  config: ConfigService;
  /** Milliseconds since the epoch; tests move it. */
  clock: () => number;
  /** The instance's name in audit events (Node: os.hostname(); edge: "edge"). */
  hostName: string;
  staticFiles: StaticFiles;
  /** Password hashing and verification (native argon2 on Node, WebAssembly on the edge). */
  verifier: PasswordVerifier;
  /**
   * How many password hashes the host runs at once without slowing each other down, the default of
   * PASSWORD_HASH_CONCURRENCY when the variable is unset (Node: the cores the process may use, at
   * most its spare libuv threads). Absent: the registry's default.
   */
  hashConcurrency?: number;
  /**
   * A synchronous HMAC-SHA256 (Node: node:crypto), with which the service's own tokens are signed
   * without a hand-over to WebCrypto's thread pool (accounts/session-keys.ts). Absent: WebCrypto.
   */
  hmacSha256?: HmacSha256;
  /**
   * A request may wait on a promise another request resolves (Node host), so a finished password
   * check hands its slot straight to the next waiter, and it has no ExecutionContext (background work
   * is a detached promise: http/background.ts). Absent on the edge: Workers cancel such waits.
   */
  crossRequestWaits?: boolean;
  /** Where JSON log lines go (default console.log). */
  writeLog?: (line: string) => void;
  /** The on-prem bridge (LDAP, error-tracking relay); absent while none is configured. */
  bridge?: BridgeClient;
  /** Where mail goes while no mail server is configured (Node host); absent on the edge. */
  mailOutbox?: MailOutbox;
  /** How webhooks leave (Scope.webhookFetch); absent on the edge. */
  webhookFetch?: WebhookFetch;
  /** Where requests authenticated with Basic or Bearer are recorded (absent: not recorded). */
  apiAccess?: ApiAccessRecorder;
  /**
   * The client's address as the host knows it (Node: the socket's peer; edge: CF-Connecting-IP),
   * for the first-run page, which answers loopback clients only. Absent: no client is local.
   */
  clientAddress?: (request: Request, env: unknown) => string | undefined;
  /** The request header clientAddress reads (edge: CF-Connecting-IP); absent when it reads the socket. */
  clientAddressHeader?: string;
  /**
   * The address of the connection's peer (Node host), checked against AUTH_TRUSTED_PROXIES before
   * forwarded headers are believed. Absent on the edge, where they never are.
   */
  peerAddress?: (c: Context<AppEnv>) => string | undefined;
  /**
   * The Node request and response of a request (Node host), whose headers the hot path reads and
   * writes directly (http/node-messages.ts). Absent on the edge.
   */
  nodeMessages?: (c: Context<AppEnv>) => NodeMessages | undefined;
}

/** The middleware of a route declared `stepUp: true` (`sensitive`) and of one declared `stepUp: 'factors'`. */
export interface StepUpRules {
  sensitive: MiddlewareHandler<AppEnv>;
  factors: MiddlewareHandler<AppEnv>;
}

/** The authenticated caller of a request. */
export interface Principal {
  user: UserRow;
  /** basic, bearer (API token), session (cookie, or the access token of /v3/oauth_login) */
  method: 'basic' | 'bearer' | 'session';
  tokenId?: string;
  sessionId?: string;
  /** The session row (method session): how and when it was authenticated. */
  session?: SessionRow;
  /** The account's group names (local, LDAP, OIDC), where known: the gate's access rules read them. */
  groups?: readonly string[];
}

export interface AppVariables {
  /** Set by the authentication middleware on protected routes. */
  principal: Principal;
  /** A route declared `signedSessionSuffices`: the verified claims of its session credential, unread. */
  signedSession?: { sessionId: string; userId: string };
  /** The service's own id of this request (always generated here; never the caller's). */
  requestId: string;
  /** The caller's well-formed X-Request-Id, kept beside ours in the logs, if it sent one. */
  clientRequestId?: string;
  /** Bound to the request's ids (also `scope.logger`); set before the scope, for the frame's own errors. */
  logger: Logger;
  /** The host's parts; routes read the scope instead wherever it has the value. */
  deps: AppDeps;
  /**
   * The authentication middleware for a set of options (authentication/middleware.ts), set by the app and
   * run by protected routes (auth/protected-route.ts; why it is handed over: architecture.md §2).
   */
  authenticate: (options: AuthenticateOptions) => MiddlewareHandler<AppEnv>;
  /**
   * The second-factor rules of sensitive routes (mfa/enforcement.ts), set by the app and run by
   * protected routes that declare `stepUp` (handed over as `authenticate` is: architecture.md §2).
   */
  stepUpRules: StepUpRules;
  /**
   * What domain code gets of the request, built once per request (http/scope.ts): the database,
   * the configuration snapshot, the clock, the session keys... are read from here.
   */
  scope: RequestScope;
}

export type AppEnv = { Variables: AppVariables };
export type App = OpenAPIHono<AppEnv>;

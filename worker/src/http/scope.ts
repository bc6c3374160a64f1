/**
 * The request scope: what domain code needs of a request, as plain values (architecture.md §2-3).
 * One middleware builds it once per request (`c.var.scope`); routes and middleware hand it to
 * domain functions, which never see Hono's Context, so they can be unit-tested with fakes.
 */
import type { BridgeClient } from '../bridge/client.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { PasswordVerifier } from '../auth/password-verifier.js';
import type { SessionKeys } from '../accounts/session-keys.js';
import type { Db } from '../store/db.js';
import type { Logger } from './logger.js';

/** Who sent a request, as recorded in audit events and logs. */
export interface RequestMeta {
  /** The service's own id of the request (never the caller's). */
  id: string;
  /** The caller's well-formed X-Request-Id, kept beside ours in the logs (never in audit data). */
  clientRequestId?: string;
  /** The client's address, as trusted (see http/forwarded.ts); null when the host cannot tell. */
  ip: string | null;
  userAgent: string | null;
  /** The instance that served it (Node: the host name; edge: "edge"). */
  host: string;
}

/** Per-request services for domain code. */
export interface RequestScope {
  db: Db;
  /**
   * Node, embedded database: a connection whose commits reach the disk within a second instead of
   * before the answer, for writes a power failure may lose (login-attempt reservations and a
   * successful login's record and its session: architecture.md §6). Absent: use `db`.
   */
  lazyDb?: Db;
  /** The configuration snapshot of this request (saved settings over environment and defaults). */
  config: ConfigSnapshot;
  /** Milliseconds since the epoch; tests move it. */
  now: () => number;
  request: RequestMeta;
  /** Bound to the request's ids. */
  logger: Logger;
  /** The on-prem bridge (LDAP, error-tracking relay); absent while none is configured. */
  bridge?: BridgeClient;
  verifier: PasswordVerifier;
  /** The keys that sign sessions and flow cookies (resolved at first use). */
  sessionKeys: () => Promise<SessionKeys>;
  /** Runs work after the response (`waitUntil` on the edge); failures are logged, never thrown. */
  inBackground: (work: Promise<unknown> | undefined) => void;
}

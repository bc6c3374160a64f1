/**
 * The scope of domain code (architecture.md §2-3): what it needs, as plain values. `Scope` is what
 * every piece of domain code needs, in a request or outside one (a job, the operator command:
 * `scopeWithoutRequest`); `RequestScope` adds the request's own values. The app's frame builds one
 * per request (`c.var.scope`); routes and middleware hand it to domain functions, which never see
 * Hono's Context, so they can be unit-tested with fakes. Time is read with `scope.now()` only.
 */
import type { BridgeClient } from '../bridge/client.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { PasswordVerifier } from '../passwords/verifier.js';
import type { SessionKeys } from '../accounts/session-keys.js';
import type { Db } from '../store/db.js';
import type { MailMessage } from '../../../schema/bridge/index.js';
import type { WebhookFetch } from '../webhooks/transport.js';
import { createLogger, type Logger } from './logger.js';

/**
 * Work for after the response (`inBackground`, http/background.ts): a function, so that none of its own CPU
 * (building a query, encoding a batch, starting its fetch) runs before the answer is handed back.
 */
export type BackgroundWork = () => Promise<unknown> | undefined;

/**
 * The development outbox of the Node host (docs/mail.md, "Development outbox"): while no mail server
 * is configured, each mail is written as an .eml file (RFC 5322, as SMTP would carry it) into a
 * folder of the data directory. Absent on the edge, which has no file system.
 */
export interface MailOutbox {
  /** The folder, as the start message names it. */
  folder: string;
  /** Writes the mail of notification `id` (a UUID); returns the file's path. */
  write(id: string, message: MailMessage): Promise<string>;
  /** The bytes of the .eml of notification `id`, or null when there is none. */
  read(id: string): Promise<Uint8Array | null>;
  /** Deletes the files of these notifications (their retention ended); missing ones are skipped. */
  remove(ids: string[]): Promise<void>;
}

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

/** What domain code needs, in a request or outside one (jobs, the operator command). */
export interface Scope {
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
  /** Who sent the request (audit events, logs); absent outside a request. */
  request?: RequestMeta;
  /** In a request, bound to the request's ids. */
  logger: Logger;
  /** The on-prem bridge (LDAP, log store, mail, error-tracking relay); absent while none is configured. */
  bridge?: BridgeClient;
  /** The development outbox (Node host), where mail goes while no mail server is configured. */
  mailOutbox?: MailOutbox;
  /** How webhooks leave (Node host: checked addresses only); absent: `fetch` (webhooks/transport.ts). */
  webhookFetch?: WebhookFetch;
}

/** The scope of a request: the scope plus the request's own values. */
export interface RequestScope extends Scope {
  request: RequestMeta;
  verifier: PasswordVerifier;
  /** The keys that sign sessions and flow cookies (resolved at first use). */
  sessionKeys: () => Promise<SessionKeys>;
  /** Runs work after the response (`waitUntil` on the edge); failures are logged, never thrown. */
  inBackground: (work: BackgroundWork) => void;
}

/**
 * A scope without a request (a job run, the operator command). Without a logger, lines go to the
 * console at INFO.
 */
export function scopeWithoutRequest(o: Omit<Scope, 'logger' | 'request'> & { logger?: Logger }): Scope {
  return { ...o, logger: o.logger ?? createLogger({ threshold: () => 'INFO', now: o.now }) };
}

/**
 * Events of the `ext_service_access` stream (architecture.md §5.1): a call to an external service (the
 * LDAP directory, an OIDC provider, the mail server) made on a user's behalf. A call is no database
 * change, so its event is written after the call: in the same batch as the change the call leads to
 * (a login's own writes, a notification's new state) where there is one, else on its own. The event
 * has a fixed id, so a path may put it in every batch it can end with: it is written once.
 * Never a password, a code, a token or a reset link in `data`; a mail's recipient is masked.
 */
import { ProblemError } from '../http/problem.js';
import type { RequestMeta } from '../http/scope.js';
import type { Db } from '../store/index.js';
import { auditInsert, type AuditEvent } from './events.js';

/** The event types of the ext_service_access stream. */
export type ExtServiceType = 'ldap.authenticate' | 'ldap.test' | 'oidc.token_exchange' | 'mail.send';

/** One call to an external service, as its event records it. */
export interface ExtServiceCall {
  type: ExtServiceType;
  ok: boolean;
  /** When the call started: the event's timestamp. */
  at: number;
  durationMs: number;
  actor?: AuditEvent['actor'];
  subject?: AuditEvent['subject'];
  subjectLogin?: string;
  request?: RequestMeta;
  data: Record<string, unknown>;
}

/** The event of a call, with its fixed id. */
export function extServiceEvent(call: ExtServiceCall): AuditEvent & { id: string } {
  const { type, ok, actor, subject, subjectLogin, request } = call;
  return {
    id: crypto.randomUUID(),
    stream: 'ext_service_access',
    type,
    outcome: ok ? 'success' : 'failure',
    ...(actor ? { actor } : {}),
    ...(subject ? { subject } : {}),
    ...(subjectLogin !== undefined ? { subjectLogin } : {}),
    ...(request ? { request } : {}),
    data: { ...call.data, durationMs: Math.max(0, Math.round(call.durationMs)) },
  };
}

/** The insert of a call's event (idempotent: its id is fixed), to add to the batch its outcome leads to. */
export function extServiceInsert(db: Db, call: ExtServiceCall) {
  const event = extServiceEvent(call);
  return () => auditInsert(db, call.at, event);
}

/**
 * The class of a failed bridge call: the bridge's error code (DIRECTORY_UNAVAILABLE, MAIL_TIMEOUT...),
 * else whether the bridge itself could not be reached or answered too late. Never the error's text,
 * which may name hosts or echo what was sent.
 */
export function errorClassOf(err: unknown): string {
  if (!(err instanceof ProblemError)) return 'ERROR';
  const cause = err.extensions.cause;
  if (typeof cause === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(cause)) return cause;
  if (err.code === 'GATEWAY_TIMEOUT') return 'BRIDGE_TIMEOUT';
  if (err.code === 'SERVICE_UNAVAILABLE') return 'BRIDGE_UNAVAILABLE';
  return err.code;
}

/** `2xx`, `4xx`, ... of an HTTP status. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** An address as events show it: its first character and its domain (`j***@example.com`). */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${address[0]}***${address.slice(at)}`;
}

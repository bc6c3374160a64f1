/**
 * The document of an audit event in the log store (architecture.md §5). Its shape is stable: the
 * logs endpoints' simple form, dashboards and document-level security rules rely on these names
 * (ECS-like, so the stores' own tooling reads them naturally):
 *
 *   @timestamp          when the event happened (ISO 8601, UTC)
 *   event.id            the outbox id, also the document `_id` (a retry never duplicates)
 *   event.type          e.g. login.success, account.locked, settings.updated
 *   event.stream        user_activity, crud_user, crud_admin, api_access, ext_service_access, data_lifecycle
 *   event.outcome       success, failure or unknown
 *   actor.id/.login     who acted (absent for anonymous attempts and jobs)
 *   subject.id/.login   whom it concerns (a failed login's subject.login is the login as given)
 *   source.ip           the client's address, user_agent.original its User-Agent
 *   request.id          the service's request id (with the caller's own id when one was sent)
 *   host.name           the instance that recorded it
 *   service.name        "auth-service"
 *   data                the event's own details (never a secret: see audit/events.ts)
 */
import { outcomeOfType, type OutboxRow } from '../audit/events.js';

/** The outcome of an event: its own, else what its type says. */
export function eventOutcome(row: Pick<OutboxRow, 'outcome' | 'type'>): 'success' | 'failure' | 'unknown' {
  // Rows written before the outcome was recorded at insert: the same rule, from the type.
  return row.outcome ?? outcomeOfType(row.type) ?? 'unknown';
}

/** The log-store document of an outbox row. */
export function toLogDocument(row: OutboxRow): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    '@timestamp': new Date(row.at).toISOString(),
    event: { id: row.id, type: row.type, stream: row.stream, outcome: eventOutcome(row) },
    service: { name: 'auth-service' },
  };
  if (row.actorId || row.actorLogin)
    doc.actor = { ...(row.actorId ? { id: row.actorId } : {}), ...(row.actorLogin ? { login: row.actorLogin } : {}) };
  if (row.subjectId || row.subjectLogin)
    doc.subject = {
      ...(row.subjectId ? { id: row.subjectId } : {}),
      ...(row.subjectLogin ? { login: row.subjectLogin } : {}),
    };
  if (row.sourceIp) doc.source = { ip: row.sourceIp };
  if (row.userAgent) doc.user_agent = { original: row.userAgent };
  if (row.requestId) doc.request = { id: row.requestId };
  if (row.host) doc.host = { name: row.host };
  if (row.data && Object.keys(row.data).length > 0) doc.data = row.data;
  return doc;
}

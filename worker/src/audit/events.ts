/**
 * Audit events (DESIGN.md §7): built as inserts into the outbox so that callers put them in the same
 * batch (one transaction) as the change they record. Never put secrets or passwords in `data`.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../store/index.js';
import { auditOutbox } from '../../../schema/index.js';

/** Log-store streams, one per AUDIT_* index pattern. */
export type AuditStream = 'user_activity' | 'crud_user' | 'crud_admin' | 'api_access' | 'ext_service_access' | 'data_lifecycle';

export interface AuditEvent {
  stream: AuditStream;
  type: string;
  /** Who acted: an account, or the operator command (id null, login "operator"). */
  actor?: { id: string | null; login: string } | null;
  subject?: { id: string; login: string } | null;
  /** For events about a login that may not exist (failed logins): the login as given. */
  subjectLogin?: string;
  requestId?: string;
  data?: Record<string, unknown>;
}

/** The insert of one audit event, to run inside the caller's batch. */
export function auditInsert(db: Db, at: number, e: AuditEvent) {
  return db.insert(auditOutbox).values({
    id: crypto.randomUUID(),
    at,
    stream: e.stream,
    type: e.type,
    actorId: e.actor?.id ?? null,
    actorLogin: e.actor?.login ?? null,
    subjectId: e.subject?.id ?? null,
    subjectLogin: e.subject?.login ?? e.subjectLogin ?? null,
    requestId: e.requestId ?? null,
    data: e.data ?? null,
  });
}

/**
 * An audit insert that happens only when `condition` (a SQL boolean) holds when the statement runs,
 * so a conditional event (e.g. "account locked") joins the same batch as the change.
 */
export function auditInsertWhen(db: Db, at: number, e: AuditEvent, condition: SQL) {
  return db.run(sql`
    insert into ${auditOutbox} (id, at, stream, type, actor_id, actor_login, subject_id, subject_login, request_id, data)
    select ${crypto.randomUUID()}, ${at}, ${e.stream}, ${e.type}, ${e.actor?.id ?? null}, ${e.actor?.login ?? null},
           ${e.subject?.id ?? null}, ${e.subject?.login ?? e.subjectLogin ?? null}, ${e.requestId ?? null}, ${JSON.stringify(e.data ?? null)}
    where ${condition}`);
}

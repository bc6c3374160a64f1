/**
 * Audit events (architecture.md §5): built as inserts into the outbox so that callers put them in the same
 * batch (one transaction) as the change they record. Never put secrets or passwords in `data`.
 */
import { sql, type SQL } from 'drizzle-orm';
import { reusableStatement, type Db } from '../store/index.js';
import { auditOutbox, users } from '../../../schema/index.js';

/** A row of the audit outbox: one event, or a batch of API-access events (api-access.ts). */
export type OutboxRow = typeof auditOutbox.$inferSelect;
import type { RequestMeta } from '../http/scope.js';
import type { AuditEventType, AuditStream } from './catalogue.js';
import { handledAtFor } from './handled-types.js';
import { countLoginEvent } from '../metrics/process.js';

export type { AuditEventType, AuditStream } from './catalogue.js';

export interface AuditEvent {
  stream: AuditStream;
  /** A type of the catalogue (audit/catalogue.ts): anything else does not typecheck. */
  type: AuditEventType;
  /**
   * A fixed id makes the insert idempotent (a second insert of the same id is skipped), so an event
   * may join every batch a path can end with and is still written once (audit/ext-service.ts).
   */
  id?: string;
  /** The outcome when the type does not fix it (a call to an external service: success or failure). */
  outcome?: 'success' | 'failure';
  /** Who acted: an account, or the operator command (id null, login "operator"). */
  actor?: { id: string | null; login: string } | null;
  subject?: { id: string; login: string } | null;
  /** For events about a login that may not exist (failed logins): the login as given. */
  subjectLogin?: string;
  /** The request that caused it (id, client address, User-Agent, instance); none for jobs. */
  request?: RequestMeta;
  data?: Record<string, unknown>;
}

/**
 * The outcome of an event, from its type: attempts end in success or failure (login.success,
 * login.failure, login.refused, ...); other events (a logout, a change) are no attempt: null.
 */
export function outcomeOfType(type: string): 'success' | 'failure' | null {
  if (/\.(failure|failed|refused|locked|throttled|denied|password_expired)$/.test(type)) return 'failure';
  if (/\.(success|succeeded)$/.test(type)) return 'success';
  return null;
}

/** The columns every insert shares: who, what, and the request that caused it. */
function columns(e: AuditEvent) {
  return {
    actorId: e.actor?.id ?? null,
    actorLogin: e.actor?.login ?? null,
    subjectId: e.subject?.id ?? null,
    subjectLogin: e.subject?.login ?? e.subjectLogin ?? null,
    requestId: e.request?.id ?? null,
    outcome: e.outcome ?? outcomeOfType(e.type),
    sourceIp: e.request?.ip ?? null,
    userAgent: e.request?.userAgent ?? null,
    host: e.request?.host ?? null,
  };
}

/**
 * Event ids for one batch, time-ordered (UUIDv7 layout: the batch's time in ms, then a sequence number
 * within the batch, then 48 random bits per batch). Random UUIDs land all over the outbox's primary
 * key index; these are appended at its end, which halved the cost of writing an event (architecture.md §6).
 * Unique: two batches differ by time or by their random bits, two events of a batch by sequence.
 */
export function batchEventIds(now: number): () => string {
  const r = crypto.getRandomValues(new Uint8Array(6));
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  const t = hex(now, 12);
  const tail = Array.from(r, (b) => hex(b, 2)).join('');
  const head = `${t.slice(0, 8)}-${t.slice(8, 12)}-7`;
  let seq = 0;
  return () => {
    const s = seq++;
    // 26 bits of sequence: 12 in rand_a, 14 after the variant bits (10).
    return `${head}${hex((s >>> 14) & 0xfff, 3)}-${hex(0x8000 | (s & 0x3fff), 4)}-${tail}`;
  };
}

/**
 * The id of one event (unless the event has its own): UUIDv7, its time `at` in ms, then
 * 74 random bits (of a version 4 UUID: Node's and workerd's are drawn from a cached pool), so that
 * events are appended at the end of the outbox's key index, as batchEventIds's.
 */
export function eventId(at: number): string {
  const t = at.toString(16).padStart(12, '0');
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${crypto.randomUUID().slice(15)}`;
}

/** The columns of an event's insert, each a placeholder of the statements below. */
const EVENT_COLUMNS = [
  'id',
  'at',
  'stream',
  'type',
  'actorId',
  'actorLogin',
  'subjectId',
  'subjectLogin',
  'requestId',
  'outcome',
  'sourceIp',
  'userAgent',
  'host',
  'data',
  'handledAt',
] as const;

// Built once (store/prepared.ts): an event is in most writes' batches.
const insertEvent = reusableStatement((db, p) => db.insert(auditOutbox).values(p), EVENT_COLUMNS);
const insertEventOnce = reusableStatement(
  (db, p) => db.insert(auditOutbox).values(p).onConflictDoNothing({ target: auditOutbox.id }),
  EVENT_COLUMNS,
);

/** The insert of one audit event, to run inside the caller's batch. */
export function auditInsert(db: Db, at: number, e: AuditEvent) {
  // Login attempts are counted for GET /metrics where they are audited, so both always agree.
  countLoginEvent(e.type, e.data);
  const values = {
    id: e.id ?? eventId(at),
    at,
    stream: e.stream,
    type: e.type,
    ...columns(e),
    data: e.data ?? null,
    handledAt: handledAtFor(e.type, at),
  };
  return e.id === undefined ? insertEvent(db, values) : insertEventOnce(db, values);
}

/**
 * An audit insert that happens only when `condition` (a SQL boolean) holds when the statement runs,
 * so a conditional event (e.g. "account locked") joins the same batch as the change.
 */
export function auditInsertWhen(db: Db, at: number, e: AuditEvent, condition: SQL) {
  const c = columns(e);
  return db.run(sql`
    insert into ${auditOutbox} (id, at, stream, type, actor_id, actor_login, subject_id, subject_login, request_id,
                                outcome, source_ip, user_agent, host, data, handled_at)
    select ${e.id ?? eventId(at)}, ${at}, ${e.stream}, ${e.type}, ${c.actorId}, ${c.actorLogin}, ${c.subjectId},
           ${c.subjectLogin}, ${c.requestId}, ${c.outcome}, ${c.sourceIp}, ${c.userAgent}, ${c.host},
           ${JSON.stringify(e.data ?? null)}, ${handledAtFor(e.type, at)}
    where ${condition}`);
}

/**
 * An audit insert of an account acting on itself, known by id only: its login is read from `users` by the
 * statement itself (no read first), and the event is written only when `condition` holds.
 */
export function auditInsertOfAccountWhen(
  db: Db,
  at: number,
  e: Omit<AuditEvent, 'actor' | 'subject' | 'subjectLogin'>,
  accountId: string,
  condition: SQL,
) {
  const c = columns(e);
  return db.run(sql`
    insert into ${auditOutbox} (id, at, stream, type, actor_id, actor_login, subject_id, subject_login, request_id,
                                outcome, source_ip, user_agent, host, data, handled_at)
    select ${e.id ?? eventId(at)}, ${at}, ${e.stream}, ${e.type}, "id", "login", "id", "login",
           ${c.requestId}, ${c.outcome}, ${c.sourceIp}, ${c.userAgent}, ${c.host}, ${JSON.stringify(e.data ?? null)},
           ${handledAtFor(e.type, at)}
    from ${users} where "id" = ${accountId} and ${condition}`);
}

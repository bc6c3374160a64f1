/**
 * The protected services' records (docs/integration.md): read by name, their targets' rule, and the admin
 * changes, each batched with its audit event. The HTTP side: admin-routes.ts.
 */
import { eq } from 'drizzle-orm';
import { protectedServices } from '../../../schema/index.js';
import type { AuditEventType, auditInsert } from '../audit/events.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import { newSecret, secretHash, type ServiceRow } from './services.js';
import { normaliseHost, normalisePrefix } from './target.js';

/** The audit event of a change, built by the caller (who knows the actor and the request). */
export type Audited = (type: AuditEventType, data: Record<string, unknown>) => ReturnType<typeof auditInsert>;

/** The service `name`, or 404. */
export async function serviceByName(db: Db, name: string): Promise<ServiceRow> {
  const [row] = await db.select().from(protectedServices).where(eq(protectedServices.name, name)).limit(1);
  if (!row) throw new ProblemError('NOT_FOUND', { detail: `no protected service named ${name}` });
  return row;
}

/** Hosts and prefixes normalised; 422 naming `hosts` when a service would answer for nothing. */
export function serviceTargets(hosts: string[], prefixes: string[]): { hosts: string[]; prefixes: string[] } {
  const out = {
    hosts: [...new Set(hosts.map((h) => normaliseHost(h)!))],
    prefixes: [...new Set(prefixes.map((p) => normalisePrefix(p)!))],
  };
  if (out.hosts.length + out.prefixes.length === 0)
    throw new ProblemError('VALIDATION', {
      detail: 'a service needs a host or a URL prefix',
      extensions: { errors: [{ location: 'json', path: 'hosts', message: 'give hosts or prefixes (one at least)' }] },
    });
  return out;
}

/** Adds a service; 409 when the name is taken. */
export async function addService(db: Db, row: ServiceRow, audited: Audited): Promise<void> {
  try {
    await db.batch([
      db.insert(protectedServices).values(row),
      audited('service.created', { name: row.name, hosts: row.hosts, prefixes: row.prefixes, clientId: row.clientId }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err))
      throw new ProblemError('CONFLICT', { detail: `a protected service named ${row.name} exists` });
    throw err;
  }
}

export async function changeService(
  db: Db,
  before: ServiceRow,
  set: Partial<ServiceRow>,
  changed: string[],
  audited: Audited,
): Promise<void> {
  await db.batch([
    db.update(protectedServices).set(set).where(eq(protectedServices.id, before.id)),
    audited('service.updated', { name: before.name, changed }),
  ]);
}

export async function removeService(db: Db, row: ServiceRow, audited: Audited): Promise<void> {
  await db.batch([
    db.delete(protectedServices).where(eq(protectedServices.id, row.id)),
    audited('service.deleted', { name: row.name }),
  ]);
}

/** A new client secret for the service (its hash stored); the secret, shown once. */
export async function rotateServiceSecret(db: Db, row: ServiceRow, now: number, audited: Audited): Promise<string> {
  const secret = newSecret();
  await db.batch([
    db
      .update(protectedServices)
      .set({ secretHash: secretHash(secret), updatedAt: now })
      .where(eq(protectedServices.id, row.id)),
    audited('service.secret_rotated', { name: row.name, clientId: row.clientId }),
  ]);
  return secret;
}

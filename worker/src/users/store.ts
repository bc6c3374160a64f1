/** Account writes shared by the bootstrap, the admin API and external logins. */
import type { BatchItem } from 'drizzle-orm/batch';
import type { Db } from '../store/index.js';
import { passwordHistory, users } from '../../../schema/index.js';
import { loginKey } from './login-name.js';
import type { Role, UserRow } from './model.js';

export interface NewLocalUser {
  login: string;
  displayName?: string;
  email?: string | null;
  role: Role;
  passwordHash: string;
  mustChangePassword?: boolean;
  sessionLimit?: number | null;
  now: number;
  /** Statements to run in the same transaction (e.g. the audit event). */
  extra?: (user: UserRow) => BatchItem<'sqlite'>[];
}

/**
 * Inserts a local account with its first password in the history. Returns undefined when the login
 * is taken by a live account (the unique index decides, so concurrent creations cannot both win).
 */
export async function createLocalUser(db: Db, u: NewLocalUser): Promise<UserRow | undefined> {
  const row: UserRow = {
    id: crypto.randomUUID(),
    login: u.login,
    loginKey: loginKey(u.login),
    displayName: u.displayName ?? '',
    email: u.email ?? null,
    role: u.role,
    source: 'local',
    sourceName: null,
    externalId: null,
    status: 'active',
    blockedReason: null,
    passwordHash: u.passwordHash,
    passwordChangedAt: u.now,
    mustChangePassword: u.mustChangePassword ?? false,
    lastLoginAt: null,
    lastActivityAt: null,
    sessionLimit: u.sessionLimit ?? null,
    superAccessUntil: null,
    createdAt: u.now,
    updatedAt: u.now,
    deletedAt: null,
  };
  try {
    await db.batch([
      db.insert(users).values(row),
      db.insert(passwordHistory).values({ userId: row.id, passwordHash: u.passwordHash, createdAt: u.now }),
      ...(u.extra?.(row) ?? []),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
  return row;
}

/** Whether a libSQL error is a UNIQUE constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.includes('CONSTRAINT')) return /UNIQUE/i.test(`${code} ${e.message}`);
    if (/UNIQUE constraint failed/i.test(e.message)) return true;
  }
  return false;
}

/**
 * Creating a local account: the one checked path shared by the admin API (POST /v4/users), the
 * first-run page and the operator command (`npm run ops -- create-admin`), and the insert below it
 * (also used by the bootstrap of the first administrator).
 */
import { runAccountBatch, type AccountBatchItem } from '../accounts/writes.js';
import { createAccountStatements } from '../accounts/account-writes.js';
import { auditInsert } from '../audit/events.js';
import { ProblemError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import type { Actor } from './admin-changes.js';
import { loginSkeleton } from './confusables.js';
import { loginKey, loginViolation, normaliseLogin } from '../accounts/login-name.js';
import { lookAlikeOf, reservedUntil } from './login-skeletons.js';
import type { Role, UserRow } from '../accounts/model.js';
import { assertPasswordPolicy } from './password.js';
import { isUniqueViolation } from '../store/unique-violation.js';
import type { RequestScope, Scope } from '../http/scope.js';

export interface NewAccount {
  login: string;
  /** Absent: the account has none until its user chooses one through the welcome mail's link. */
  password?: string;
  displayName?: string;
  email?: string | null;
  role: Role;
  mustChangePassword?: boolean;
  sessionLimit?: number | null;
  /** service: an account that owns API tokens, without a password or address (docs/api.md, "Service accounts"). */
  kind?: 'person' | 'service';
}

export interface CreateAccountOptions {
  /** Who creates it; null for the first-run page (nobody is logged in yet). */
  actor: Actor | null;
  /** Recorded in the audit event's data (e.g. "first-run", "operator"). */
  via?: string;
  /** More statements for the same transaction. */
  extra?: (user: UserRow) => AccountBatchItem[];
}

/**
 * Checks the login rule (on the NFC form, which is stored), the password policy, the login
 * reservations of deleted accounts and look-alikes of live accounts (by confusable skeleton), then
 * creates the account with its audit event in one transaction. 422 VALIDATION (a character the rule
 * refuses, whatever else exists) or PASSWORD_POLICY; 409 CONFLICT when the login is taken, reserved,
 * or looks like another live account's (a valid login, but in conflict with another account).
 */
export async function createLocalAccount(
  scope: Scope & Pick<RequestScope, 'verifier'>,
  input: NewAccount,
  o: CreateAccountOptions,
): Promise<UserRow> {
  const { db } = scope;
  const now = scope.now();
  const a = { ...input, login: normaliseLogin(input.login) };
  const why = loginViolation(a.login);
  if (why) {
    const message = why;
    throw new ProblemError('VALIDATION', {
      detail: `login: ${message}`,
      extensions: { errors: [{ location: 'json', path: 'login', message }] },
    });
  }
  const service = a.kind === 'service';
  if (service) {
    // It never signs in: nothing to sign in with, nowhere to mail a link.
    const given = a.password !== undefined ? 'password' : a.email ? 'email' : undefined;
    if (given) {
      const message = `a service account has no ${given === 'password' ? 'password' : 'e-mail address'}`;
      throw new ProblemError('VALIDATION', {
        detail: `${given}: ${message}`,
        extensions: { errors: [{ location: 'json', path: given, message }] },
      });
    }
  } else if (a.password !== undefined) assertPasswordPolicy(a.password, scope.config, a.login);
  else if (!a.email) {
    // Without a password nobody could sign in: the welcome mail's link is the one way to choose it.
    const message = 'an account created without a password needs an e-mail address (its welcome mail sets one)';
    throw new ProblemError('VALIDATION', {
      detail: `email: ${message}`,
      extensions: { errors: [{ location: 'json', path: 'email', message }] },
    });
  }
  const reserved = await reservedUntil(db, a.login, now);
  if (reserved !== undefined) {
    const until = new Date(reserved).toISOString();
    const detail = `the login is, or looks like, the login of a deleted account, reserved until ${until}`;
    throw new ProblemError('CONFLICT', { detail, extensions: { reason: 'reserved' } });
  }
  const other = await lookAlikeOf(db, a.login);
  if (other !== undefined) {
    const detail = `the login looks like the login "${other}" of another account (Unicode TR #39 confusables)`;
    throw new ProblemError('CONFLICT', { detail, extensions: { reason: 'look-alike' } });
  }
  const user = await createLocalUser(db, {
    login: a.login,
    displayName: a.displayName ?? a.login,
    email: a.email ?? null,
    role: a.role,
    passwordHash: a.password === undefined ? null : await scope.verifier.hasher.hash(a.password),
    mustChangePassword: a.password !== undefined && (a.mustChangePassword ?? false),
    sessionLimit: a.sessionLimit ?? null,
    kind: a.kind ?? 'person',
    now: now,
    extra: (u) => [
      auditInsert(db, now, {
        stream: 'crud_admin',
        type: 'user.created',
        actor: o.actor,
        subject: u,
        request: scope.request,
        // Whether its user chooses the password (the welcome mail then links to it: docs/mail.md, "Kinds").
        data: service
          ? { role: u.role, kind: 'service' }
          : {
              role: u.role,
              password: a.password === undefined ? 'chosen' : 'given',
              ...(o.via ? { via: o.via } : {}),
            },
      }),
      ...(o.extra?.(u) ?? []),
    ],
  });
  if (!user) {
    throw new ProblemError('CONFLICT', { detail: 'the login is taken', extensions: { reason: 'taken' } });
  }
  return user;
}

export interface NewLocalUser {
  login: string;
  displayName?: string;
  email?: string | null;
  role: Role;
  /** null: none yet (chosen through the welcome link). */
  passwordHash: string | null;
  mustChangePassword?: boolean;
  sessionLimit?: number | null;
  kind?: 'person' | 'service';
  now: number;
  /** Statements to run in the same transaction (e.g. the audit event). */
  extra?: (user: UserRow) => AccountBatchItem[];
}

/**
 * Inserts a local account with its first password in the history. Returns undefined when the login
 * is taken by a live account, or looks like one's (the unique indexes on the key and the skeleton
 * decide, so concurrent creations cannot both win).
 */
export async function createLocalUser(db: Db, u: NewLocalUser): Promise<UserRow | undefined> {
  const row: UserRow = {
    id: crypto.randomUUID(),
    login: u.login,
    loginKey: loginKey(u.login),
    loginSkeleton: loginSkeleton(u.login),
    displayName: u.displayName ?? '',
    email: u.email ?? null,
    role: u.role,
    source: 'local',
    kind: u.kind ?? 'person',
    sourceName: null,
    externalId: null,
    status: 'active',
    blockedReason: null,
    passwordHash: u.passwordHash,
    // A service account has no password to change, nor to expire.
    passwordChangedAt: u.kind === 'service' ? null : u.now,
    mustChangePassword: u.mustChangePassword ?? false,
    lastLoginAt: null,
    lastActivityAt: null,
    sessionLimit: u.sessionLimit ?? null,
    superAccessUntil: null,
    groups: [],
    language: null,
    createdAt: u.now,
    updatedAt: u.now,
    deletedAt: null,
  };
  try {
    await runAccountBatch(db, [...createAccountStatements(db, row), ...(u.extra?.(row) ?? [])]);
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
  return row;
}

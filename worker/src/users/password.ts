/** Setting a local account's password: policy, history (USER_PASSWORD_HISTORY_DEPTH), audit. */
import { desc, eq } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { PasswordVerifier } from '../passwords/verifier.js';
import { revokeAllTokensStatement } from '../accounts/tokens.js';
import { endPasskeysStatement, factorsOf } from '../accounts/factors.js';
import { passwordBlocklist } from '../passwords/blocklist/index.js';
import { checkPassword, passwordPolicy } from '../passwords/policy.js';
import type { ConfigSnapshot } from '../config/index.js';
import { ProblemError } from '../http/problem.js';
import { countBlocklistRefusals } from '../metrics/process.js';
import { endSessionsStatement, revokeDevicesStatement } from '../accounts/sessions.js';
import { endUserLinks } from '../accounts/reset-tokens.js';
import { setPasswordStatements } from '../accounts/account-writes.js';
import { runAccountBatch } from '../accounts/writes.js';
import type { Db } from '../store/index.js';
import { passwordHistory } from '../../../schema/index.js';
import type { Actor } from './admin-changes.js';
import type { UserRow } from '../accounts/model.js';
import type { RequestScope, Scope } from '../http/scope.js';

/**
 * 422 PASSWORD_POLICY listing every broken rule, machine-readably in `violations`: the composition rules
 * and the blocklist rules (the common passwords, the account's `login`, the service name).
 */
export function assertPasswordPolicy(password: string, config: ConfigSnapshot, login: string): void {
  const violations = checkPassword(password, passwordPolicy(config), { login, blocklist: passwordBlocklist });
  if (violations.length > 0) {
    countBlocklistRefusals(violations.map((v) => v.rule));
    throw new ProblemError('PASSWORD_POLICY', {
      detail: violations.map((v) => v.message).join('; '),
      extensions: { violations },
    });
  }
}

/** Whether `password` is one of the last `depth` passwords of the account (the current one included). */
async function inHistory(
  db: Db,
  verifier: PasswordVerifier,
  userId: string,
  password: string,
  depth: number,
): Promise<boolean> {
  if (depth === 0) return false;
  const rows = await db
    .select({ hash: passwordHistory.passwordHash })
    .from(passwordHistory)
    .where(eq(passwordHistory.userId, userId))
    .orderBy(desc(passwordHistory.createdAt), desc(passwordHistory.id))
    .limit(depth);
  for (const r of rows) if (await verifier.hasher.verify(r.hash, password)) return true;
  return false;
}

export interface SetPasswordOptions {
  actor: Actor;
  /** Set by an admin reset: the user must change it at the next login. */
  mustChange?: boolean;
  /**
   * What the change ends in the same transaction (docs/security.md, "What ends what"): the user's sessions
   * except `keepSession` (the session a user changed their password with), and the API tokens.
   */
  ends: {
    reason: 'password_change' | 'admin_reset' | 'password_reset';
    keepSession?: string;
    tokens: boolean;
    /** The account's passkeys too (they sign in without the password). */
    passkeys?: boolean;
  };
  /** More facts for the audit event (e.g. how the change was made). */
  auditData?: Record<string, unknown>;
}

/**
 * Checks policy and history, then stores the new hash and its history entry, and ends what
 * `o.ends` names and every outstanding reset or welcome link, in one transaction.
 */
export async function setPassword(
  scope: Scope & Pick<RequestScope, 'verifier'>,
  user: UserRow,
  password: string,
  o: SetPasswordOptions,
): Promise<void> {
  const { db, config, verifier } = scope;
  const now = scope.now();
  if (user.source !== 'local')
    throw new ProblemError('CONFLICT', {
      detail: 'the password of an external account is managed by its directory or provider',
    });
  assertPasswordPolicy(password, config, user.login);
  const depth = config.get('USER_PASSWORD_HISTORY_DEPTH');
  if (await inHistory(db, verifier, user.id, password, depth)) {
    throw new ProblemError('PASSWORD_POLICY', {
      detail: `the password was used recently: the last ${depth} passwords cannot be reused`,
      extensions: {
        violations: [
          { rule: 'history', required: depth, actual: 1, message: `not one of the last ${depth} passwords` },
        ],
      },
    });
  }
  const hash = await verifier.hasher.hash(password);
  const self = o.actor.id === user.id;
  await runAccountBatch(db, [
    ...setPasswordStatements(db, user.id, hash, now, o.mustChange ?? false),
    endSessionsStatement(db, user.id, now, o.ends.reason, { except: o.ends.keepSession }),
    revokeDevicesStatement(db, user.id),
    ...(o.ends.tokens ? [revokeAllTokensStatement(db, user.id, now)] : []),
    ...(o.ends.passkeys ? [endPasskeysStatement(db, user.id)] : []),
    // Whoever changes it, the reset and welcome links of the old password end (docs/security.md, "What ends what").
    endUserLinks(db, user.id, now),
    auditInsert(db, now, {
      stream: self ? 'crud_user' : 'crud_admin',
      type: self ? 'password.changed' : 'password.reset',
      actor: o.actor,
      subject: user,
      request: scope.request,
      data: {
        sessionsEnded: o.ends.keepSession === undefined ? 'all' : 'others',
        tokensRevoked: o.ends.tokens,
        ...(o.ends.passkeys ? { passkeysEnded: true } : {}),
        ...o.auditData,
      },
    }),
  ]);
}

/**
 * An administrator's password reset: incident response, so every session and API token ends, and the passkeys
 * unless `endPasskeys` is false (lent rights may not remove second factors: nor may they through a reset).
 * 409 for a service account (it has no password).
 */
export async function adminResetPassword(
  scope: RequestScope,
  actor: UserRow,
  user: UserRow,
  body: { password: string; mustChangePassword: boolean; endPasskeys: boolean },
): Promise<void> {
  if (user.kind === 'service')
    throw new ProblemError('CONFLICT', { detail: 'a service account has no password: it never signs in' });
  if (body.endPasskeys && actor.role !== 'admin' && (await factorsOf(scope.db, user.id)).includes('passkey'))
    throw new ProblemError('FORBIDDEN', {
      detail: 'super-access cannot end the passkeys of an account: reset with endPasskeys false',
    });
  // Lent rights end no passkey even when none was found above: one enrolled meanwhile stays.
  const passkeys = body.endPasskeys && actor.role === 'admin';
  await scope.verifier.limit(scope.request.ip, () =>
    setPassword(scope, user, body.password, {
      actor,
      mustChange: body.mustChangePassword,
      ends: { reason: 'admin_reset', tokens: true, passkeys },
    }),
  );
}

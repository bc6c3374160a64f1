/**
 * Password reset by mail (docs/mail.md):
 *
 * - A request names a login or an e-mail address and is answered alike whatever it finds (202, the
 *   same body): the same work is done either way (a token is minted, hashed and its link sealed),
 *   and what it found is told only in the mail. Requests are throttled per login or address asked
 *   for (known or not, so a 429 reveals nothing) and per client address, by one conditional INSERT
 *   each (atomic under concurrency, as the login throttle).
 * - A local, active account gets a single-use link (256 random bits; only a SHA-256 stored; valid
 *   AUTH_PASSWORD_RESET_TTL_MIN minutes). An LDAP or OIDC account is told to use its directory or
 *   provider; a blocked account to ask an administrator. An account without an address gets nothing
 *   (the notification is recorded as given up).
 * - Confirming applies the password policy and history, ends every session, revokes every API token
 *   (whoever resets may be recovering from a compromise, as after an administrator's reset), ends
 *   a failed-login lock and the account's other links, and is audited. Every other password change, a
 *   block and an e-mail change end the account's links too (docs/security.md, "What ends what").
 */
import { and, eq, gt, min, sql } from 'drizzle-orm';
import { auditInsert, auditInsertWhen } from '../audit/events.js';
import { restrictedSql, throttleKey, unlockStatements } from '../accounts/throttle.js';
import { ProblemError } from '../http/problem.js';
import type { RequestScope } from '../http/scope.js';
import type { Db } from '../store/index.js';
import { sealSecret } from '../store/secret-box.js';
import { findLiveAccount } from '../accounts/lookup.js';
import { loginKey, normaliseLogin } from '../accounts/login-name.js';
import type { UserRow } from '../accounts/model.js';
import { assertPasswordPolicy, setPassword } from '../users/password.js';
import { notificationInsert, notificationRow } from '../notifications/store.js';
import { passwordResetRequests, users } from '../../../schema/index.js';
import {
  claimToken,
  findLiveToken,
  hashResetToken,
  mintToken,
  releaseToken,
  resetLink,
  tokenInsert,
} from '../accounts/reset-tokens.js';
import { liveAccounts } from '../accounts/live.js';

/** Requests per login or address asked for, and per client address, within THROTTLE_WINDOW_MS. */
export const RESET_LIMITS = { perIdentifier: 3, perClient: 30 } as const;
export const THROTTLE_WINDOW_MS = 15 * 60_000;
/** Accounts one address may reach (addresses are not unique among accounts). */
const MAX_ACCOUNTS_PER_ADDRESS = 5;

/** Reserves one request on `key`; the seconds to wait when the window is full. */
async function reserve(db: Db, key: string, limit: number, now: number): Promise<number | null> {
  const res = await db.run(sql`
    insert into ${passwordResetRequests} (id, throttle_key, at)
    select ${crypto.randomUUID()}, ${key}, ${now}
    where (select count(*) from ${passwordResetRequests}
           where throttle_key = ${key} and at > ${now - THROTTLE_WINDOW_MS}) < ${limit}`);
  if (res.rowsAffected === 1) return null;
  const [row] = await db
    .select({ oldest: min(passwordResetRequests.at) })
    .from(passwordResetRequests)
    .where(and(eq(passwordResetRequests.throttleKey, key), gt(passwordResetRequests.at, now - THROTTLE_WINDOW_MS)));
  return Math.max(1, Math.ceil(((row?.oldest ?? now) + THROTTLE_WINDOW_MS - now) / 1000));
}

/** 429 with Retry-After when either the identifier or the client has asked too often. */
async function throttle(scope: RequestScope, identifier: string, now: number): Promise<void> {
  const waits = [
    await reserve(scope.db, `reset:id:${identifier}`, RESET_LIMITS.perIdentifier, now),
    // The client's address as the host trusts it (see http/forwarded.ts); unknown: one shared bucket.
    await reserve(scope.db, `reset:client:${scope.request.ip ?? 'unknown'}`, RESET_LIMITS.perClient, now),
  ].filter((w): w is number => w !== null);
  if (waits.length > 0) {
    const retry = Math.max(...waits);
    throw new ProblemError('TOO_MANY_REQUESTS', {
      detail: `too many password-reset requests: try again in ${retry} s`,
      headers: { 'Retry-After': String(retry) },
    });
  }
}

/** The live accounts a request names (a service account never: it has no password, docs/api.md, "Service accounts"). */
async function accountsFor(db: Db, ask: { login?: string; email?: string }): Promise<UserRow[]> {
  const people = and(liveAccounts, eq(users.kind, 'person'));
  if (ask.login !== undefined) {
    return db
      .select()
      .from(users)
      .where(and(eq(users.loginKey, loginKey(normaliseLogin(ask.login))), people))
      .limit(1);
  }
  return db
    .select()
    .from(users)
    .where(and(sql`lower(${users.email}) = ${ask.email!.toLowerCase()}`, people))
    .limit(MAX_ACCOUNTS_PER_ADDRESS);
}

/**
 * Handles a reset request. Resolves the same way whatever it found; throws only 429 (throttled)
 * or a failure of the service itself.
 */
export async function requestReset(scope: RequestScope, ask: { login?: string; email?: string }): Promise<void> {
  // One instant for the whole request.
  const now = scope.now();
  const identifier =
    ask.login !== undefined ? `login:${loginKey(normaliseLogin(ask.login))}` : `email:${ask.email!.toLowerCase()}`;
  await throttle(scope, identifier, now);
  const { db, config } = scope;
  const ttl = config.get('PASSWORD_RESET_TTL_MIN') * 60_000;
  const accounts = await accountsFor(db, ask);
  // The same work whatever was found: a token minted, hashed and its link sealed.
  const decoy = mintToken();
  hashResetToken(decoy);
  await sealSecret(config, resetLink(config, decoy));

  const writes = [];
  for (const user of accounts) {
    const mode = user.source !== 'local' ? 'external' : user.status !== 'active' ? 'blocked' : 'link';
    const id = crypto.randomUUID();
    // The request's event: the mail's own event (mail.send) names it as its cause.
    const eventId = crypto.randomUUID();
    const token = mode === 'link' && user.email ? mintToken() : null;
    if (token)
      writes.push(tokenInsert(db, { id, userId: user.id, token, purpose: 'reset', now, expiresAt: now + ttl }, user));
    const row = await notificationRow(config, {
      kind: 'password_reset',
      user,
      data: {
        mode,
        ...(mode === 'external' ? { source: user.source } : {}),
        ...(token ? { expiresAt: new Date(now + ttl).toISOString() } : {}),
      },
      dedupeKey: `reset:${id}`,
      eventId,
      now,
      link: token ? resetLink(config, token) : undefined,
    });
    writes.push(notificationInsert(db, row));
    writes.push(
      auditInsert(db, now, {
        id: eventId,
        stream: 'user_activity',
        type: 'password_reset.requested',
        subject: user,
        request: scope.request,
        data: { by: ask.login !== undefined ? 'login' : 'email', mode, mailed: row.status === 'pending' },
      }),
    );
  }
  if (accounts.length === 0) {
    writes.push(
      auditInsert(db, now, {
        stream: 'user_activity',
        type: 'password_reset.requested',
        subjectLogin: ask.login,
        request: scope.request,
        data: {
          by: ask.login !== undefined ? 'login' : 'email',
          found: false,
          ...(ask.email ? { email: ask.email } : {}),
        },
      }),
    );
  }
  await db.batch(writes as [(typeof writes)[number], ...(typeof writes)[number][]]);
}

const invalid = () =>
  new ProblemError('INVALID_RESET_TOKEN', {
    detail: 'the link is invalid, was used already, or has expired: ask for a new one',
  });

/** Sets the password of a link's account; the link is used up. */
export async function confirmReset(scope: RequestScope, token: string, newPassword: string): Promise<void> {
  const { db, config } = scope;
  const now = scope.now();
  const link = await findLiveToken(db, token, now);
  if (!link) throw invalid();
  const user = await findLiveAccount(db, link.userId);
  if (!user || user.source !== 'local') throw invalid();
  if (user.status !== 'active')
    throw new ProblemError('ACCOUNT_BLOCKED', {
      detail: 'the account is blocked: ask an administrator',
      extensions: { reason: user.blockedReason ?? 'admin' },
    });
  // The policy first: a refused password leaves the link usable, without a claim and a release.
  assertPasswordPolicy(newPassword, config, user.login);
  if (!(await claimToken(db, link.id, now))) throw invalid();
  try {
    await scope.verifier.limit(scope.request.ip, () =>
      setPassword(scope, user, newPassword, {
        actor: user,
        ends: { reason: 'password_reset', tokens: true },
        auditData: { via: 'reset_link', purpose: link.purpose },
      }),
    );
  } catch (err) {
    // Refused by the history (or the service failed): the link stays usable for another password.
    await releaseToken(db, link.id, now);
    throw err;
  }
  // The account's other links ended with the change (setPassword). The reset lifts the login's
  // restrictions; when there was one, that is audited like an administrator's unlock (architecture.md §4).
  const key = throttleKey(loginKey(user.login));
  const lifted = { stream: 'user_activity', type: 'account.unlocked', subject: user, request: scope.request } as const;
  await db.batch([
    auditInsertWhen(db, now, { ...lifted, data: { via: 'reset_link' } }, restrictedSql(key, now)),
    ...unlockStatements(db, key, user.id),
  ]);
}

/**
 * Single-use links that set a password (a reset requested by mail, a new account's first password):
 * 256 random bits, shown only in the mail (sealed in the notification until it is sent), stored only
 * as a SHA-256, expiring, and used at most once. Every password change, a block and an e-mail change
 * end the account's outstanding links in their own transaction (docs/security.md, "What ends what"), and a
 * link is stored only while the account is as it was read (so none is minted across such a change).
 */
import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { tokenHash } from './tokens.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Db } from '../store/index.js';
import { notifications, passwordResetTokens, users } from '../../../schema/index.js';
import { CONSOLE_PATH } from '../http/console-path.js';
import { activeAccounts } from './live.js';

/** The front end's page that reads the token from the fragment and posts it to /v3/password_reset/confirm. */
export const RESET_PAGE_PATH = '/reset-password';

/** A fresh token: 256 random bits, base64url. */
export function mintToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** The hash stored for a token (SHA-256, hex). */
export const hashResetToken = tokenHash;

/**
 * The base of the links in mails (docs/mail.md, "Links"): the front end (DEFAULT_FRONTEND_URL) where one
 * is configured; else the service's own console at AUTH_PUBLIC_URL (the Node host's own address when
 * unset), whose pages (`/reset-password`, the home) answer the links; else DEFAULT_FRONTEND_URL's default.
 */
export function mailLinkBase(config: ConfigSnapshot): string {
  const frontEnd = config.get('DEFAULT_FRONTEND_URL').replace(/\/+$/, '');
  const publicUrl = config.get('PUBLIC_URL').replace(/\/+$/, '');
  if (config.source('DEFAULT_FRONTEND_URL') !== 'default' || publicUrl === '') return frontEnd;
  return `${publicUrl}${config.get('ROOT_PATH')}${CONSOLE_PATH}`;
}

/**
 * The link of a token: the mails' link base + /reset-password#token=... The token rides in the
 * fragment, which browsers never send to a server, so it stays out of access logs and Referer.
 */
export function resetLink(config: ConfigSnapshot, token: string): string {
  return `${mailLinkBase(config)}${RESET_PAGE_PATH}#token=${token}`;
}

export interface TokenRecord {
  id: string;
  userId: string;
  token: string;
  purpose: 'reset' | 'welcome';
  now: number;
  expiresAt: number;
}

/** The account as it was read when a link was decided on (what a change of it would alter). */
export interface LinkAccount {
  email: string | null;
  passwordChangedAt: number | null;
}

/**
 * SQL: the account of `userId` is still live, active, at `account.email`, and its password unchanged
 * since `account` was read (a change in between ended the links already; none may follow it).
 */
function accountUnchanged(userId: string, account: LinkAccount): SQL {
  return sql`exists (select 1 from ${users} where id = ${userId} and ${activeAccounts}
    and email is ${account.email} and password_changed_at is ${account.passwordChangedAt})`;
}

/** The insert of a token's hash (in the caller's batch), only while the account is as `account` was read. */
export function tokenInsert(db: Db, t: TokenRecord, account: LinkAccount) {
  return db.run(sql`
    insert into ${passwordResetTokens} (id, user_id, token_hash, purpose, created_at, expires_at)
    select ${t.id}, ${t.userId}, ${hashResetToken(t.token)}, ${t.purpose}, ${t.now}, ${t.expiresAt}
    where ${accountUnchanged(t.userId, account)}`);
}

/**
 * The insert of a token's hash only while no notification has `dedupeKey` yet: a handler that runs
 * twice for one event makes no second token (the notification's own insert is skipped then too).
 * Also only while the account is as `account` was read.
 */
export function tokenInsertUnlessNotified(db: Db, t: TokenRecord, account: LinkAccount, dedupeKey: string) {
  return db.run(sql`
    insert into ${passwordResetTokens} (id, user_id, token_hash, purpose, created_at, expires_at)
    select ${t.id}, ${t.userId}, ${hashResetToken(t.token)}, ${t.purpose}, ${t.now}, ${t.expiresAt}
    where not exists (select 1 from ${notifications} where dedupe_key = ${dedupeKey})
      and ${accountUnchanged(t.userId, account)}`);
}

/** The live token of `token` (unused, unexpired), if any. */
export async function findLiveToken(db: Db, token: string, now: number) {
  const rows = await db
    .select()
    .from(passwordResetTokens)
    .where(eq(passwordResetTokens.tokenHash, hashResetToken(token)));
  const row = rows[0];
  return row && row.usedAt === null && row.expiresAt > now ? row : undefined;
}

/** Marks a token used; true for the one caller that did (single use under concurrency). */
export async function claimToken(db: Db, id: string, now: number): Promise<boolean> {
  const res = await db
    .update(passwordResetTokens)
    .set({ usedAt: now })
    .where(and(eq(passwordResetTokens.id, id), isNull(passwordResetTokens.usedAt)));
  return res.rowsAffected === 1;
}

/** Gives a claimed token back (the new password was refused: the link may be used again). */
export function releaseToken(db: Db, id: string, claimedAt: number) {
  return db
    .update(passwordResetTokens)
    .set({ usedAt: null })
    .where(and(eq(passwordResetTokens.id, id), eq(passwordResetTokens.usedAt, claimedAt)));
}

/**
 * Ends every outstanding link of a user (in the batch of a password change, a block or an e-mail
 * change; `when`: only if that change happened).
 */
export function endUserLinks(db: Db, userId: string, now: number, when?: SQL) {
  return db
    .update(passwordResetTokens)
    .set({ usedAt: now })
    .where(and(eq(passwordResetTokens.userId, userId), isNull(passwordResetTokens.usedAt), when));
}

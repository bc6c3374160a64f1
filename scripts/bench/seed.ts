/**
 * Seeds accounts straight into the service's database with SQL (never through the API): N local
 * accounts, each with a live session and a live API token, in one transaction of
 * `INSERT ... SELECT` over a recursive CTE (a million accounts take seconds, not hours). Each account
 * has every column and row an account created through the API has: its login's key and confusable
 * skeleton (computed by the service's own `loginSkeleton`, bulk-inserted into a temporary table the
 * accounts' insert joins) and its first password's history entry. Every seeded account has the same
 * password hash; session ids and token hashes are random, as real ones are (a B-tree of random keys,
 * not an append-only one). One account in the middle, the probe, gets a session id and a token the
 * benchmark knows, to authenticate with.
 */
import { randomBytes } from 'node:crypto';
import Database from 'libsql';
import { signClaims } from '../../worker/src/accounts/session-keys.js';
import { SESSION_AUDIENCE } from '../../worker/src/accounts/session-token.js';
import { tokenHash } from '../../worker/src/accounts/tokens.js';
import { loginSkeleton } from '../../worker/src/users/confusables.js';

/** Login of the i-th seeded account (1-based). */
export const seededLogin = (i: number): string => `seed${String(i).padStart(8, '0')}`;
/** Id of the i-th seeded account (the length of a UUID, like real ids). */
const seededUserId = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

export interface SeedProbe {
  userId: string;
  login: string;
  /** an API token of the probe account */
  token: string;
  sessionId: string;
}

export interface SeedResult {
  accounts: number;
  seconds: number;
  probe: SeedProbe;
  /** every seeded session (id, account), when asked for (to sign a cookie for each) */
  sessions?: { id: string; userId: string }[];
}

const DAY_MS = 86_400_000;
/** Skeletons per insert statement (two parameters each, within SQLite's 32,766). */
const SKELETON_CHUNK = 5_000;

/**
 * Adds `n` accounts (logins seed00000001...), sessions and tokens to the migrated database
 * `dbFile`, numbered after `offset` (so that several seedings of one file do not collide).
 */
export function seedAccounts(
  dbFile: string,
  n: number,
  o: { passwordHash: string; now: number; offset?: number; listSessions?: boolean },
): SeedResult {
  const offset = o.offset ?? 0;
  const db = new Database(dbFile);
  const started = performance.now();
  try {
    db.pragma('busy_timeout = 10000');
    const seq = 'with recursive seq(i) as (select ? union all select i + 1 from seq where i < ?)';
    const userId = "printf('00000000-0000-4000-8000-%012d', i)";
    const args = [offset + 1, offset + n];
    db.transaction(() => {
      // The skeletons, computed as the service computes them, SKELETON_CHUNK rows per insert.
      db.exec('create temp table seed_skeletons (i integer primary key, skeleton text not null)');
      for (let first = offset + 1; first <= offset + n; first += SKELETON_CHUNK) {
        const last = Math.min(offset + n, first + SKELETON_CHUNK - 1);
        const values: (number | string)[] = [];
        for (let i = first; i <= last; i++) values.push(i, loginSkeleton(seededLogin(i)));
        db.prepare(
          `insert into seed_skeletons (i, skeleton) values ${Array(last - first + 1)
            .fill('(?, ?)')
            .join(', ')}`,
        ).run(...values);
      }
      db.prepare(
        `${seq} insert into users (id, login, login_key, login_skeleton, display_name, role, source, status,
           password_hash, password_changed_at, must_change_password, last_login_at, last_activity_at, created_at,
           updated_at)
         select ${userId}, printf('seed%08d', i), printf('seed%08d', i), k.skeleton, printf('Seeded %d', i), 'user',
           'local', 'active', ?, ?, 0, ?, ?, ?, ? from seq join seed_skeletons k using (i)`,
      ).run(...args, o.passwordHash, o.now, o.now, o.now, o.now, o.now);
      db.exec('drop table seed_skeletons');
      db.prepare(
        `${seq} insert into password_history (user_id, password_hash, created_at) select ${userId}, ?, ? from seq`,
      ).run(...args, o.passwordHash, o.now);
      db.prepare(
        `${seq} insert into sessions (id, user_id, kind, created_at, last_seen_at, expires_at, user_agent, auth_method,
           authenticated_at)
         select lower(hex(randomblob(24))), ${userId}, 'cookie', ?, ?, ?, 'bench', 'local_password', ? from seq`,
      ).run(...args, o.now, o.now, o.now + DAY_MS, o.now);
      db.prepare(
        `${seq} insert into api_tokens (id, user_id, name, prefix, secret_hash, created_at)
         select lower(hex(randomblob(16))), ${userId}, 'seed', 'ast_seed', lower(hex(randomblob(32))), ? from seq`,
      ).run(...args, o.now);
    })();
    // The probe: an account in the middle, with a session id and a token the caller knows.
    const i = offset + Math.ceil(n / 2);
    const probe: SeedProbe = {
      userId: seededUserId(i),
      login: seededLogin(i),
      token: `ast_${randomBytes(32).toString('base64url')}`,
      sessionId: randomBytes(24).toString('base64url'),
    };
    db.prepare('update sessions set id = ? where user_id = ?').run(probe.sessionId, probe.userId);
    db.prepare('update api_tokens set secret_hash = ?, prefix = ? where user_id = ?').run(
      tokenHash(probe.token),
      probe.token.slice(0, 12),
      probe.userId,
    );
    const sessions = o.listSessions
      ? (db
          .prepare('select id, user_id as userId from sessions where user_id >= ? and user_id <= ?')
          .all(seededUserId(offset + 1), seededUserId(offset + n)) as { id: string; userId: string }[])
      : undefined;
    return { accounts: n, seconds: (performance.now() - started) / 1000, probe, ...(sessions ? { sessions } : {}) };
  } finally {
    db.close();
  }
}

/**
 * Clears the login skeletons of the `n` seeded accounts after `offset`: the database of a deployment
 * upgraded past the migration that added the column, for the backfill to fill.
 */
export function clearSkeletons(dbFile: string, n: number, offset = 0): number {
  const db = new Database(dbFile);
  const started = performance.now();
  try {
    db.pragma('busy_timeout = 10000');
    db.prepare('update users set login_skeleton = null where id >= ? and id <= ?').run(
      seededUserId(offset + 1),
      seededUserId(offset + n),
    );
    return (performance.now() - started) / 1000;
  } finally {
    db.close();
  }
}

/** The session cookie (`auth_session=<JWT>`) of a session row, signed as the service signs it. */
export async function sessionCookie(
  secret: string,
  sessionId: string,
  userId: string,
  expiresAt: number,
): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  );
  const claims = { sid: sessionId, sub: userId };
  return `auth_session=${await signClaims({ current: key, previous: undefined }, claims, expiresAt, SESSION_AUDIENCE)}`;
}

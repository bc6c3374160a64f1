/**
 * The lookups of every authenticated request and of every login use indexes (docs/performance.md, the growth scenario:
 * the cost per request must not grow with the number of accounts): EXPLAIN QUERY PLAN of the statements
 * the service really sends, over a migrated database, shows no SCAN of users, sessions,
 * api_tokens or the lockout tables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, InStatement } from '@libsql/client';
import Database from 'libsql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountOfToken } from '../../worker/src/accounts/tokens.js';
import { liveLocalUser } from '../../worker/src/auth/password-login.js';
import { attemptPlan, both, notReserved, reserveAttempt, throttleKey } from '../../worker/src/accounts/throttle.js';
import { deviceLive, trustedDeviceOfLogin } from '../../worker/src/accounts/devices.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { createSession, sessionAccount } from '../../worker/src/accounts/sessions.js';
import type { UserRow } from '../../worker/src/accounts/model.js';
import { createDb } from '../../worker/src/store/index.js';
import { createEmbeddedClient } from '../../worker/node/sqlite-client.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { fillLoginSkeletons, lookAlikeOf, skeletonsRemaining } from '../../worker/src/users/login-skeletons.js';
import { rekeyLogins } from '../../worker/src/users/rekey-logins.js';
import { users as usersTable } from '../../schema/index.js';

const dir = mkdtempSync(join(tmpdir(), 'query-plans-'));
const file = join(dir, 'plans.db');
let sent: { sql: string; args: unknown[] }[] = [];
let client: Client;
let raw: InstanceType<typeof Database>;

/** The embedded client, remembering every statement sent through it. */
function recording(inner: Client): Client {
  const note = (s: InStatement) =>
    typeof s === 'string'
      ? sent.push({ sql: s, args: [] })
      : sent.push({ sql: s.sql, args: (s.args ?? []) as unknown[] });
  return new Proxy(inner, {
    get(target, key) {
      if (key === 'execute') return (s: InStatement) => (note(s), target.execute(s));
      if (key === 'batch')
        return (stmts: InStatement[], mode?: 'write') => (stmts.forEach(note), target.batch(stmts, mode));
      const v = Reflect.get(target, key) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The plan of a statement: one line per step ("SEARCH users USING INDEX ...", "SCAN ..."). */
function plan(sql: string, args: unknown[]): string[] {
  const rows = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(args as never[])) as { detail: string }[];
  return rows.map((r) => r.detail);
}

const TABLES = /\b(users|sessions|api_tokens|login_attempts|login_locks|devices)\b/;

/** Every step touching our tables is an index search, never a scan of the table. */
function expectIndexed(steps: string[]): void {
  const touching = steps.filter((s) => TABLES.test(s));
  expect(touching.length, steps.join('\n')).toBeGreaterThan(0);
  for (const step of touching)
    expect(step, steps.join('\n')).toMatch(/^SEARCH .* USING (COVERING |INTEGER PRIMARY KEY|INDEX|PRIMARY KEY)/);
}

beforeAll(async () => {
  client = createEmbeddedClient(file);
  const db = createDb(client);
  await migrateDatabase(db, parseEnvironment({}).get('DB_SCHEMA'));
  raw = new Database(file);
});
afterAll(() => {
  raw.close();
  client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('query plans of the hot path', () => {
  const db = () => createDb(recording(client));

  it('the Bearer token lookup searches api_tokens by its hash and users by id', async () => {
    sent = [];
    await accountOfToken(db(), 'ast_not-a-real-token', Date.now(), 1000);
    expect(sent).toHaveLength(1);
    expectIndexed(plan(sent[0]!.sql, sent[0]!.args));
    expect(plan(sent[0]!.sql, sent[0]!.args).join('\n')).toMatch(/api_tokens USING INDEX .*secret_hash/);
  });

  it('the session lookup searches sessions and users by id', async () => {
    sent = [];
    await sessionAccount(db(), 'no-such-session', Date.now(), {
      idleMs: 60_000,
      absoluteMs: 3_600_000,
      recheckMs: 1000,
    });
    expect(sent).toHaveLength(1);
    expectIndexed(plan(sent[0]!.sql, sent[0]!.args));
  });

  it('the login lookup and the lockout reservation use indexes', () => {
    const d = createDb(client);
    const account = liveLocalUser(d, { key: 'someone' }).getQuery();
    expectIndexed(plan(account.sql, account.params));
    expect(plan(account.sql, account.params).join('\n')).toMatch(/users USING INDEX users_live_login_key/);
    const attempt = attemptPlan(parseEnvironment({}), throttleKey('someone'), '10.0.0.1', 'a-device');
    const q = reserveAttempt(d, attempt, Date.now()).getQuery();
    expectIndexed(plan(q.sql, q.params));
    // A returning browser's: the device's budget while its row is live, the untrusted one when that reserved nothing.
    const claim = { id: 'a-device', userId: 'u-plans' };
    const untrusted = attemptPlan(parseEnvironment({}), throttleKey('someone'), '10.0.0.1');
    for (const also of [deviceLive(claim, 'someone'), both(deviceLive(claim, 'someone'), notReserved(attempt))]) {
      const r = reserveAttempt(d, untrusted, Date.now(), also).getQuery();
      expectIndexed(plan(r.sql, r.params));
    }
    const device = trustedDeviceOfLogin(d, claim, 'someone').getQuery();
    expectIndexed(plan(device.sql, device.params));
  });

  it("a new session's limit reads only the user's live sessions (the partial index), not their history", async () => {
    const user = { id: 'u-plans', login: 'plans' } as UserRow;
    const config = parseEnvironment({});
    sent = [];
    // The user does not exist: the insert fails on its foreign key, after the plan is known.
    await createSession(db(), user, { kind: 'cookie', authMethod: 'local_password', now: Date.now(), config }).catch(
      () => {},
    );
    const limit = sent.find((s) => /^\s*update "sessions" set revoked_at/.test(s.sql));
    expect(limit, sent.map((s) => s.sql).join('\n')).toBeDefined();
    const steps = plan(limit!.sql, limit!.args);
    expectIndexed(steps);
    expect(steps.join('\n')).toMatch(/sessions USING INDEX sessions_user_live/);
  });

  it("the skeleton backfill's batches, and the look-alike check of accounts not filled yet, use indexes", async () => {
    const now = Date.now();
    const legacy = (id: string) => ({ id, login: id, loginKey: id, createdAt: now, updatedAt: now });
    await createDb(client)
      .insert(usersTable)
      .values([legacy('plans-legacy-1'), legacy('plans-legacy-2'), legacy('plans-legacy-3')]);
    sent = [];
    await fillLoginSkeletons(db(), { batchSize: 2 });
    // Each batch's write finds its rows by the primary key.
    const writes = sent.filter((s) => /^update "users" set login_skeleton/.test(s.sql));
    expect(writes, sent.map((s) => s.sql).join('\n')).toHaveLength(2);
    for (const w of writes)
      expect(plan(w.sql, w.args).join('\n')).toMatch(/^SEARCH users USING INDEX sqlite_autoindex_users_1 \(id=\?\)/);
    await lookAlikeOf(db(), 'someone');
    await skeletonsRemaining(db());
    const pending = sent.filter((s) => /login_skeleton"? is null/.test(s.sql) && /from "users"/.test(s.sql));
    expect(pending.length, sent.map((s) => s.sql).join('\n')).toBeGreaterThanOrEqual(3);
    for (const s of pending) {
      const steps = plan(s.sql, s.args);
      // A search or a scan of an index holding only the accounts still without a skeleton (none once filled, but
      // look-alikes), never of the table; the batches ordered by the index itself: no sort per batch.
      for (const step of steps.filter((x) => TABLES.test(x)))
        expect(step, s.sql).toMatch(/^(SEARCH|SCAN) users USING (COVERING )?INDEX users_(pending|live)_login_skeleton/);
      expect(steps.join('\n'), s.sql).not.toMatch(/TEMP B-TREE/);
    }
  });

  it("a start's look for login keys to recompute reads only the non-ASCII keys' index", async () => {
    sent = [];
    await rekeyLogins(db());
    const users = sent.filter((s) => /from "users"/.test(s.sql));
    expect(users, sent.map((s) => s.sql).join('\n')).toHaveLength(1);
    const steps = plan(users[0]!.sql, users[0]!.args);
    for (const step of steps.filter((x) => TABLES.test(x)))
      expect(step, users[0]!.sql).toMatch(/^SCAN users USING INDEX users_non_ascii_login_key/);
  });
});

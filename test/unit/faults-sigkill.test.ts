/**
 * Fault drill (docs/operations.md, "Fault drills"): the Node host (`worker/node/main.ts` on a file database) killed
 * with SIGKILL in the middle of 200 parallel requests (session logins, password changes, API token
 * issues), then started again with the same SESSION_SECRET_KEY. Every write the host acknowledged
 * (a 2xx answer) is there and works; the file passes `PRAGMA integrity_check` and
 * `foreign_key_check`; the service's own invariants hold (below). Then a start with another
 * DB_SCHEMA is refused, and changes nothing. The other drills (bridge, database lock):
 * test/http/faults.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createClient, type Client } from '@libsql/client';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, basic } from '../harness/client.js';
import { freePort, startNodeTestHost, type RunningHost } from '../harness/hosts.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'faults-kill-'));
const dbPath = join(dir, 'auth.db');
const PASSWORD = 'Str0ng$pass';
const NEW_PASSWORD = 'N3w$tronger#pass';
const admin = basic(ADMIN.login, ADMIN.password);
const hosts: RunningHost[] = [];
let db: Client | undefined;

// Room for all 200 in the hashing queue (else most would be refused with 503 before any work), and
// for every session of a user (else older sessions would end by the session limit, not by the crash).
const ENV = { AUTH_PASSWORD_HASH_QUEUE: '1000', AUTH_SESSIONS_DEFAULT_COUNT: '50', AUTH_SESSIONS_MAX_COUNT: '100' };

afterAll(async () => {
  db?.close();
  for (const h of hosts) await h.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Answer = { status: number; body: string; cookie?: string } | { error: string };
const acked = (a: Answer): a is { status: number; body: string; cookie?: string } =>
  'status' in a && a.status >= 200 && a.status < 300;

/** One request; a cut connection (the kill) is an answer of its own, never acknowledged. */
async function send(
  base: string,
  path: string,
  init: { method: string; auth?: string; json?: unknown },
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.auth) headers.Authorization = init.auth;
  if (init.json !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const res = await fetch(`${base}${path}`, {
      method: init.method,
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    const body = await res.text();
    const cookie = res.headers
      .getSetCookie()
      .find((c) => c.startsWith('auth_session='))
      ?.split(';')[0];
    return { status: res.status, body, ...(cookie ? { cookie } : {}) };
  } catch (e) {
    return { error: String(e) };
  }
}

/** `npm start` with `env`, to its exit (a refused start). */
function runHost(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'worker/node/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, AUTH_BRIDGE_EMBEDDED: 'False', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(t);
      res({ code, out });
    });
  });
}

describe('the Node host killed with SIGKILL during 200 parallel requests', () => {
  it('restarted with the same SESSION_SECRET_KEY: every acknowledged write is there, the file and its ' +
    'rows are sound', async () => {
    const first = await startNodeTestHost(ENV, { database: dbPath });
    hosts.push(first);
    const users = {
      session: Array.from({ length: 40 }, (_, i) => `kill-s${i}`),
      password: Array.from({ length: 20 }, (_, i) => `kill-p${i}`),
      token: Array.from({ length: 10 }, (_, i) => `kill-t${i}`),
    };
    const all = [...users.session, ...users.password, ...users.token];
    for (let i = 0; i < all.length; i += 8) {
      const made = await Promise.all(
        all
          .slice(i, i + 8)
          .map((login) =>
            send(first.url, '/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD } }),
          ),
      );
      for (const m of made) expect('status' in m && m.status, JSON.stringify(m)).toBe(201);
    }

    // 160 session logins (4 per user), 20 password changes, 20 token issues, all at once.
    type Req = { kind: 'session' | 'password' | 'token'; login: string; answer?: Answer };
    const reqs: Req[] = [
      ...Array.from({ length: 160 }, (_, i) => ({ kind: 'session' as const, login: users.session[i % 40]! })),
      ...users.password.map((login) => ({ kind: 'password' as const, login })),
      ...Array.from({ length: 20 }, (_, i) => ({ kind: 'token' as const, login: users.token[i % 10]! })),
    ].sort(() => Math.random() - 0.5);
    let answered = 0;
    const inFlight = reqs.map(async (r) => {
      const call =
        r.kind === 'session'
          ? send(first.url, '/v3/login', { method: 'POST', json: { login: r.login, password: PASSWORD } })
          : r.kind === 'password'
            ? send(first.url, '/v4/users/me/password', {
                method: 'PUT',
                auth: basic(r.login, PASSWORD),
                json: { oldPassword: PASSWORD, newPassword: NEW_PASSWORD },
              })
            : send(first.url, '/v4/users/me/tokens', {
                method: 'POST',
                auth: basic(r.login, PASSWORD),
                json: { name: `t-${Math.random().toString(36).slice(2)}` },
              });
      r.answer = await call;
      answered++;
    });
    // In the middle: once a fifth has been answered.
    while (answered < 40) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    await Promise.all(inFlight);
    const ok = reqs.filter((r) => acked(r.answer!));
    const cut = reqs.filter((r) => 'error' in r.answer!);
    // Some were acknowledged, some cut by the kill; none failed otherwise.
    for (const r of reqs)
      if (!acked(r.answer!) && !('error' in r.answer!))
        throw new Error(`${r.kind} ${r.login}: ${JSON.stringify(r.answer)}`);
    expect(ok.length).toBeGreaterThanOrEqual(30);
    expect(cut.length).toBeGreaterThan(0);

    // The same key, the same file.
    const second = await startNodeTestHost(ENV, { database: dbPath });
    hosts.push(second);
    db = createClient({ url: `file:${dbPath}` });
    const rows = async (sqlText: string, args: Array<string | number> = []) =>
      (await db!.execute({ sql: sqlText, args })).rows;

    // The file.
    expect((await rows('PRAGMA integrity_check')).map((r) => r[0])).toEqual(['ok']);
    expect(await rows('PRAGMA foreign_key_check')).toEqual([]);

    // Every acknowledged session: its cookie still works (its row is there and the key verifies it).
    for (const r of ok.filter((q) => q.kind === 'session')) {
      const a = r.answer as { cookie?: string };
      expect(a.cookie, r.login).toBeDefined();
      const me = await fetch(`${second.url}/v4/users/me`, { headers: { Cookie: a.cookie! } });
      expect(me.status, `${r.login}: ${await me.clone().text()}`).toBe(200);
    }
    // Every acknowledged token works.
    for (const r of ok.filter((q) => q.kind === 'token')) {
      const { token } = JSON.parse((r.answer as { body: string }).body) as { token: string };
      expect(
        (await fetch(`${second.url}/v4/users/me`, { headers: { Authorization: `Bearer ${token}` } })).status,
        r.login,
      ).toBe(200);
    }
    // A password change is all or nothing: acknowledged, the new password; cut, exactly one of the two.
    const works = async (login: string, password: string) =>
      (await send(second.url, '/v3/login_without_session', { method: 'POST', auth: basic(login, password) })) as {
        status: number;
      };
    for (const r of reqs.filter((q) => q.kind === 'password')) {
      const [oldOk, newOk] = [
        (await works(r.login, PASSWORD)).status === 200,
        (await works(r.login, NEW_PASSWORD)).status === 200,
      ];
      if (acked(r.answer!))
        expect({ login: r.login, oldOk, newOk }).toEqual({ login: r.login, oldOk: false, newOk: true });
      else expect(oldOk !== newOk, `${r.login}: old ${oldOk}, new ${newOk}`).toBe(true);
    }

    // The service's invariants.
    // - every local account has a well-formed argon2id hash, and live logins are unique;
    const accounts = await rows(
      `select login, login_key, password_hash from users where source = 'local' and deleted_at is null`,
    );
    for (const a of accounts)
      expect(String(a.password_hash), String(a.login)).toMatch(
        /^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/,
      );
    expect(new Set(accounts.map((a) => a.login_key)).size).toBe(accounts.length);
    // - sessions and tokens belong to live accounts and are consistent in time;
    expect(await rows('select id from sessions where created_at > expires_at or last_seen_at < created_at')).toEqual(
      [],
    );
    expect(await rows('select s.id from sessions s left join users u on u.id = s.user_id where u.id is null')).toEqual(
      [],
    );
    expect(
      await rows('select t.id from api_tokens t left join users u on u.id = t.user_id where u.id is null'),
    ).toEqual([]);
    // - each acknowledged login has its audit event (written in the same transaction as the session);
    for (const login of users.session) {
      const n = ok.filter((q) => q.kind === 'session' && q.login === login).length;
      const [{ c }] = (await rows(
        `select count(*) as c from audit_outbox where type = 'login.success' and subject_login = ?`,
        [login],
      )) as unknown as [{ c: number }];
      expect(c, login).toBeGreaterThanOrEqual(n);
    }
    // - a login cut by the kill may leave the attempt it had reserved (the verdict never came): at
    //   most one per cut request, never more, and no lock.
    for (const login of [...users.session, ...users.password, ...users.token]) {
      const reserved = (await rows('select id from login_attempts where throttle_key = ?', [`local:${login}`])).length;
      expect(reserved, login).toBeLessThanOrEqual(cut.filter((q) => q.login === login).length);
    }
    expect(await rows('select throttle_key from login_locks')).toEqual([]);
  }, 180_000);

  it('a start with another DB_SCHEMA is refused (exit 1, a clear line) and changes nothing', async () => {
    db ??= createClient({ url: `file:${dbPath}` });
    const before = (await db.execute('select count(*) as c from users')).rows[0]!.c;
    await hosts.pop()?.stop();
    const port = await freePort();
    const { code, out } = await runHost({
      LIBSQL_URL: `file:${dbPath}`,
      AUTH_DB_SCHEMA: 'another_tenant',
      AUTH_BIND_PORT: String(port),
      AUTH_BIND_HOST: '127.0.0.1',
    });
    expect(code).toBe(1);
    expect(out).toContain('CRITICAL');
    expect(out).toContain('stamped with DB_SCHEMA \\"auth\\"');
    expect(out).toContain('\\"another_tenant\\"');
    expect(out).not.toContain('serving');
    expect((await db.execute(`select value from service_meta where key = 'db_schema'`)).rows[0]!.value).toBe('auth');
    expect((await db.execute('select count(*) as c from users')).rows[0]!.c).toBe(before);
  }, 60_000);
});

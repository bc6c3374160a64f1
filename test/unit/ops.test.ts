/**
 * The operator command (`npm run ops`), run as a person runs it, against the Node host's database
 * file and against a remote database (the libSQL HTTP dev server): the way back for a locked-out,
 * forgotten or inactivity-blocked only administrator, another administrator, the list; each use
 * audited with actor "operator". The service's answers are checked through the app itself.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { asc, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { auditOutbox, mfaTotp, passwordResetTokens, users } from '../../schema/index.js';
import { startLibsqlDevServer } from '../../scripts/libsql-dev-server.js';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { hashResetToken, mintToken } from '../../worker/src/accounts/reset-tokens.js';
import { assembleService } from '../../worker/src/service.js';
import type { Db } from '../../worker/src/store/index.js';
import { bootstrapAdmin } from '../../worker/src/users/bootstrap.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { nodeStaticFiles } from '../../worker/node/static-files.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const ADMIN = { login: 'admin', password: 'Chang3@me' };
const cleanups: (() => Promise<void> | void)[] = [];
// Each command is a process that loads the service's code (seconds each on a loaded machine).
vi.setConfig({ testTimeout: 120_000 });
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Runs `npm run ops -- ...args` (as tsx scripts/ops.ts) with `stdin`, from an empty directory (no .env). */
function ops(libsqlUrl: string, args: string[], stdin = '') {
  const cwd = mkdtempSync(join(tmpdir(), 'auth-ops-cwd-'));
  return new Promise<{ code: number | null; out: string; err: string }>((res) => {
    const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'scripts/ops.ts'), ...args], {
      cwd,
      env: { PATH: process.env.PATH, LIBSQL_URL: libsqlUrl },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.stdin.end(stdin);
    const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(t);
      rmSync(cwd, { recursive: true, force: true });
      res({ code, out, err });
    });
  });
}

interface Service {
  url: string;
  db: Db;
  login(login: string, password: string): Promise<{ status: number; code?: string }>;
  call(path: string, init: RequestInit & { auth?: [string, string] }): Promise<Response>;
  events(type: string): Promise<(typeof auditOutbox.$inferSelect)[]>;
}

/** A migrated database with the one administrator, and the app (as both hosts build it) over it. */
async function service(url: string): Promise<Service> {
  const config = parseEnvironment({
    LIBSQL_URL: url,
    AUTH_BOOTSTRAP_ADMIN_LOGIN: ADMIN.login,
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    AUTH_LOG_LEVEL: 'CRITICAL',
    AUTH_ACCESS_LOG_LEVEL: 'CRITICAL',
  });
  const database = openDatabase(config);
  cleanups.push(() => database.close());
  await migrateDatabase(database.db, config.get('DB_SCHEMA'));
  const hasher = createNodeNativeHasher();
  expect(await bootstrapAdmin(database.db, config, hasher, Date.now())).toBe('created');
  const { app } = assembleService({
    env: config,
    openDb: () => database.db,
    hasher,
    hostName: 'test-host',
    staticFiles: nodeStaticFiles('static'),
    writeLog: () => {},
    settingsTtlMs: 0,
  });
  const call = async (path: string, init: RequestInit & { auth?: [string, string] }) => {
    const headers = new Headers(init.headers);
    if (init.auth) headers.set('Authorization', `Basic ${Buffer.from(init.auth.join(':')).toString('base64')}`);
    return app.request(`/api/auth${path}`, { ...init, headers });
  };
  return {
    url,
    db: database.db,
    call,
    async login(login, password) {
      const res = await call('/v3/login_without_session', { method: 'POST', auth: [login, password] });
      if (res.status === 200) return { status: 200 };
      return { status: res.status, code: ((await res.json()) as { code: string }).code };
    },
    events: (type) =>
      database.db.select().from(auditOutbox).where(eq(auditOutbox.type, type)).orderBy(asc(auditOutbox.at)),
  };
}

function fileDatabase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'auth-ops-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return `file:${join(dir, 'auth.db')}`;
}

async function remoteDatabase(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'auth-ops-remote-'));
  const server = await startLibsqlDevServer({ path: join(dir, 'auth.db') });
  cleanups.push(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return server.url;
}

/** The audit event of an operator command: actor "operator", no actor account. */
function expectOperatorEvent(events: (typeof auditOutbox.$inferSelect)[], subject?: string) {
  expect(events).toHaveLength(1);
  const about = subject ? { subjectLogin: subject } : {};
  expect(events[0]).toMatchObject({ stream: 'crud_admin', actorLogin: 'operator', actorId: null, ...about });
}

describe.each([
  ["the Node host's database file", async () => fileDatabase()],
  ['a remote database (libSQL over HTTP)', remoteDatabase],
])('npm run ops on %s', (_name, database) => {
  it('an administrator who lost the second factor: remove-factors', async () => {
    const s = await service(await database());
    const [admin] = await s.db.select().from(users).where(eq(users.loginKey, ADMIN.login));
    const now = Date.now();
    await s.db.insert(mfaTotp).values({ userId: admin!.id, secretEnc: 'v1.x.y', createdAt: now, confirmedAt: now });
    expect((await s.login(ADMIN.login, ADMIN.password)).code).toBe('SECOND_FACTOR_NOT_ALLOWED_HERE');
    const r = await ops(s.url, ['remove-factors', ADMIN.login]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('1 second-factor record(s) removed');
    expect((await s.login(ADMIN.login, ADMIN.password)).status).toBe(200);
    expectOperatorEvent(await s.events('mfa.factor_removed'), ADMIN.login);
  });

  it('a locked-out only administrator: unlock', async () => {
    const s = await service(await database());
    for (let i = 0; i < 3; i++) expect((await s.login(ADMIN.login, 'Chang3')).code).toBe('INVALID_CREDENTIALS');
    expect((await s.login(ADMIN.login, ADMIN.password)).code).toBe('ACCOUNT_LOCKED');
    // The bootstrap cannot help: an administrator exists.
    const listed = await ops(s.url, ['list-admins']);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(/^admin \[admin, local\]: active, locked until \d{4}-/m);
    expectOperatorEvent(await s.events('operator.admins_listed'));

    const run = await ops(s.url, ['unlock', 'ADMIN']);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('unlocked: admin [admin, local]: active, not locked');
    expect((await s.login(ADMIN.login, ADMIN.password)).status).toBe(200);
    expectOperatorEvent(await s.events('account.unlocked'), 'admin');
  });

  it('a forgotten password: reset-password from stdin (policy-checked), to be changed at the next login', async () => {
    const s = await service(await database());
    const weak = await ops(s.url, ['reset-password', 'admin'], 'weak\n');
    expect(weak.code).toBe(1);
    expect(weak.err).toContain('refused by the password policy');
    expect(weak.err).toContain('at least 8 characters');
    // The blocklist too (docs/security.md, "Password blocklist"): a common password that passes the composition rules.
    const common = await ops(s.url, ['reset-password', 'admin'], 'P@ssw0rd\n');
    expect(common.code).toBe(1);
    expect(common.err).toContain('not one of the most common passwords');
    expect(await s.events('password.reset')).toHaveLength(0);

    // A reset link mailed before (as /v3/password_reset/request stores it): the operator's reset ends it.
    const [admin] = await s.db.select().from(users).where(eq(users.login, ADMIN.login));
    const link = mintToken();
    const now = Date.now();
    await s.db.insert(passwordResetTokens).values({
      id: crypto.randomUUID(),
      userId: admin!.id,
      tokenHash: hashResetToken(link),
      purpose: 'reset',
      createdAt: now,
      expiresAt: now + 30 * 60_000,
    });

    const run = await ops(s.url, ['reset-password', 'admin'], 'N3w@pass\n');
    expect(run.code, run.err).toBe(0);
    const confirm = await s.call('/v3/password_reset/confirm', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: link, newPassword: 'L1nk@pass' }),
    });
    expect(confirm.status).toBe(400);
    expect(run.out).toContain('must change the password at the next login');
    expect(run.out + run.err).not.toContain('N3w@pass');
    expect((await s.login(ADMIN.login, ADMIN.password)).code).toBe('INVALID_CREDENTIALS');
    expect((await s.login(ADMIN.login, 'N3w@pass')).code).toBe('PASSWORD_EXPIRED');
    const change = await s.call('/v4/users/me/password', {
      method: 'PUT',
      auth: [ADMIN.login, 'N3w@pass'],
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ oldPassword: 'N3w@pass', newPassword: 'Own@pass9' }),
    });
    expect(change.status).toBe(204);
    expect((await s.login(ADMIN.login, 'Own@pass9')).status).toBe(200);
    expectOperatorEvent(await s.events('password.reset'), 'admin');
  });
});

describe("npm run ops: the other commands (Node host's database file)", () => {
  it('unblock: an only administrator blocked by inactivity', async () => {
    const s = await service(fileDatabase());
    // Today's rule never blocks the last active administrator for inactivity; a database from before
    // that rule (or an administrator blocked while another was active, then removed) can hold one.
    await s.db.update(users).set({ status: 'blocked', blockedReason: 'inactivity' }).where(eq(users.login, 'admin'));
    expect((await s.login(ADMIN.login, ADMIN.password)).code).toBe('ACCOUNT_BLOCKED');
    const run = await ops(s.url, ['unblock', 'admin']);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('unblocked: admin [admin, local]: active');
    expect((await s.login(ADMIN.login, ADMIN.password)).status).toBe(200);
    expectOperatorEvent(await s.events('account.unblocked'), 'admin');
  });

  it('create-admin: another administrator (policy-checked), who can log in; list-admins shows both', async () => {
    const s = await service(fileDatabase());
    const weak = await ops(s.url, ['create-admin', 'second'], 'short\n');
    expect(weak.code).toBe(1);
    expect((await s.login('second', 'short')).code).toBe('INVALID_CREDENTIALS');
    const run = await ops(s.url, ['create-admin', 'second', '--must-change'], 'S3cond#admin\n');
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('created administrator: second [admin, local]');
    expect((await s.login('second', 'S3cond#admin')).code).toBe('PASSWORD_EXPIRED');
    const events = await s.events('user.created');
    expect(events.map((e) => e.subjectLogin)).toEqual(['admin', 'second']);
    const data = { role: 'admin', via: 'operator' };
    expect(events[1]).toMatchObject({ actorLogin: 'operator', actorId: null, data });
    const listed = await ops(s.url, ['list-admins']);
    const admins = listed.out.split('\n').filter((l) => l.includes('[admin,'));
    expect(admins.map((l) => l.split(' ')[0])).toEqual(['admin', 'second']);
  });

  it('on a terminal: prompts twice without echo', async () => {
    const s = await service(fileDatabase());
    // `script` gives the command a pseudo-terminal, as a person's shell does; input is typed after each prompt.
    const command = [process.execPath, '--import', TSX, join(ROOT, 'scripts/ops.ts'), 'reset-password', 'admin'];
    const child = spawn('script', ['-qec', command.map((a) => `'${a}'`).join(' '), '/dev/null'], {
      env: { PATH: process.env.PATH, LIBSQL_URL: s.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    const closed = new Promise<number | null>((res) => child.on('close', res));
    await expect.poll(() => out, { timeout: 60_000 }).toContain('new password for admin: ');
    child.stdin.write('Typ3d@pass\r');
    await expect.poll(() => out, { timeout: 10_000 }).toContain('repeat it: ');
    child.stdin.write('Typ3d@pass\r');
    expect(await closed).toBe(0);
    expect(out).toContain('password reset: admin');
    expect(out).not.toContain('Typ3d@pass');
    expect((await s.login(ADMIN.login, 'Typ3d@pass')).code).toBe('PASSWORD_EXPIRED');
  });

  it('never takes a password from the command line; unknown logins and commands are plain errors', async () => {
    const s = await service(fileDatabase());
    const argv = await ops(s.url, ['reset-password', 'admin', 'N3w@pass']);
    expect(argv.code).toBe(2);
    expect(argv.err).toContain('never taken from the command line');
    const flag = await ops(s.url, ['create-admin', 'x', '--password=N3w@pass']);
    expect(flag.code).toBe(2);
    expect((await s.login(ADMIN.login, ADMIN.password)).status).toBe(200);
    const unknown = await ops(s.url, ['unlock', 'nobody']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toBe('ops: no account with the login "nobody"\n');
  });

  it('refuses a database file that does not exist (never creates an empty one)', async () => {
    const url = fileDatabase();
    const run = await ops(url, ['list-admins']);
    expect(run.code).toBe(1);
    expect(run.err).toContain('no database at');
  });
});

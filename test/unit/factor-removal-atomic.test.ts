/**
 * A change of second factors is one transaction (architecture.md §2): a TOTP confirmation, the caller's own
 * TOTP removal and an administrator's removal of every factor write the change, the ended sessions and the
 * audit event (which mails the user) in one batch. A database failure during that write leaves everything
 * as it was: never a factor added or gone while the sessions it should have ended live on and nobody is
 * told. The app runs in-process (as both hosts build it) over a database whose batch can be made to fail;
 * the clients act as a browser (cookie session) and an administrator's script (Basic) do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { auditOutbox, mfaRecoveryCodes, mfaTotp, sessions, users } from '../../schema/index.js';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { nodeStaticFiles } from '../../worker/node/static-files.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { assembleService } from '../../worker/src/service.js';
import { bootstrapAdmin } from '../../worker/src/users/bootstrap.js';
import { Browser } from '../harness/browser.js';
import { enrolTotp, totpCode } from '../harness/totp.js';

const ADMIN = { login: 'admin', password: 'Chang3@me' };
const ORIGIN = 'http://127.0.0.1';
const BASE = `${ORIGIN}/api/auth`;
const cleanups: (() => Promise<void> | void)[] = [];
vi.setConfig({ testTimeout: 60_000 });
afterEach(async () => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * The app over a fresh database; `failing(true)` makes every batch that writes an `mfa.factor_removed`
 * event fail before it commits anything (as a database that went away mid-request).
 */
async function service() {
  const dir = mkdtempSync(join(tmpdir(), 'auth-factor-removal-'));
  const config = parseEnvironment({
    LIBSQL_URL: `file:${join(dir, 'auth.db')}`,
    AUTH_BOOTSTRAP_ADMIN_LOGIN: ADMIN.login,
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    AUTH_LOG_LEVEL: 'CRITICAL',
    AUTH_ACCESS_LOG_LEVEL: 'CRITICAL',
    // The TOTP secret is stored sealed with a key derived from it.
    SESSION_SECRET_KEY: 'factor-removal-test-session-key-0123456789',
  });
  const database = openDatabase(config);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => database.close());
  const db = database.db;
  await migrateDatabase(db, config.get('DB_SCHEMA'));
  const hasher = createNodeNativeHasher();
  expect(await bootstrapAdmin(db, config, hasher, Date.now())).toBe('created');
  const { app } = assembleService({
    env: config,
    openDb: () => db,
    hasher,
    hostName: 'test-host',
    staticFiles: nodeStaticFiles('static'),
    writeLog: () => {},
    settingsTtlMs: 0,
  });
  // The test clients' requests go to the app in-process.
  vi.stubGlobal('fetch', (input: string | URL | Request, init?: RequestInit) => app.request(input, init));
  let fail: string | false = false;
  const client = db.$client;
  const batch = client.batch.bind(client);
  vi.spyOn(client, 'batch').mockImplementation(((stmts: Parameters<typeof batch>[0], mode?: 'write') => {
    if (fail && JSON.stringify(stmts).includes(fail))
      return Promise.reject(new Error('injected: the database went away'));
    return batch(stmts, mode);
  }) as typeof client.batch);
  const basic = `Basic ${btoa(`${ADMIN.login}:${ADMIN.password}`)}`;
  return {
    db,
    /** Makes the batches that write an event of `type` fail (false: none). */
    failing: (type: 'mfa.factor_added' | 'mfa.factor_removed' | false) => (fail = type),
    asAdmin: (path: string, init: RequestInit = {}) =>
      fetch(`${BASE}${path}`, { ...init, headers: { Authorization: basic, ...init.headers } }),
    /** A live session row of `userId` (another device of the user), its id. */
    async otherSession(userId: string): Promise<string> {
      const now = Date.now();
      const id = crypto.randomUUID();
      await db.insert(sessions).values({
        id,
        userId,
        kind: 'cookie',
        createdAt: now,
        lastSeenAt: now,
        expiresAt: now + 3_600_000,
        authMethod: 'local_password',
        authenticatedAt: now,
      });
      return id;
    },
    async sessionEnd(id: string) {
      const [row] = await db.select().from(sessions).where(eq(sessions.id, id));
      return { revokedAt: row!.revokedAt, revokedReason: row!.revokedReason };
    },
    events: (type = 'mfa.factor_removed') => db.select().from(auditOutbox).where(eq(auditOutbox.type, type)),
  };
}

describe('a change of second factors is one transaction', () => {
  it('POST /v4/users/me/totp/confirm: a failed write leaves it unconfirmed; retried, it confirms', async () => {
    const s = await service();
    const b = new Browser(ORIGIN);
    expect((await b.postJson(`${BASE}/v3/login`, { login: ADMIN.login, password: ADMIN.password })).status).toBe(200);
    const [admin] = await s.db.select().from(users).where(eq(users.loginKey, ADMIN.login));
    const started = await b.fetch(`${BASE}/v4/users/me/totp`, { method: 'POST' });
    expect(started.status).toBe(201);
    const { otpauthUri } = (await started.json()) as { otpauthUri: string };
    const secret = new URL(otpauthUri).searchParams.get('secret')!;
    const other = await s.otherSession(admin!.id);
    const unconfirmed = async () => (await s.db.select().from(mfaTotp).where(eq(mfaTotp.userId, admin!.id)))[0];

    s.failing('mfa.factor_added');
    const failed = await b.postJson(`${BASE}/v4/users/me/totp/confirm`, { code: totpCode(secret, Date.now()) });
    expect(failed.status).toBe(500);
    // Nothing of the change happened: the factor is not confirmed, the other session lives, no event.
    expect((await unconfirmed())!.confirmedAt).toBeNull();
    expect(await s.sessionEnd(other)).toEqual({ revokedAt: null, revokedReason: null });
    expect(await s.events('mfa.factor_added')).toHaveLength(0);

    s.failing(false);
    const confirmed = await b.postJson(`${BASE}/v4/users/me/totp/confirm`, { code: totpCode(secret, Date.now()) });
    expect(confirmed.status).toBe(204);
    expect((await unconfirmed())!.confirmedAt).not.toBeNull();
    expect((await s.sessionEnd(other)).revokedReason).toBe('second_factor');
    expect(await s.events('mfa.factor_added')).toHaveLength(1);
  });

  it('DELETE /v4/users/me/totp: a failed write changes nothing; retried, it does all', async () => {
    const s = await service();
    const b = new Browser(ORIGIN);
    expect((await b.postJson(`${BASE}/v3/login`, { login: ADMIN.login, password: ADMIN.password })).status).toBe(200);
    await enrolTotp(b, BASE);
    const [admin] = await s.db.select().from(users).where(eq(users.loginKey, ADMIN.login));
    const other = await s.otherSession(admin!.id);

    s.failing('mfa.factor_removed');
    const failed = await b.fetch(`${BASE}/v4/users/me/totp`, { method: 'DELETE' });
    expect(failed.status).toBe(500);
    // Nothing of the change happened: the factor is there, the other session lives, no event.
    const totp = await s.db.select().from(mfaTotp).where(eq(mfaTotp.userId, admin!.id));
    expect(totp).toHaveLength(1);
    expect(totp[0]!.confirmedAt).not.toBeNull();
    expect(await s.sessionEnd(other)).toEqual({ revokedAt: null, revokedReason: null });
    expect(await s.events()).toHaveLength(0);

    s.failing(false);
    expect((await b.fetch(`${BASE}/v4/users/me/totp`, { method: 'DELETE' })).status).toBe(204);
    expect(await s.db.select().from(mfaTotp).where(eq(mfaTotp.userId, admin!.id))).toHaveLength(0);
    expect((await s.sessionEnd(other)).revokedReason).toBe('second_factor');
    expect(await s.events()).toHaveLength(1);
    // Nothing left to remove: 404, and nothing more is written.
    expect((await b.fetch(`${BASE}/v4/users/me/totp`, { method: 'DELETE' })).status).toBe(404);
    expect(await s.events()).toHaveLength(1);
  });

  it("an administrator's DELETE /v4/users/{id}/second-factors: a failed write changes nothing", async () => {
    const s = await service();
    const created = await s.asAdmin('/v4/users', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login: 'lost-phone', password: 'Str0ng$pass' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const now = Date.now();
    await s.db.insert(mfaTotp).values({ userId: id, secretEnc: 'v1.x.y', createdAt: now, confirmedAt: now });
    await s.db.insert(mfaRecoveryCodes).values({ id: crypto.randomUUID(), userId: id, codeHash: 'h', createdAt: now });
    const session = await s.otherSession(id);

    s.failing('mfa.factor_removed');
    expect((await s.asAdmin(`/v4/users/${id}/second-factors`, { method: 'DELETE' })).status).toBe(500);
    expect(await s.db.select().from(mfaTotp).where(eq(mfaTotp.userId, id))).toHaveLength(1);
    expect(await s.db.select().from(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, id))).toHaveLength(1);
    expect(await s.sessionEnd(session)).toEqual({ revokedAt: null, revokedReason: null });
    expect(await s.events()).toHaveLength(0);

    s.failing(false);
    expect((await s.asAdmin(`/v4/users/${id}/second-factors`, { method: 'DELETE' })).status).toBe(204);
    expect(await s.db.select().from(mfaTotp).where(eq(mfaTotp.userId, id))).toHaveLength(0);
    expect(await s.db.select().from(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, id))).toHaveLength(0);
    expect((await s.sessionEnd(session)).revokedReason).toBe('admin');
    const events = await s.events();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ stream: 'crud_admin', actorLogin: ADMIN.login, subjectId: id });
    // Nothing left to remove: 204, and no session ends, no event.
    const later = await s.otherSession(id);
    expect((await s.asAdmin(`/v4/users/${id}/second-factors`, { method: 'DELETE' })).status).toBe(204);
    expect(await s.sessionEnd(later)).toEqual({ revokedAt: null, revokedReason: null });
    expect(await s.events()).toHaveLength(1);
  });
});

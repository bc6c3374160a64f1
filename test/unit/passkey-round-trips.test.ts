/**
 * The round trips to the database of a passkey sign-in (docs/security-passkeys.md, "Sign-in"): four
 * before the answer. Each libSQL call of the app (a statement or a batch) is one round trip to a far
 * database (docs/performance.md, "A far database"). The app runs in-process over a database file whose
 * calls are counted, and a software authenticator (test/harness/soft-authenticator.ts) answers the
 * ceremonies as a browser's would; a real browser and authenticator are test/http/passkeys-browser.test.ts
 * (Chromium's virtual authenticator, both hosts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { openDatabase } from '../../worker/node/host.js';
import { migrateDatabase } from '../../worker/node/migrate.js';
import { nodeStaticFiles } from '../../worker/node/static-files.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { assembleService } from '../../worker/src/service.js';
import { bootstrapAdmin } from '../../worker/src/users/bootstrap.js';
import { Browser } from '../harness/browser.js';
import { softAuthenticator } from '../harness/soft-authenticator.js';

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

/** The app over a fresh database; `calls()` lists the SQL of each libSQL call of the last request. */
async function service() {
  const dir = mkdtempSync(join(tmpdir(), 'auth-passkey-trips-'));
  const config = parseEnvironment({
    LIBSQL_URL: `file:${join(dir, 'auth.db')}`,
    AUTH_BOOTSTRAP_ADMIN_LOGIN: ADMIN.login,
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    AUTH_LOG_LEVEL: 'CRITICAL',
    AUTH_ACCESS_LOG_LEVEL: 'CRITICAL',
    SESSION_SECRET_KEY: 'passkey-round-trips-test-session-key-0123456789',
  });
  const database = openDatabase(config);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => database.close());
  await migrateDatabase(database.db, config.get('DB_SCHEMA'));
  const hasher = createNodeNativeHasher();
  expect(await bootstrapAdmin(database.db, config, hasher, Date.now())).toBe('created');
  const { app } = assembleService({
    env: config,
    openDb: () => database.db,
    openLazyDb: database.lazyDb,
    hasher,
    hostName: 'test-host',
    staticFiles: nodeStaticFiles('static'),
    writeLog: () => {},
  });
  let seen: string[] = [];
  // The calls made before the app answered: work it leaves for after its answer is not counted.
  let beforeAnswer: string[] = [];
  vi.stubGlobal('fetch', async (input: string | URL | Request, init?: RequestInit) => {
    seen = [];
    const res = await app.request(input, init);
    beforeAnswer = seen;
    return res;
  });
  for (const client of [database.db.$client, database.lazyDb().$client]) {
    for (const method of ['execute', 'batch'] as const) {
      const real = client[method].bind(client) as (...args: unknown[]) => unknown;
      vi.spyOn(client, method).mockImplementation(((...args: unknown[]) => {
        seen.push(JSON.stringify(args[0]).slice(0, 120));
        return real(...args);
      }) as never);
    }
  }
  return {
    /** The SQL of each libSQL call the last request made before its answer. */
    calls: () => beforeAnswer,
  };
}

describe('a passkey sign-in', () => {
  it('makes four round trips to the database before its answer', async () => {
    const s = await service();
    const owner = new Browser(ORIGIN);
    expect((await owner.postJson(`${BASE}/v3/login`, ADMIN)).status).toBe(200);
    const options = await owner.postJson(`${BASE}/v4/users/me/passkeys/registration-options`, {});
    expect(options.status).toBe(200);
    const creation = (await options.json()) as { challenge: string; rp: { id: string }; user: { id: string } };
    const key = await softAuthenticator(creation.rp.id);
    const registered = await owner.postJson(`${BASE}/v4/users/me/passkeys`, {
      name: 'software key',
      response: key.create(creation.challenge, ORIGIN),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);

    // Another browser, without the owner's cookies: a passwordless sign-in, as on a new device.
    const other = new Browser(ORIGIN);
    const signInOptions = await other.postJson(`${BASE}/v3/login/passkey/options`, {});
    expect(signInOptions.status).toBe(200);
    const { challenge } = (await signInOptions.json()) as { challenge: string };
    const response = await key.get(challenge, creation.user.id, ORIGIN);
    const signedIn = await other.postJson(`${BASE}/v3/login/passkey`, { response });
    const calls = s.calls();
    expect(signedIn.status, await signedIn.clone().text()).toBe(200);
    expect(await other.cookie(`${BASE}/`, 'auth_session')).toBeTruthy();
    // Read, reserve with the challenge used up, the counter recorded, the session: each one call.
    expect(calls, calls.join('\n')).toHaveLength(4);

    // The same response again: its challenge was used up in the reservation's batch.
    const replayed = await other.postJson(`${BASE}/v3/login/passkey`, { response });
    expect(replayed.status).toBe(401);
  });
});

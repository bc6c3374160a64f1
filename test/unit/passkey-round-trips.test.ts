/**
 * The round trips to the database of a passkey sign-in (docs/security-passkeys.md, "Sign-in"): four
 * before the answer. Each libSQL call of the app (a statement or a batch) is one round trip to a far
 * database (docs/performance.md, "A far database"). The app runs in-process over a database file whose
 * calls are counted, and a software authenticator (test/harness/soft-authenticator.ts) answers the
 * ceremonies as a browser's would; a real browser and authenticator are test/http/passkeys-browser.test.ts
 * (Chromium's virtual authenticator, both hosts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestApp } from '../harness/app.js';
import { Browser } from '../harness/browser.js';
import { BASE_TEST_ENV } from '../harness/hosts.js';
import { softAuthenticator } from '../harness/soft-authenticator.js';

const ADMIN = {
  login: BASE_TEST_ENV.AUTH_BOOTSTRAP_ADMIN_LOGIN!,
  password: BASE_TEST_ENV.AUTH_BOOTSTRAP_ADMIN_PASSWORD!,
};
const ORIGIN = 'http://127.0.0.1';
const BASE = `${ORIGIN}/api/auth`;
const cleanups: (() => void)[] = [];
vi.setConfig({ testTimeout: 60_000 });
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0)) c();
});

/** The app over a fresh database; `calls()` lists the SQL of each libSQL call of the last request. */
async function service() {
  // The saved settings read once and kept for the test (the hosts keep them 2 s and refresh them after
  // an answer): the sign-in's own round trips are counted, not a refresh a slow machine made it wait for.
  const t = await createTestApp({}, { settingsTtlMs: 60_000 });
  cleanups.push(() => t.close());
  let seen: string[] = [];
  // The calls made before the app answered: work it leaves for after its answer is not counted.
  let beforeAnswer: string[] = [];
  vi.stubGlobal('fetch', async (input: string | URL | Request, init?: RequestInit) => {
    seen = [];
    const res = await t.app.request(input, init);
    beforeAnswer = seen;
    return res;
  });
  const client = t.db.$client;
  for (const method of ['execute', 'batch'] as const) {
    const real = client[method].bind(client) as (...args: unknown[]) => unknown;
    vi.spyOn(client, method).mockImplementation(((...args: unknown[]) => {
      seen.push(JSON.stringify(args[0]).slice(0, 120));
      return real(...args);
    }) as never);
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

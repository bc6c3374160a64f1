/**
 * Passkeys (docs/security-passkeys.md) in headless Chromium with the DevTools protocol's virtual
 * authenticator (a platform authenticator with resident keys and user verification), on each host:
 * registered in the console, signed in with after signing out, listed, renamed and removed; another
 * account cannot use or claim the credential; refused assertions count as failed logins; the API's
 * refusals are problem+json. The pages are opened at http://localhost:PORT (a WebAuthn relying-party
 * id is a domain, never an IP address); the relying party is derived from that origin (the default).
 */
import { decodeAttestationObject, isoBase64URL } from '@simplewebauthn/server/helpers';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser as CookieBrowser } from '../harness/browser.js';
import { baseUrl, basic, call, createUser, uniqueLogin } from '../harness/client.js';
import {
  checkPage,
  launchChromium,
  messageOf,
  newTab,
  openPage,
  signIn,
  waitReady,
  type ConsoleTab,
} from '../harness/console.js';

const kind = inject('hostKind');
const PASSWORD = 'Str0ng$pass';
let browser: Browser;

/** The shared host as the browser reaches it by name (127.0.0.1 cannot be a relying-party id). */
const base = () => baseUrl().replace('://127.0.0.1:', '://localhost:');
const ui = (path = '') => `${base()}/ui/${path}`;
/** ROOT_PATH, for the pages' own fetches. */
const root = () => new URL(base()).pathname.replace(/\/$/, '');

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A console tab with a virtual platform authenticator (CTAP2, internal, resident keys, UV). */
async function tabWithAuthenticator(): Promise<ConsoleTab & { cdp: CDPSession; authenticatorId: string }> {
  const tab = await newTab(browser);
  const cdp = await tab.context.newCDPSession(tab.page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { ...tab, cdp, authenticatorId };
}

/** Registers a passkey named `name` on the passkeys page; returns the registration the page posted. */
async function registerInConsole(page: Page, name: string): Promise<Record<string, unknown>> {
  await openPage({ page } as ConsoleTab, ui('passkeys'));
  await page.fill('#passkey-name', name);
  const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/v4/users/me/passkeys'));
  await page.click('#passkey-form button[type=submit]');
  const registration = JSON.parse((await posted).postData() ?? '{}') as Record<string, unknown>;
  expect(await messageOf(page, '#passkey-message')).toContain(name);
  await page.waitForSelector(`#passkeys-region td:text-is("${name}")`);
  return registration;
}

/** Signs out through the header's button and waits for the sign-in page. */
async function signOut(page: Page): Promise<void> {
  await Promise.all([page.waitForURL(/\/ui\/login/), page.click('#console-signout')]);
  await waitReady(page);
}

/** Clicks "Sign in with a passkey" and waits to leave the sign-in page. */
async function signInWithPasskey(page: Page): Promise<void> {
  await Promise.all([
    page.waitForURL((u) => !u.pathname.endsWith('/ui/login'), { timeout: 20_000 }),
    page.click('#signin-passkey'),
  ]);
  await waitReady(page);
}

/** A passwordless assertion made in the page (options from the service, the authenticator's answer), not sent. */
async function assertionInPage(page: Page): Promise<Record<string, unknown>> {
  return page.evaluate(async (root) => {
    const res = await fetch(`${root}/v3/login/passkey/options`, { method: 'POST' });
    const options = (await res.json()) as PublicKeyCredentialRequestOptionsJSON;
    const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options);
    const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential;
    return credential.toJSON() as Record<string, unknown>;
  }, root());
}

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/** The passkeys of an account without a factor yet, as its owner's Basic credentials list them. */
async function passkeysOf(login: string): Promise<Array<{ id: string; name: string }>> {
  const res = await call('/v4/users/me/passkeys', { auth: basic(login, PASSWORD) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: Array<{ id: string; name: string }> }).items;
}

/** The passkeys of the account signed in in `page` (an account with a passkey: Basic is refused). */
async function ownPasskeys(page: Page): Promise<Array<{ id: string; name: string }>> {
  return page.evaluate(async (r) => {
    const res = await fetch(`${r}/v4/users/me/passkeys`);
    return ((await res.json()) as { items: Array<{ id: string; name: string }> }).items;
  }, root());
}

/**
 * The authenticator's assertion for the passkey second step of the pending login `pendingToken`
 * (made in the page, not sent): the options from the service, then navigator.credentials.get.
 */
async function secondStepAssertionInPage(page: Page, pendingToken: string): Promise<Record<string, unknown>> {
  return page.evaluate(
    async ({ root, pendingToken }) => {
      const res = await fetch(`${root}/v3/login/second-factor/passkey/options`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ pendingToken }),
      });
      if (res.status !== 200) throw new Error(`options: ${res.status} ${await res.text()}`);
      const options = (await res.json()) as PublicKeyCredentialRequestOptionsJSON;
      const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options);
      const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential;
      return credential.toJSON() as Record<string, unknown>;
    },
    { root: root(), pendingToken },
  );
}

/** A password login of an account with a passkey: its 401 SECOND_FACTOR_REQUIRED body. */
async function passwordStep(b: CookieBrowser, login: string): Promise<{ pendingToken: string; factors: string[] }> {
  const res = await b.postJson(`${base()}/v3/login`, { login, password: PASSWORD });
  expect(res.status).toBe(401);
  const body = (await res.json()) as { code: string; pendingToken: string; factors: string[]; passkeyOptions: string };
  expect(body.code).toBe('SECOND_FACTOR_REQUIRED');
  expect(body.factors).toContain('passkey');
  expect(body.passkeyOptions).toBe(`${root()}/v3/login/second-factor/passkey/options`);
  return body;
}

describe('passkeys in the console', () => {
  it('register a passkey, sign out, sign in with it; the other sessions ended; rename and remove it', async () => {
    const login = uniqueLogin('pk');
    await createUser(login, PASSWORD, { displayName: 'Passkey Person', sessionLimit: 5 });
    const tab = await tabWithAuthenticator();
    await signIn(tab, base(), login, PASSWORD);
    // Another session of the account, elsewhere (within its limit of 5): adding a passkey ends it.
    const other = new CookieBrowser(new URL(baseUrl()).origin);
    expect((await other.postJson(`${baseUrl()}/v3/login`, { login, password: PASSWORD })).status).toBe(200);
    expect((await other.fetch(`${baseUrl()}/v4/users/me`)).status).toBe(200);
    await registerInConsole(tab.page, 'Laptop');
    await checkPage(tab, kind, 'passkeys');
    expect((await other.fetch(`${baseUrl()}/v4/users/me`)).status).toBe(401);
    // The session that added it stays.
    expect(await tab.page.evaluate(async (r) => (await fetch(`${r}/v4/users/me`)).status, root())).toBe(200);

    await signOut(tab.page);
    await signInWithPasskey(tab.page);
    expect(await tab.page.textContent('#console-user')).toBe('Passkey Person');
    const sessions = await tab.page.evaluate(async (root) => {
      const res = await fetch(`${root}/v4/users/me/sessions`);
      return ((await res.json()) as { items: Array<{ authMethod: string; current: boolean }> }).items;
    }, root());
    expect(sessions.find((s) => s.current)?.authMethod).toBe('passkey');
    const [passkey] = await ownPasskeys(tab.page);
    expect(passkey?.name).toBe('Laptop');

    // Rename it in the console.
    await openPage(tab, ui('passkeys'));
    await tab.page.click('#passkeys-region button:text-is("Rename")');
    await tab.page.fill('#passkey-rename-name', 'Work laptop');
    await tab.page.click('#passkey-rename-form button[type=submit]');
    await tab.page.waitForSelector('#passkeys-region td:text-is("Work laptop")');
    expect((await ownPasskeys(tab.page)).map((p) => p.name)).toEqual(['Work laptop']);

    // Remove it: the other sessions end again, and it no longer signs in (the browser's
    // authenticator still holds the key).
    // (Another session: the password, then the passkey as its second step.)
    const again = new CookieBrowser(new URL(base()).origin);
    const { pendingToken } = await passwordStep(again, login);
    const response = await secondStepAssertionInPage(tab.page, pendingToken);
    const opened = await again.postJson(`${base()}/v3/login/second-factor/passkey`, { pendingToken, response });
    expect(opened.status).toBe(200);
    await tab.page.click('#passkeys-region button:text-is("Remove")');
    await tab.page.waitForSelector('#passkeys-region p:text-is("No passkeys.")');
    expect(await passkeysOf(login)).toEqual([]);
    expect((await again.fetch(`${base()}/v4/users/me`)).status).toBe(401);
    expect(await tab.page.evaluate(async (r) => (await fetch(`${r}/v4/users/me`)).status, root())).toBe(200);
    await signOut(tab.page);
    await tab.page.click('#signin-passkey');
    expect(await messageOf(tab.page, '#signin-message')).toContain('The passkey was not accepted.');
    expect(tab.page.url()).toContain('/ui/login');
    await checkPage(tab, kind, 'signin-passkey-refused');
    await tab.context.close();
  }, 120_000);
});

describe('a passkey as the second step after a password', () => {
  it('in the console: the password, then "Use a passkey instead" signs in', async () => {
    const login = uniqueLogin('pk2c');
    await createUser(login, PASSWORD, { displayName: 'Second Step Person' });
    const tab = await tabWithAuthenticator();
    await signIn(tab, base(), login, PASSWORD);
    await registerInConsole(tab.page, 'Phone');
    await signOut(tab.page);

    // The password: the second step replaces the form and offers the passkey.
    await tab.page.fill('#signin-login', login);
    await tab.page.fill('#signin-password', PASSWORD);
    await tab.page.click('#signin-form button[type=submit]');
    await tab.page.waitForSelector('#second-passkey');
    await checkPage(tab, kind, 'signin-second-step-passkey');
    await Promise.all([
      tab.page.waitForURL((u) => !u.pathname.endsWith('/ui/login'), { timeout: 20_000 }),
      tab.page.click('#second-passkey'),
    ]);
    await waitReady(tab.page);
    expect(await tab.page.textContent('#console-user')).toBe('Second Step Person');
    const current = await tab.page.evaluate(async (root) => {
      const res = await fetch(`${root}/v4/users/me/sessions`);
      return ((await res.json()) as { items: Array<{ current: boolean }> }).items.filter((x) => x.current).length;
    }, root());
    expect(current).toBe(1);
    await tab.context.close();
  }, 120_000);

  it('the password asks for it; its assertion opens the session; refusals count like wrong codes', async () => {
    const login = uniqueLogin('pk2');
    await createUser(login, PASSWORD, { sessionLimit: 5 });
    const tab = await tabWithAuthenticator();
    await signIn(tab, base(), login, PASSWORD);
    await registerInConsole(tab.page, 'Key');

    // The password alone opens nothing now: 401 naming the passkey, with a pending login.
    const client = new CookieBrowser(new URL(base()).origin);
    const first = await passwordStep(client, login);
    expect((await client.fetch(`${base()}/v4/users/me`)).status).toBe(401);
    const response = await secondStepAssertionInPage(tab.page, first.pendingToken);
    // The pending login from its cookie (no token in the body), as a browser sends it.
    const done = await client.postJson(`${base()}/v3/login/second-factor/passkey`, { response });
    expect(done.status).toBe(200);
    expect(((await done.json()) as { user: { login: string } }).user.login).toBe(login);
    const me = await client.fetch(`${base()}/v4/users/me/sessions`);
    const items = ((await me.json()) as { items: Array<{ current: boolean; authMethod: string }> }).items;
    expect(items.find((s) => s.current)?.authMethod).toBe('local_password');
    // The completed pending login opens nothing again, and the assertion is used.
    const replay = await call('/v3/login/second-factor/passkey', {
      base: base(),
      method: 'POST',
      json: { pendingToken: first.pendingToken, response },
    });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { code: string }).code).toBe('UNAUTHENTICATED');

    // An assertion made for one pending login does not complete another (the challenge is bound):
    // refused, and counted like a wrong code, until the login is restricted (AUTH_FAILED_COUNT, 3).
    const otherClient = new CookieBrowser(new URL(base()).origin);
    const a = await passwordStep(otherClient, login);
    const b = await passwordStep(otherClient, login);
    const forA = await secondStepAssertionInPage(tab.page, a.pendingToken);
    const codes: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call('/v3/login/second-factor/passkey', {
        base: base(),
        method: 'POST',
        json: { pendingToken: b.pendingToken, response: forA },
      });
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      codes.push(((await res.json()) as { code: string }).code);
    }
    expect(codes).toEqual(['INVALID_CREDENTIALS', 'INVALID_CREDENTIALS', 'INVALID_CREDENTIALS', 'ACCOUNT_LOCKED']);
    const password = await call('/v3/login', { base: base(), method: 'POST', json: { login, password: PASSWORD } });
    expect(((await password.json()) as { code: string }).code).toBe('ACCOUNT_LOCKED');

    // Bad input: no pending login (401), a malformed assertion (422); both problem+json.
    const noPending = await call('/v3/login/second-factor/passkey/options', { base: base(), method: 'POST' });
    expect(noPending.status).toBe(401);
    expect(noPending.headers.get('content-type')).toContain('application/problem+json');
    const malformed = await call('/v3/login/second-factor/passkey', {
      base: base(),
      method: 'POST',
      json: { pendingToken: b.pendingToken, response: { id: 'x' } },
    });
    expect(malformed.status).toBe(422);
    expect(malformed.headers.get('content-type')).toContain('application/problem+json');
    await tab.context.close();
  });
});

describe('passkeys: one account’s credential is never another’s', () => {
  it('another account can neither sign in with it (a forged user handle) nor register it', async () => {
    const owner = uniqueLogin('pka');
    const otherLogin = uniqueLogin('pkb');
    await createUser(owner, PASSWORD);
    const otherId = await createUser(otherLogin, PASSWORD);
    const tab = await tabWithAuthenticator();
    await signIn(tab, base(), owner, PASSWORD);
    const registration = await registerInConsole(tab.page, 'Owner key');

    // The other account replays the owner's registration: the challenge was the owner's (and is used).
    const intruder = new CookieBrowser(new URL(base()).origin);
    expect((await intruder.postJson(`${base()}/v3/login`, { login: otherLogin, password: PASSWORD })).status).toBe(200);
    const claimed = await intruder.postJson(`${base()}/v4/users/me/passkeys`, registration);
    expect(claimed.status).toBe(400);
    expect(claimed.headers.get('content-type')).toContain('application/problem+json');
    expect(await passkeysOf(otherLogin)).toEqual([]);

    // The owner's assertion with the other account's user handle: refused, nobody signed in.
    await signOut(tab.page);
    const assertion = await assertionInPage(tab.page);
    const forged = {
      ...assertion,
      response: { ...(assertion.response as object), userHandle: b64url(otherId) },
    };
    const res = await call('/v3/login/passkey', { base: base(), method: 'POST', json: { response: forged } });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { code: string }).code).toBe('INVALID_CREDENTIALS');
    expect(res.headers.getSetCookie().some((c) => /auth_session=[^;]/.test(c))).toBe(false);
    // The same assertion as made (its challenge is used now): refused too.
    const replay = await call('/v3/login/passkey', { base: base(), method: 'POST', json: { response: assertion } });
    expect(replay.status).toBe(401);
    await tab.context.close();
  });
});

describe('passkeys: refused assertions count as failed logins', () => {
  it('a counter that does not grow (a cloned authenticator) is refused; failures lock the login', async () => {
    const login = uniqueLogin('pkc');
    await createUser(login, PASSWORD);
    const tab = await tabWithAuthenticator();
    await signIn(tab, base(), login, PASSWORD);
    await registerInConsole(tab.page, 'Phone');
    await signOut(tab.page);
    await signInWithPasskey(tab.page);
    await signOut(tab.page);
    await signInWithPasskey(tab.page);
    await signOut(tab.page);

    // A clone of the key with an older signature counter: its assertion is refused.
    const { credentials } = await tab.cdp.send('WebAuthn.getCredentials', { authenticatorId: tab.authenticatorId });
    expect(credentials).toHaveLength(1);
    const clone = await tabWithAuthenticator();
    await clone.cdp.send('WebAuthn.addCredential', {
      authenticatorId: clone.authenticatorId,
      credential: { ...credentials[0]!, signCount: 0 },
    });
    await openPage(clone, ui('login'));
    await clone.page.click('#signin-passkey');
    expect(await messageOf(clone.page, '#signin-message')).toContain('The passkey was not accepted.');
    await clone.context.close();

    // An assertion used once (it signs in), then replayed from a client without the device cookie:
    // each replay counts, until the login is restricted (AUTH_FAILED_COUNT, 3) and even a right
    // password is not checked.
    const assertion = await assertionInPage(tab.page);
    const first = await call('/v3/login/passkey', { base: base(), method: 'POST', json: { response: assertion } });
    expect(first.status).toBe(200);
    const codes: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call('/v3/login/passkey', { base: base(), method: 'POST', json: { response: assertion } });
      codes.push(((await res.json()) as { code: string }).code);
    }
    expect(codes).toEqual(['INVALID_CREDENTIALS', 'INVALID_CREDENTIALS', 'INVALID_CREDENTIALS', 'ACCOUNT_LOCKED']);
    const password = await call('/v3/login', { base: base(), method: 'POST', json: { login, password: PASSWORD } });
    expect(((await password.json()) as { code: string }).code).toBe('ACCOUNT_LOCKED');
    await tab.context.close();
  });
});

describe('passkeys: the API refuses bad input with problems', () => {
  it('malformed sign-ins, unknown passkeys and other credentials are problem+json', async () => {
    const login = uniqueLogin('pkd');
    await createUser(login, PASSWORD);
    const problem = async (res: Response, status: number, code: string) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(((await res.json()) as { code: string }).code).toBe(code);
    };
    await problem(await call('/v3/login/passkey', { method: 'POST', json: {} }), 422, 'VALIDATION');
    const garbage = {
      response: {
        id: 'AAAA',
        rawId: 'AAAA',
        type: 'public-key',
        response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' },
        clientExtensionResults: {},
      },
    };
    await problem(await call('/v3/login/passkey', { method: 'POST', json: garbage }), 401, 'INVALID_CREDENTIALS');

    const b = new CookieBrowser(new URL(baseUrl()).origin);
    expect((await b.postJson(`${baseUrl()}/v3/login`, { login, password: PASSWORD })).status).toBe(200);
    const unknown = `${baseUrl()}/v4/users/me/passkeys/00000000-0000-4000-8000-000000000000`;
    await problem(await b.fetch(unknown, { method: 'DELETE' }), 404, 'NOT_FOUND');
    await problem(
      await b.fetch(unknown, {
        method: 'PATCH',
        body: JSON.stringify({ name: '' }),
        headers: { 'Content-Type': 'application/json' },
      }),
      422,
      'VALIDATION',
    );
    const bad = await b.postJson(`${baseUrl()}/v4/users/me/passkeys`, { name: 'x', response: garbage.response });
    await problem(bad, 422, 'VALIDATION');
    // Adding a passkey is for the session cookie only: Basic (or an API token) cannot.
    const basicOptions = await call('/v4/users/me/passkeys/registration-options', {
      method: 'POST',
      auth: basic(login, PASSWORD),
    });
    expect(basicOptions.status).toBe(401);
    expect(basicOptions.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('a registration whose browser passes an attestation statement on', () => {
  // The service asks for no attestation (docs/security-passkeys.md); a browser may still pass the
  // authenticator's statement on (the WebAuthn client MAY replace it with "none", need not). The service
  // ignores it on both hosts, as it would a "none": the edge build does not carry the statement verifiers.
  it('is registered and signs in, the statement ignored', async () => {
    const login = uniqueLogin('pkatt');
    await createUser(login, PASSWORD, { displayName: 'Attested Person' });
    const tab = await tabWithAuthenticator();
    await signIn(tab, base(), login, PASSWORD);
    // The page's own ceremony, as a browser that keeps the statement answers it ("direct" stands in for
    // such a browser: Chromium replaces the statement with "none" when the options ask for none).
    const { status, body, response } = await tab.page.evaluate(async (root) => {
      const res = await fetch(`${root}/v4/users/me/passkeys/registration-options`, { method: 'POST' });
      const options = (await res.json()) as PublicKeyCredentialCreationOptionsJSON;
      const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON({ ...options, attestation: 'direct' });
      const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential;
      const response = credential.toJSON() as { response: { attestationObject: string } };
      const posted = await fetch(`${root}/v4/users/me/passkeys`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Attested key', response }),
      });
      return { status: posted.status, body: (await posted.json()) as Record<string, unknown>, response };
    }, root());
    const attestation = decodeAttestationObject(isoBase64URL.toBuffer(response.response.attestationObject));
    expect(attestation.get('fmt')).toBe('packed');
    expect(attestation.get('attStmt').get('x5c')?.length).toBeGreaterThan(0);
    expect(status, JSON.stringify(body)).toBe(201);
    expect(body.name).toBe('Attested key');
    expect((await ownPasskeys(tab.page)).map((p) => p.name)).toEqual(['Attested key']);

    await signOut(tab.page);
    await signInWithPasskey(tab.page);
    expect(await tab.page.textContent('#console-user')).toBe('Attested Person');
    await tab.context.close();
  }, 60_000);
});

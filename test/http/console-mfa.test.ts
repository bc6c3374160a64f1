/**
 * Second factors in the web console (docs/console.md, "Second factors"; docs/security-mfa.md) in
 * headless Chromium, on each host, driven only through the pages' forms (the browser sets Origin and
 * Sec-Fetch-* itself): an authenticator app enrolled on the security page with a code from Debian's
 * oathtool, recovery codes shown once; sign-in with the password and then a code, a recovery code
 * used once (its second use refused); the step-up dialog before a sensitive change; an administrator
 * removing the user's factors; a role that must use a second factor led to the security page. Every
 * page passes axe-core at 1280 and 360 px (checkPage).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ADMIN,
  MINUTE,
  baseUrl,
  basic,
  call,
  callJson,
  createUser,
  setClockOffset,
  uniqueLogin,
  withSettings,
} from '../harness/client.js';
import { checkPage, launchChromium, messageOf, newTab, openPage, signIn, waitReady } from '../harness/console.js';
import { totpCode } from '../harness/totp.js';

const kind = inject('hostKind');
const PASSWORD = 'Str0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);
let browser: Browser;
let offset = 0;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  offset = 0;
  await setClockOffset(0);
});

const ui = (path = '') => `${baseUrl()}/ui/${path}`;

/** The code of `secret` at the service's time plus `steps` periods, computed by oathtool. */
const totp = (secret: string, steps = 0) => totpCode(secret, Date.now() + offset, steps);

async function signOut(page: Page): Promise<void> {
  await Promise.all([page.waitForURL(/\/ui\/login/), page.click('#console-signout')]);
  await waitReady(page);
}

/** Types the password on the sign-in page; the page then asks for the second step. */
async function password(page: Page, login: string): Promise<void> {
  await page.goto(ui('login'), { waitUntil: 'domcontentloaded' });
  await waitReady(page);
  await page.fill('#signin-login', login);
  await page.fill('#signin-password', PASSWORD);
  await page.click('#signin-form button[type=submit]');
  await page.waitForSelector('#second-form', { timeout: 20_000 });
  expect(await page.isHidden('#signin-form')).toBe(true);
}

/** Sends a second-step code and waits to leave the sign-in page. */
async function secondStep(page: Page, code: string): Promise<void> {
  await page.fill('#second-code', code);
  await Promise.all([
    page.waitForURL((u) => !u.pathname.endsWith('/ui/login'), { timeout: 20_000 }),
    page.click('#second-form button[type=submit]'),
  ]);
  await waitReady(page);
}

/** Starts the authenticator app's enrolment on the security page; returns the key the page shows. */
async function startTotp(page: Page): Promise<string> {
  await page.click('#totp-start');
  await page.waitForSelector('#totp-enrol:not([hidden]) #totp-qr svg[role=img]');
  const secret = await page.inputValue('#totp-secret');
  expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
  return secret;
}

async function confirmTotp(page: Page, code: string): Promise<void> {
  await page.fill('#totp-code', code);
  await page.click('#totp-enrol button[type=submit]');
  expect(await messageOf(page, '#totp-message')).toContain('The authenticator app is set up');
  expect(await page.isHidden('#totp-enrol')).toBe(true);
  expect(await page.inputValue('#totp-secret')).toBe('');
}

/** The recovery codes the page shows after "Generate". */
async function shownCodes(page: Page): Promise<string[]> {
  await page.waitForSelector('#codes-shown:not([hidden]) #codes-list li');
  return page.$$eval('#codes-list li', (items) => items.map((li) => li.textContent ?? ''));
}

describe('console: second factors', () => {
  it('enrol an app with an oathtool code, recovery codes once, sign in with password + code, a recovery ' +
    'code works once, step-up asks for a code and retries, an administrator removes the factors', async () => {
    const login = uniqueLogin('cm');
    const id = await createUser(login, PASSWORD, { displayName: 'Factor Person' });
    const tab = await newTab(browser);
    const { page } = tab;
    await signIn(tab, baseUrl(), login, PASSWORD);

    // Enrol: the QR code and the key, once; confirmed with a code computed by oathtool.
    await openPage(tab, ui('security'));
    expect(await page.textContent('#totp-state')).toContain('No authenticator app');
    expect(await page.textContent('#codes-state')).toContain('Set up an authenticator app first');
    const secret = await startTotp(page);
    await checkPage(tab, kind, 'security-enrol');
    await confirmTotp(page, totp(secret));
    expect(await page.textContent('#totp-state')).toContain('An authenticator app is set up');

    // Recovery codes: 10, shown once, with the count left.
    await page.click('#codes-generate');
    const codes = await shownCodes(page);
    expect(codes).toHaveLength(10);
    expect(await page.textContent('#codes-state')).toContain('Recovery codes left: 10.');
    expect(await page.getAttribute('#codes-download', 'href')).toMatch(/^blob:/);
    await checkPage(tab, kind, 'security');
    await openPage(tab, ui('security'));
    expect(await page.isHidden('#codes-shown')).toBe(true);
    expect(await page.$$eval('#codes-list li', (l) => l.length)).toBe(0);

    // Sign out; the password alone opens no session: the page asks for the code.
    await signOut(page);
    await password(page, login);
    await checkPage(tab, kind, 'signin-second-step');
    await secondStep(page, totp(secret, 1));
    expect(await page.textContent('#console-user')).toBe('Factor Person');

    // A recovery code instead of the app's code, once.
    await signOut(page);
    await password(page, login);
    await secondStep(page, codes[0]!);
    await openPage(tab, ui('security'));
    expect(await page.textContent('#codes-state')).toContain('Recovery codes left: 9.');
    await signOut(page);
    await password(page, login);
    await page.fill('#second-code', codes[0]!);
    await page.click('#second-form button[type=submit]');
    expect(await messageOf(page, '#second-message')).toContain('The code was not accepted.');
    expect(new URL(page.url()).pathname).toMatch(/\/ui\/login$/);
    await secondStep(page, codes[1]!);

    // Step-up: 20 minutes later a new set of codes needs a fresh code; the dialog asks, then it is done.
    offset = 20 * MINUTE;
    await setClockOffset(offset);
    await openPage(tab, ui('security'));
    await page.click('#codes-generate');
    await page.waitForSelector('#stepup-dialog[open] #stepup-code');
    await checkPage(tab, kind, 'security-step-up');
    await page.fill('#stepup-code', '000000');
    await page.click('#stepup-form button[type=submit]');
    expect(await messageOf(page, '#stepup-message')).toContain('The code was not accepted.');
    await page.fill('#stepup-code', totp(secret));
    await page.click('#stepup-form button[type=submit]');
    const renewed = await shownCodes(page);
    expect(renewed).toHaveLength(10);
    expect(renewed).not.toContain(codes[2]);
    expect(await page.isVisible('#stepup-dialog')).toBe(false);

    // An administrator sees the factor (no secret) and removes it after confirming; the user's sessions end.
    const adminLogin = uniqueLogin('ca');
    await createUser(adminLogin, PASSWORD, { role: 'admin' });
    const adminTab = await newTab(browser);
    await signIn(adminTab, baseUrl(), adminLogin, PASSWORD);
    await openPage(adminTab, ui(`admin/user?id=${encodeURIComponent(id)}`));
    const ap = adminTab.page;
    await ap.waitForSelector('#user-factors table');
    expect(await ap.textContent('#user-factors')).toContain('authenticator app (TOTP)');
    expect(await ap.textContent('#user-factors')).toContain('Recovery codes left: 10.');
    expect(await ap.textContent('#user-factors')).not.toContain(secret);
    await ap.click('#user-factors-remove');
    expect(await ap.textContent('#user-factors-question')).toContain(login);
    await checkPage(adminTab, kind, 'admin-user-factors');
    await ap.click('#user-factors-yes');
    expect(await messageOf(ap, '#user-factors-message')).toContain('The second factors are removed.');
    expect(await ap.textContent('#user-factors')).toContain('No second factor.');
    expect(await ap.isHidden('#user-factors-remove')).toBe(true);
    const listed = await callJson<{ factors: unknown[] }>(`/v4/users/${id}/second-factors`, { auth: admin });
    expect(listed.body.factors).toEqual([]);
    expect(await page.evaluate(async (u) => (await fetch(u)).status, `${baseUrl()}/v4/users/me`)).toBe(401);
    const plain = await call('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
    expect(plain.status).toBe(200);
    await tab.context.close();
    await adminTab.context.close();
  }, 300_000); // Many pages, each checked by axe at two widths, on a machine shared with other suites.

  it('the code that just confirmed the app, typed again at sign-in: told as used, with the wait; the ' +
    'next opens', async () => {
    const login = uniqueLogin('cr');
    await createUser(login, PASSWORD);
    const tab = await newTab(browser);
    const { page } = tab;
    await signIn(tab, baseUrl(), login, PASSWORD);
    await openPage(tab, ui('security'));
    const secret = await startTotp(page);
    const enrolCode = totp(secret);
    await confirmTotp(page, enrolCode);
    // At once, as a person does: the app still shows the code that confirmed it.
    await signOut(page);
    await password(page, login);
    await page.fill('#second-code', enrolCode);
    await page.click('#second-form button[type=submit]');
    expect(await messageOf(page, '#second-message')).toMatch(
      /^This code was already used: wait for the next one \(\d+ s\)\.$/,
    );
    await secondStep(page, totp(secret, 1));
    expect(new URL(page.url()).pathname).not.toMatch(/\/ui\/login$/);
    await tab.context.close();
  }, 120_000);

  it('a role that must use a second factor lands on the security page, explained, until it enrols (ru ' +
    'too)', async () => {
    await withSettings({ MFA_REQUIRED_ROLES: 'auditor' }, async () => {
      const login = uniqueLogin('ce');
      await createUser(login, PASSWORD, { role: 'auditor' });
      const tab = await newTab(browser);
      const { page } = tab;
      await page.goto(ui('login'), { waitUntil: 'domcontentloaded' });
      await waitReady(page);
      await page.fill('#signin-login', login);
      await page.fill('#signin-password', PASSWORD);
      // The page's own readiness (waitReady) is what counts, not its "load" event: under a loaded machine
      // the edge host's static files can hold that past the wait, as they did once in CI.
      const atSecurity = () => page.waitForURL(/\/ui\/security$/, { waitUntil: 'domcontentloaded' });
      await Promise.all([atSecurity(), page.click('#signin-form button[type=submit]')]);
      await waitReady(page);
      await page.waitForSelector('#security-enrol:not([hidden])');
      expect(await page.textContent('#security-enrol')).toContain('Your role must use a second factor');
      // Any other page sends it back here.
      await page.goto(ui('tokens'), { waitUntil: 'domcontentloaded' });
      await atSecurity();
      await waitReady(page);
      await page.waitForSelector('#security-enrol:not([hidden])');
      await checkPage(tab, kind, 'security-enrol-required');

      const secret = await startTotp(page);
      await confirmTotp(page, totp(secret));
      await page.waitForSelector('#security-enrol[hidden]', { state: 'attached' });
      // The session passed the factor: the rest of the console opens.
      await openPage(tab, ui('tokens'));
      expect(new URL(page.url()).pathname).toMatch(/\/ui\/tokens$/);

      // Russian: the page's texts come from the one dictionary.
      await openPage(tab, ui('security?lang=ru'));
      expect(await page.textContent('h1')).toBe('Безопасность');
      expect(await page.textContent('#totp-state')).toContain('Приложение-аутентификатор настроено');
      await checkPage(tab, kind, 'security-ru');
      await tab.context.close();
    });
  }, 180_000);
});

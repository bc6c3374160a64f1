/**
 * The web console's sign-in pages in headless Chromium, on each host, against real servers: local
 * sign-in with its refusals (wrong password, then the lock with the time left; blocked; an expired
 * password leading to the change-password page), LDAP sign-in through the test slapd and the bridge,
 * OIDC sign-in through the test provider and the merge page (DEFAULT_FRONTEND_MERGE_URL pointing at
 * it), the password reset by mail (DEFAULT_FRONTEND_URL pointing at the console), and Ctrl+Shift+I
 * with error tracking on. Its own host, so the settings it changes touch no other suite.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { checkPage, launchChromium, newTab, openPage, signIn, waitReady, type ConsoleTab } from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { addLdapServer } from '../harness/ldap-records.js';
import { startTestProvider, type TestProvider } from '../harness/oidc-provider.js';
import { startSlapd, type Slapd } from '../harness/slapd.js';
import { startTestSmtp, type TestSmtp } from '../harness/smtp.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Str0ng$pass';
const DSN = 'https://consolekey@127.0.0.1:9/77';
let browser: Browser;
let host: RunningHost;
let bridge: TestBridge;
let slapd: Slapd;
let smtp: TestSmtp;
let idp: TestProvider;

const api = <T = Record<string, unknown>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const ui = (path = '') => `${host.url}/ui/${path}`;

async function newUser(extra: Record<string, unknown> = {}): Promise<{ id: string; login: string }> {
  const login = uniqueLogin('si');
  const r = await api<{ id: string }>('/v4/users', {
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD, email: `${login}@example.org`, ...extra },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.id, login };
}

beforeAll(async () => {
  [slapd, smtp, browser] = await Promise.all([startSlapd(), startTestSmtp(), launchChromium()]);
  bridge = await startTestBridge({ mail: { ca: smtp.ca } });
  host = await startTestHost(kind, {
    ...bridge.env,
    EMAIL_HOST: '127.0.0.1',
    EMAIL_PORT: String(smtp.port),
    EMAIL_FROM: 'Auth service <noreply@auth.test>',
    FRONTEND_ERRTRACK_DSN: DSN,
    ERRTRACK_ENV: 'console-e2e',
    FRONTEND_ERRTRACK_TUNNEL: 'True',
  });
  // The console as the front end: OIDC and form logins land on it, reset links and merges open it.
  const settings = await api('/v3/settings', {
    method: 'PATCH',
    auth: admin,
    json: { values: { DEFAULT_FRONTEND_URL: ui(), DEFAULT_FRONTEND_MERGE_URL: ui('merge') } },
  });
  expect(settings.status, JSON.stringify(settings.body)).toBe(200);
  await addLdapServer(host, 'corp', slapd, 'ldap');
  idp = await startTestProvider([`${host.url}/v3/oidc/callback/testidp`]);
  const oidc = await api('/v3/settings/identity-providers', {
    method: 'POST',
    auth: admin,
    json: { name: 'testidp', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
  });
  expect(oidc.status, JSON.stringify(oidc.body)).toBe(201);
  // Saved settings reach every instance within 5 s: once the one that answers serves the front end's.
  await eventually(
    async () => {
      const r = await api<{ items: Array<{ name: string; value?: unknown }> }>('/v3/settings', { auth: admin });
      const served = Object.fromEntries(r.body.items.map((i) => [i.name, i.value]));
      return served.DEFAULT_FRONTEND_URL === ui() && served.DEFAULT_FRONTEND_MERGE_URL === ui('merge');
    },
    { what: 'the front end in the served settings' },
  );
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await host?.stop();
  await Promise.all([bridge?.stop(), slapd?.stop(), smtp?.stop(), idp?.close()]);
});

/** Submits the sign-in form (without waiting for a navigation). */
async function submitSignIn(tab: ConsoleTab, login: string, password: string): Promise<void> {
  await tab.page.fill('#signin-login', login);
  await tab.page.fill('#signin-password', password);
  await tab.page.click('#signin-form button[type=submit]');
}

describe('console sign-in: local accounts', () => {
  it('signs in and out', async () => {
    const { login } = await newUser();
    const tab = await newTab(browser);
    await openPage(tab, ui('login'));
    await checkPage(tab, kind, 'signin');
    await signIn(tab, host.url, login, PASSWORD);
    expect(new URL(tab.page.url()).pathname).toBe(new URL(ui()).pathname);
    expect(await tab.page.textContent('#profile')).toContain(login);
    await Promise.all([tab.page.waitForURL(/\/ui\/login$/), tab.page.click('#console-signout')]);
    await waitReady(tab.page);
    await tab.page.goto(ui());
    await tab.page.waitForURL(/\/ui\/login\?next=/);
    await tab.context.close();
  });

  it('a wrong password, then the lock with the time left', async () => {
    const { login } = await newUser();
    const tab = await newTab(browser);
    await openPage(tab, ui('login'));
    await submitSignIn(tab, login, 'Wr0ng$pass');
    await tab.page.waitForSelector('#signin-message:has-text("Wrong login or password.")');
    // One message, in words: not the console's sentence followed by the API's detail.
    expect(
      (await tab.page.textContent('#signin-message'))?.toLowerCase().split('wrong login or password'),
    ).toHaveLength(2);
    expect(await tab.page.inputValue('#signin-password')).toBe('');
    await checkPage(tab, kind, 'signin-wrong');
    for (let i = 0; i < 2; i++) {
      await submitSignIn(tab, login, 'Wr0ng$pass');
      await tab.page.waitForSelector('#signin-form button[type=submit]:not([disabled])');
    }
    // Locked now (AUTH_FAILED_COUNT 3): even the right password is refused, with the time left.
    await submitSignIn(tab, login, PASSWORD);
    await tab.page.waitForSelector('#signin-message:has-text("Too many failed sign-ins")');
    expect(await tab.page.textContent('#signin-message')).toMatch(/Try again in 1[45] min\./);
    await checkPage(tab, kind, 'signin-locked');
    await tab.context.close();
  });

  it('is usable with the keyboard alone, with a visible focus', async () => {
    const { login } = await newUser();
    const tab = await newTab(browser);
    await openPage(tab, ui('login'));
    const { page } = tab;
    // The first Tab reaches the skip link, which shows itself and leads to the main content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).getBoundingClientRect().left >= 0)).toBe(
      true,
    );
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('signin-login');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe('none');
    await page.keyboard.type(login);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await Promise.all([page.waitForURL((u) => u.pathname === new URL(ui()).pathname), page.keyboard.press('Enter')]);
    await waitReady(page);
    expect(await page.textContent('#profile')).toContain(login);
    await tab.context.close();
  });

  it('a refusal the service sends to the front end (auth_error) is shown on the sign-in page', async () => {
    const tab = await newTab(browser);
    await tab.page.goto(`${ui()}?auth_error=account_blocked`);
    await tab.page.waitForURL(/\/ui\/login\?/);
    await waitReady(tab.page);
    expect(await tab.page.textContent('#signin-message')).toContain('This account is blocked');
    expect(new URL(tab.page.url()).searchParams.get('next')).toBe(new URL(ui()).pathname);
    await tab.page.goto(
      `${ui('login')}?auth_error=login_not_allowed&auth_error_description=` +
        encodeURIComponent('the login claim has markup'),
    );
    await waitReady(tab.page);
    expect(await tab.page.textContent('#signin-message')).toContain('the login claim has markup');
    await checkPage(tab, kind, 'signin-refused');
    await tab.context.close();
  });

  it('a blocked account is told so', async () => {
    const { id, login } = await newUser();
    expect((await api(`/v4/users/${id}/block`, { method: 'POST', auth: admin })).status).toBe(200);
    const tab = await newTab(browser);
    await openPage(tab, ui('login'));
    await submitSignIn(tab, login, PASSWORD);
    await tab.page.waitForSelector('#signin-message:has-text("This account is blocked")');
    await tab.context.close();
  });

  it(
    'a new account that must choose its password is asked, on the sign-in page, only for the new one ' +
      '(the password just typed is not asked again); the change signs it in',
    async () => {
      const { login } = await newUser({ mustChangePassword: true });
      const tab = await newTab(browser);
      await openPage(tab, ui('login'));
      const { page } = tab;
      await submitSignIn(tab, login, PASSWORD);
      await page.waitForSelector('#signin-change:not([hidden])');
      // A new account's first password is neither a reset nor an expiry: the page says which.
      const intro = await page.textContent('#signin-change-intro');
      expect(intro).toContain('Choose your own password');
      expect(intro).not.toMatch(/expired|reset/);
      // Only the new password, twice: no login, no current password to type again.
      const visible = await page.$$eval('input', (xs) =>
        xs.filter((x) => (x as HTMLElement).checkVisibility()).map((x) => x.id),
      );
      expect(visible).toEqual(['signin-change-new', 'signin-change-repeat']);
      expect(page.url()).not.toContain(PASSWORD);
      expect(page.url()).not.toContain(encodeURIComponent(PASSWORD));
      const stored = await page.evaluate(() =>
        JSON.stringify([{ ...localStorage }, { ...sessionStorage }, history.state]),
      );
      expect(stored).not.toContain(PASSWORD);
      // Against an empty field no rule is shown as met.
      expect(await page.$$eval('#signin-change-policy li.met', (xs) => xs.length)).toBe(0);
      await checkPage(tab, kind, 'signin-change');
      await page.fill('#signin-change-new', 'Fresh$pass1');
      await page.fill('#signin-change-repeat', 'Fresh$pass1');
      await Promise.all([
        page.waitForURL((u) => !u.pathname.endsWith('/ui/login'), { timeout: 20_000 }),
        page.click('#signin-change-form button[type=submit]'),
      ]);
      await waitReady(page);
      expect(await page.textContent('#profile')).toContain(login);
      // The new password is the account's now.
      const check = await api('/v3/login_without_session', { method: 'POST', auth: basic(login, 'Fresh$pass1') });
      expect(check.status).toBe(200);
      await tab.context.close();
    },
  );

  it(
    'the password page without a session asks for the login and the current password; a reset form ' +
      'shows no rule met',
    async () => {
      const { login } = await newUser({ mustChangePassword: true });
      const tab = await newTab(browser);
      await openPage(tab, ui(`password?expired=1&reason=initial&login=${login}`));
      const { page } = tab;
      expect(await page.isVisible('#password-expired-intro')).toBe(true);
      expect(await page.inputValue('#password-login')).toBe(login);
      // The rules follow the field: met while typed, none met once the form is reset (no input event then).
      await page.fill('#password-new', 'Fresh$pass1');
      expect(await page.$$eval('#password-policy li.met', (xs) => xs.length)).toBeGreaterThan(0);
      await page.evaluate(() => (document.getElementById('password-form') as HTMLFormElement).reset());
      await expect.poll(() => page.$$eval('#password-policy li.met', (xs) => xs.length)).toBe(0);
      await page.fill('#password-login', login);
      await page.fill('#password-old', PASSWORD);
      await page.fill('#password-new', 'Fresh$pass1');
      await page.fill('#password-repeat', 'Fresh$pass1');
      await page.click('#password-form button[type=submit]');
      await page.waitForSelector('#password-message:has-text("Sign in with the new one")');
      await tab.context.close();
    },
  );
});

describe('console sign-in: LDAP and OIDC', () => {
  it('signs in with an LDAP account through the test slapd', async () => {
    const tab = await newTab(browser);
    await signIn(tab, host.url, 'bob', 'bob-Secret-2', 'corp');
    const facts = await tab.page.textContent('#profile');
    expect(facts).toContain('Bob Auditor');
    expect(facts).toContain('LDAP (corp)');
    await tab.context.close();
  });

  it('an LDAP login that collides with a local account opens the merge page, which links them', async () => {
    const r = await api('/v4/users', { method: 'POST', auth: admin, json: { login: 'alice', password: PASSWORD } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const tab = await newTab(browser);
    await openPage(tab, ui('login'));
    await tab.page.selectOption('#signin-server', 'corp');
    await Promise.all([tab.page.waitForURL(/\/ui\/merge$/), submitSignIn(tab, 'alice', 'alice-Secret-1')]);
    await waitReady(tab.page);
    await tab.page.fill('#merge-password', PASSWORD);
    await Promise.all([
      tab.page.waitForURL((u) => u.pathname === new URL(ui()).pathname),
      tab.page.click('#merge-form button[type=submit]'),
    ]);
    await waitReady(tab.page);
    const facts = await tab.page.textContent('#profile');
    expect(facts).toContain('alice');
    expect(facts).toContain('local');
    await tab.context.close();
  });

  /** From the console's provider button through the test provider's pages back to the console. */
  async function throughProvider(tab: ConsoleTab, user: string): Promise<void> {
    const { page } = tab;
    await openPage(tab, ui('login'));
    await page.click('a:has-text("Sign in with testidp")');
    await page.waitForSelector('input[name=login]');
    await page.fill('input[name=login]', user);
    await page.fill('input[name=password]', 'any-password');
    await page.click('button[type=submit]');
    // The consent page, then back to the console.
    await page.waitForURL((u) => u.href.startsWith(host.url) || /interaction/.test(u.pathname));
    if (!page.url().startsWith(host.url)) await page.click('button[type=submit]');
    await page.waitForURL((u) => u.href.startsWith(`${host.url}/ui/`));
    await waitReady(page);
  }

  it('signs in through the OIDC provider', async () => {
    const user = uniqueLogin('oi');
    const tab = await newTab(browser);
    await throughProvider(tab, user);
    await tab.page.waitForSelector('#profile:has-text("OIDC (testidp)")');
    expect(await tab.page.textContent('#profile')).toContain(user);
    await tab.context.close();
  });

  it('an OIDC login that collides with a local account opens the merge page, which links them', async () => {
    const { login } = await newUser();
    const tab = await newTab(browser);
    await throughProvider(tab, login);
    expect(new URL(tab.page.url()).pathname).toBe(new URL(ui('merge')).pathname);
    await checkPage(tab, kind, 'merge');
    await tab.page.fill('#merge-password', 'Wr0ng$pass');
    await tab.page.click('#merge-form button[type=submit]');
    await tab.page.waitForSelector('#merge-message:has-text("Wrong login or password.")');
    await tab.page.fill('#merge-password', PASSWORD);
    await Promise.all([
      tab.page.waitForURL((u) => u.pathname === new URL(ui()).pathname),
      tab.page.click('#merge-form button[type=submit]'),
    ]);
    await waitReady(tab.page);
    const facts = await tab.page.textContent('#profile');
    expect(facts).toContain(login);
    expect(facts).toContain('local');
    // A merge page opened without a pending merge says there is nothing to link.
    const fresh = await newTab(browser);
    await openPage(fresh, ui('merge'));
    await fresh.page.fill('#merge-password', PASSWORD);
    await fresh.page.click('#merge-form button[type=submit]');
    await fresh.page.waitForSelector('#merge-message:has-text("There is nothing to link")');
    await Promise.all([tab.context.close(), fresh.context.close()]);
  });
});

describe('console: password reset by mail', () => {
  it('asks for the mail, and its link opens the reset page, which sets the password', async () => {
    const { login } = await newUser();
    const tab = await newTab(browser);
    await openPage(tab, ui('reset-password'));
    await checkPage(tab, kind, 'reset-request');
    await tab.page.fill('#reset-login', `${login}@example.org`);
    await tab.page.click('#reset-request-form button[type=submit]');
    await tab.page.waitForSelector('#reset-request-message:has-text("If an account matches")');
    // The reset mail (the welcome mail of an account created with a password has no link).
    const resetMail = () =>
      smtp.received.find(
        (m) => m.to.includes(`${login}@example.org`) && /reset-password#token=/.test(m.parsed.text ?? ''),
      );
    await expect.poll(() => resetMail() !== undefined, { timeout: 30_000, interval: 200 }).toBe(true);
    const mail = resetMail()!;
    const link = /(http\S+\/reset-password#token=[A-Za-z0-9_-]+)/.exec(mail.parsed.text ?? '')?.[1];
    expect(link?.startsWith(ui('reset-password#token='))).toBe(true);

    // The link opens in a new tab, as from a mail client.
    await tab.context.close();
    const linkTab = await newTab(browser);
    await openPage(linkTab, link!);
    const { page } = linkTab;
    expect(await page.isVisible('#reset-confirm')).toBe(true);
    expect(page.url()).not.toContain('token=');
    await page.fill('#reset-new', 'Reset$pass9');
    await checkPage(linkTab, kind, 'reset-confirm');
    await page.fill('#reset-repeat', 'Reset$pass9');
    await page.click('#reset-confirm-form button[type=submit]');
    await page.waitForSelector('#page-message:has-text("Your password is set")');
    await signIn(linkTab, host.url, login, 'Reset$pass9');
    expect(await page.textContent('#profile')).toContain(login);
    // The link is used up.
    await openPage(linkTab, link!);
    await page.fill('#reset-new', 'Other$pass9');
    await page.fill('#reset-repeat', 'Other$pass9');
    await page.click('#reset-confirm-form button[type=submit]');
    await page.waitForSelector('#reset-confirm-message:has-text("This link is invalid, used or expired")');
    await linkTab.context.close();
  });
});

describe('console: error tracking', () => {
  it('initialises @sentry/browser from client-config and Ctrl+Shift+I shows the effective DSN', async () => {
    const tab = await newTab(browser);
    await openPage(tab, ui('login'));
    await tab.page.waitForSelector('html[data-errtrack]', { state: 'attached' });
    expect(await tab.page.getAttribute('html', 'data-errtrack')).toBe('tunnel');
    expect(
      await tab.page.evaluate(
        () => (window as unknown as { Sentry: { getClient(): unknown } }).Sentry.getClient() !== undefined,
      ),
    ).toBe(true);
    await tab.page.keyboard.press('Control+Shift+I');
    await tab.page.waitForSelector('#errtrack-dialog[open]', { timeout: 5000 });
    expect(await tab.page.textContent('#errtrack-dsn')).toBe(DSN);
    expect(await tab.page.textContent('#errtrack-route')).toContain('/v3/sentry-tunnel');
    await tab.context.close();
  });
});

/**
 * The web console's self-service pages in headless Chromium, on each host (the shared host): the
 * profile, the password change with the policy checked as the user types, the user's sessions (end
 * one, end all) and API tokens (issue, copy, revoke), the language switch and Ctrl+Shift+I. Every page
 * passes axe-core (no serious or critical violation) at 1280 and 360 px and is photographed
 * (test-artifacts/console/).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser as CookieBrowser } from '../harness/browser.js';
import { ADMIN, baseUrl, basic, call, createUser, uniqueLogin } from '../harness/client.js';
import { axeViolations, checkPage, launchChromium, newTab, openPage, signIn, waitReady } from '../harness/console.js';

const kind = inject('hostKind');
const PASSWORD = 'Str0ng$pass';
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const ui = (path = '') => `${baseUrl()}/ui/${path}`;

describe('console: profile and navigation', () => {
  it(
    'a visitor without a session is sent to sign in, then to the page asked for; the profile shows the ' + 'account',
    async () => {
      const login = uniqueLogin('cs');
      await createUser(login, PASSWORD, { displayName: 'Console Person', email: `${login}@example.org` });
      const tab = await newTab(browser);
      await tab.page.goto(ui('sessions'));
      await tab.page.waitForURL(/\/ui\/login\?next=/);
      await waitReady(tab.page);
      await tab.page.fill('#signin-login', login);
      await tab.page.fill('#signin-password', PASSWORD);
      await Promise.all([tab.page.waitForURL(/\/ui\/sessions$/), tab.page.click('#signin-form button[type=submit]')]);
      await waitReady(tab.page);
      await openPage(tab, ui());
      const facts = await tab.page.textContent('#profile');
      expect(facts).toContain(login);
      expect(facts).toContain('Console Person');
      expect(facts).toContain(`${login}@example.org`);
      expect(await tab.page.textContent('#console-user')).toBe('Console Person');
      // Administrator links stay hidden for a user; the current page is marked in the navigation.
      expect(await tab.page.getAttribute('#console-nav a[aria-current=page]', 'href')).toBe(new URL(ui()).pathname);
      await checkPage(tab, kind, 'profile');
      await tab.context.close();
    },
  );

  it('a console page is served with a strict CSP and no inline script', async () => {
    const res = await fetch(ui('login'));
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    // ROOT_PATH/ui and ROOT_PATH itself lead to the console.
    expect((await fetch(`${baseUrl()}/ui`, { redirect: 'manual' })).headers.get('location')).toBe(
      new URL(ui()).pathname,
    );
  });

  it(
    "a page's script never gets a Basic challenge (browsers would prompt); API clients and navigations " + 'do',
    async () => {
      const wrong = { login: 'nobody-here', password: 'Wr0ng$pass' };
      const asScript = await fetch(`${baseUrl()}/v3/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Dest': 'empty' },
        body: JSON.stringify(wrong),
      });
      expect(asScript.status).toBe(401);
      expect(asScript.headers.get('www-authenticate')).toBe('Bearer realm="auth"');
      const basicScript = await call('/v4/users/me', {
        auth: basic(wrong.login, wrong.password),
        headers: { 'X-Requested-With': 'XMLHttpRequest' },
      });
      expect(basicScript.status).toBe(401);
      expect(basicScript.headers.get('www-authenticate')).not.toContain('Basic');
      const client = await call('/v4/users/me', { auth: basic(wrong.login, wrong.password) });
      expect(client.headers.get('www-authenticate')).toContain('Basic realm="auth"');
      const navigation = await call('/v4/users/me', { headers: { 'Sec-Fetch-Dest': 'document' } });
      expect(navigation.headers.get('www-authenticate')).toContain('Basic realm="auth"');
    },
  );

  it('the sign-in page follows only a `next` below the console (no open redirect)', async () => {
    const nextOf = async (next: string) => {
      const html = await (await fetch(`${ui('login')}?next=${encodeURIComponent(next)}`)).text();
      return /data-next="([^"]*)"/.exec(html)?.[1];
    };
    const home = new URL(ui()).pathname;
    expect(await nextOf(`${home}tokens`)).toBe(`${home}tokens`);
    for (const bad of [
      'https://evil.example/',
      '//evil.example/ui/',
      `${home}/\\evil.example`,
      '/elsewhere',
      `${home}x//y`,
    ]) {
      expect(await nextOf(bad), bad).toBe(home);
    }
  });

  it('Russian by Accept-Language; the switch chooses English and is remembered', async () => {
    const tab = await newTab(browser, { locale: 'ru-RU' });
    await openPage(tab, ui('login'));
    expect(await tab.page.getAttribute('html', 'lang')).toBe('ru');
    expect(await tab.page.textContent('h1')).toBe('Вход');
    await checkPage(tab, kind, 'signin-ru');
    await Promise.all([tab.page.waitForURL(/lang=en/), tab.page.click('nav.languages a[lang=en]')]);
    await waitReady(tab.page);
    expect(await tab.page.textContent('h1')).toBe('Sign in');
    await openPage(tab, ui('reset-password'));
    expect(await tab.page.getAttribute('html', 'lang')).toBe('en');
    await tab.context.close();
  });

  it("a signed-in user's language switch becomes the account's (its mails follow it)", async () => {
    const login = uniqueLogin('cl');
    await createUser(login, PASSWORD);
    const tab = await newTab(browser, { locale: 'ru-RU' });
    await signIn(tab, baseUrl(), login, PASSWORD);
    const language = async () =>
      ((await (await call('/v4/users/me', { auth: basic(login, PASSWORD) })).json()) as { language: string | null })
        .language;
    // A page in the browser's language is no choice: the account keeps none (MAIL_LANGUAGE decides).
    expect(await tab.page.getAttribute('html', 'lang')).toBe('ru');
    expect(await language()).toBeNull();
    await Promise.all([tab.page.waitForURL(/lang=en/), tab.page.click('nav.languages a[lang=en]')]);
    await waitReady(tab.page);
    await expect.poll(language, { timeout: 20_000 }).toBe('en');
    await tab.context.close();
  });

  it('Ctrl+Shift+I shows the effective DSN (off on this host)', async () => {
    const tab = await newTab(browser);
    await openPage(tab, ui('login'));
    await tab.page.waitForSelector('html[data-errtrack]', { state: 'attached' });
    expect(await tab.page.getAttribute('html', 'data-errtrack')).toBe('off');
    await tab.page.keyboard.press('Control+Shift+I');
    await tab.page.waitForSelector('#errtrack-dialog[open]', { timeout: 5000 });
    expect(await tab.page.textContent('#errtrack-dsn')).toBe('error tracking off');
    await tab.page.keyboard.press('Escape');
    await tab.page.waitForSelector('#errtrack-dialog:not([open])', { state: 'attached', timeout: 5000 });
    await tab.context.close();
  });
});

describe('console: change password', () => {
  it('shows the policy, checks it as the user types, shows the API detail, and changes the password', async () => {
    const login = uniqueLogin('cp');
    await createUser(login, PASSWORD);
    const tab = await newTab(browser);
    await signIn(tab, baseUrl(), login, PASSWORD);
    await openPage(tab, ui('password'));
    const { page } = tab;
    expect(await page.isHidden('#password-login-row')).toBe(true);
    await page.fill('#password-new', 'abc');
    expect(await page.getAttribute('li[data-rule=min_length]', 'class')).toContain('unmet');
    expect(await page.getAttribute('li[data-rule=lower_min]', 'class')).toContain('met');
    expect(await page.getAttribute('li[data-rule=digit_min]', 'class')).toContain('unmet');
    await page.fill('#password-new', 'N3w$ecret');
    for (const rule of ['min_length', 'max_length', 'special_min', 'digit_min', 'lower_min', 'upper_min']) {
      expect(await page.getAttribute(`li[data-rule=${rule}]`, 'class'), rule).toBe('met');
    }
    await checkPage(tab, kind, 'password');

    // The repetition differs: nothing is sent.
    await page.fill('#password-old', PASSWORD);
    await page.fill('#password-repeat', 'N3w$ecreX');
    await page.click('#password-form button[type=submit]');
    await page.waitForSelector('#password-message:has-text("The two new passwords differ")');
    // A wrong old password: the console's words and the API's detail.
    await page.fill('#password-old', 'Wr0ng$old');
    await page.fill('#password-repeat', 'N3w$ecret');
    await page.click('#password-form button[type=submit]');
    await page.waitForSelector('#password-message:has-text("The current password is wrong")');
    // One message in words: no field name (oldPassword), not the same sentence twice.
    const wrongOld = (await page.textContent('#password-message')) ?? '';
    expect(wrongOld).not.toContain('oldPassword');
    expect(wrongOld.toLowerCase().split('the current password is wrong')).toHaveLength(2);
    // A password the policy refuses (history: the current one): the API's rules are listed.
    await page.fill('#password-old', PASSWORD);
    await page.fill('#password-new', PASSWORD);
    await page.fill('#password-repeat', PASSWORD);
    await page.click('#password-form button[type=submit]');
    await page.waitForSelector('#password-message:has-text("not one of the last")');
    // The policy refusal: each broken rule once, under one heading.
    const refusedText = (await page.textContent('#password-message')) ?? '';
    expect(refusedText.split('not one of the last')).toHaveLength(2);
    await checkPage(tab, kind, 'password-refused');
    await page.fill('#password-old', PASSWORD);
    await page.fill('#password-new', 'N3w$ecret');
    await page.fill('#password-repeat', 'N3w$ecret');
    await page.click('#password-form button[type=submit]');
    await page.waitForSelector('#password-message:has-text("Your password is changed")');
    expect((await call('/v4/users/me', { auth: basic(login, 'N3w$ecret') })).status).toBe(200);
    expect((await call('/v4/users/me', { auth: basic(login, PASSWORD) })).status).toBe(401);
    // The session that made the change goes on.
    await openPage(tab, ui());
    expect(await tab.page.textContent('#profile')).toContain(login);
    await tab.context.close();
  });
});

describe('console: sessions', () => {
  it('lists the sessions, ends another one, then all of them', async () => {
    const login = uniqueLogin('se');
    await createUser(login, PASSWORD, { sessionLimit: 5 });
    const other = new CookieBrowser(new URL(baseUrl()).origin);
    expect((await other.postJson(`${baseUrl()}/v3/login`, { login, password: PASSWORD })).status).toBe(200);
    const tab = await newTab(browser);
    await signIn(tab, baseUrl(), login, PASSWORD);
    await openPage(tab, ui('sessions'));
    const { page } = tab;
    await page.waitForSelector('#sessions-region table');
    expect(await page.locator('#sessions-region tbody tr').count()).toBe(2);
    expect(await page.locator('#sessions-region tbody tr:has-text("this session")').count()).toBe(1);
    await checkPage(tab, kind, 'sessions');

    // The client in words (the other session is this test's fetch, the console's is Chromium on Linux).
    expect(await page.textContent('#sessions-region tbody tr:has-text("this session")')).toMatch(
      /Headless Chrome \d+ on Linux/,
    );
    // End asks first: cancelled, nothing ends; confirmed, the session ends.
    await page.click('#sessions-region tbody tr:not(:has-text("this session")) button');
    await page.waitForSelector('dialog.confirm[open]');
    expect(await axeViolations(page)).toEqual([]);
    await page.click('dialog.confirm button:text-is("Cancel")');
    await page.waitForSelector('dialog.confirm', { state: 'detached' });
    expect(await page.locator('#sessions-region tbody tr').count()).toBe(2);
    expect((await other.fetch(`${baseUrl()}/v4/users/me`)).status).toBe(200);
    await page.click('#sessions-region tbody tr:not(:has-text("this session")) button');
    await page.click('dialog.confirm button.danger');
    await page.waitForSelector('#sessions-message:has-text("The session is ended")');
    await page.waitForFunction(() => document.querySelectorAll('#sessions-region tbody tr').length === 1);
    expect((await other.fetch(`${baseUrl()}/v4/users/me`)).status).toBe(401);

    await page.click('#sessions-end-all');
    await page.waitForSelector('dialog.confirm[open]');
    await Promise.all([page.waitForURL(/\/ui\/login$/), page.click('dialog.confirm button.danger')]);
    await waitReady(page);
    expect(
      (
        await call('/v4/users/me', {
          headers: { Cookie: (await tab.context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') },
        })
      ).status,
    ).toBe(401);
    await tab.context.close();
  });
});

describe('console: API tokens', () => {
  it('issues a token shown once with a copy button, and revokes it', async () => {
    const login = uniqueLogin('tk');
    await createUser(login, PASSWORD);
    const tab = await newTab(browser);
    await signIn(tab, baseUrl(), login, PASSWORD);
    await openPage(tab, ui('tokens'));
    const { page } = tab;
    await page.waitForSelector('#tokens-region:has-text("No tokens")');
    await page.fill('#token-name', 'ci pipeline');
    await page.fill('#token-days', '30');
    // Only reading the own account: the token may not read the audit logs, nor change the account.
    await page.check('#token-scope-account-read');
    await page.click('#token-form button[type=submit]');
    await page.waitForSelector('#token-issued:not([hidden])');
    const secret = await page.inputValue('#token-secret');
    expect(secret).toMatch(/^ast_/);
    expect(await page.textContent('#token-issued-text')).toContain('ci pipeline');
    await page.click('#token-copy');
    await page.waitForSelector('#token-copy-state:has-text("Copied")');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await page.waitForSelector('#tokens-region tbody tr:has-text("ci pipeline"):has-text("account:read")');
    await checkPage(tab, kind, 'tokens');
    expect((await call('/v4/users/me', { auth: `Bearer ${secret}` })).status).toBe(200);
    const patch = await call('/v4/users/me', { method: 'PATCH', auth: `Bearer ${secret}`, json: { language: 'en' } });
    expect(patch.status).toBe(403);
    expect(patch.headers.get('WWW-Authenticate')).toContain('scope="account:write"');

    // Revoked while its secret is on screen: asked first; then the secret leaves the page.
    await page.click('#tokens-region button[aria-label="Revoke the token ci pipeline"]');
    await page.waitForSelector('dialog.confirm[open]');
    await page.click('dialog.confirm button.danger');
    await page.waitForSelector('#page-message:has-text("revoked")');
    await page.waitForSelector('#tokens-region:has-text("No tokens")');
    expect(await page.isHidden('#token-issued')).toBe(true);
    expect(await page.inputValue('#token-secret')).toBe('');
    expect((await call('/v4/users/me', { auth: `Bearer ${secret}` })).status).toBe(401);

    // Shown once: a reload lists a token without its secret.
    await page.fill('#token-name', 'second');
    await page.click('#token-form button[type=submit]');
    await page.waitForSelector('#token-issued:not([hidden])');
    const second = await page.inputValue('#token-secret');
    await openPage(tab, ui('tokens'));
    // None ticked: everything its owner may do, and said so.
    await page.waitForSelector('#tokens-region tbody tr:has-text("second"):has-text("everything its owner may do")');
    expect(await page.isHidden('#token-issued')).toBe(true);
    expect(await page.content()).not.toContain(second);
    await tab.context.close();
  });

  it('limits a token to a service chosen from a list, shows its scopes and services, filters the list', async () => {
    const login = uniqueLogin('ta');
    await createUser(login, PASSWORD);
    const tab = await newTab(browser);
    await signIn(tab, baseUrl(), login, PASSWORD);
    await openPage(tab, ui('tokens'));
    const { page } = tab;
    // The choices are the services the user may enter: srm (any account), not monitoring (admins, auditors).
    await page.waitForSelector('#token-audience-list input[value="srm"]');
    expect(await page.$('#token-audience-list input[value="monitoring"]')).toBeNull();
    await page.fill('#token-name', 'to srm');
    await page.check('#token-audience-list input[value="srm"]');
    await page.click('#token-form button[type=submit]');
    await page.waitForSelector('#token-issued:not([hidden])');
    const secret = await page.inputValue('#token-secret');
    // For srm only: no scope of this API.
    await page.waitForSelector(
      '#tokens-region tbody tr:has-text("to srm"):has-text("none of this API"):has-text("srm")',
    );
    expect((await call('/v4/users/me', { auth: `Bearer ${secret}` })).status).toBe(403);
    const listed = await call('/v4/users/me/tokens', { auth: basic(login, PASSWORD) });
    const made = ((await listed.json()) as { items: { name: string; audiences: string[]; createdAt: string }[] }).items;
    expect(made.find((t) => t.name === 'to srm')?.audiences).toEqual(['srm']);

    await page.fill('#token-name', 'reader');
    await page.check('#token-scope-account-read');
    await page.click('#token-form button[type=submit]');
    await page.waitForSelector('#tokens-region tbody tr:has-text("reader"):has-text("no limit")');
    const reader = await page.inputValue('#token-secret');
    expect((await call('/v4/users/me', { auth: `Bearer ${reader}` })).status).toBe(200);
    await openPage(tab, ui('tokens'));
    await page.waitForSelector('#tokens-region tbody tr:has-text("reader")');

    // By scope: only the token with account:read.
    await page.selectOption('#token-filter-scope', 'account:read');
    await page.waitForSelector('#tokens-region tbody tr:has-text("reader")');
    expect(await page.$('#tokens-region tbody tr:has-text("to srm")')).toBeNull();
    await page.selectOption('#token-filter-scope', '');
    // By last use: never used is the srm token; reader was just used.
    await page.selectOption('#token-filter-use', 'never');
    await page.waitForSelector('#tokens-region tbody tr:has-text("to srm")');
    expect(await page.$('#tokens-region tbody tr:has-text("reader")')).toBeNull();
    await page.selectOption('#token-filter-use', '30');
    await page.waitForSelector('#tokens-region:has-text("No token matches the filters.")');
    // A month on (the page's clock), neither was used for 30 days.
    const issuedAt = Math.max(...made.map((t) => Date.parse(t.createdAt)), Date.now());
    await page.clock.setFixedTime(issuedAt + 31 * 86_400_000);
    await page.selectOption('#token-filter-use', '90');
    await page.selectOption('#token-filter-use', '30');
    await page.waitForSelector('#tokens-region tbody tr:has-text("reader")');
    expect(await page.$('#tokens-region tbody tr:has-text("to srm")')).not.toBeNull();
    await tab.context.close();
  });
});

describe('console: service accounts', () => {
  it('an administrator makes one, finds it among the service accounts and issues its token', async () => {
    const login = uniqueLogin('svc');
    const tab = await newTab(browser);
    await signIn(tab, baseUrl(), ADMIN.login, ADMIN.password);
    await openPage(tab, ui('admin/users'));
    const { page } = tab;
    await page.fill('#create-login', login);
    await page.check('#create-service');
    await page.click('#user-create button[type=submit]');
    await page.waitForSelector('#user-create-message.message-success');
    // Listed apart: the kind filter finds it, and says what it is.
    await page.fill('#users-q', login);
    await page.selectOption('#users-kind', 'service');
    await page.click('#users-search button[type=submit]');
    await page.waitForSelector(`#users-region tbody tr:has-text("${login}"):has-text("service account")`);
    expect(page.url()).toContain('kind=service');
    await page.selectOption('#users-kind', 'person');
    await page.click('#users-search button[type=submit]');
    await page.waitForSelector('#users-region:has-text("No user matches.")');
    await page.selectOption('#users-kind', 'service');
    await page.click('#users-search button[type=submit]');
    await page.click(`#users-region a:has-text("${login}")`);
    await page.waitForSelector('#user-token-form:not([hidden])');
    // No password to reset; a token to issue.
    expect(await page.isHidden('#user-reset')).toBe(true);
    await page.fill('#user-token-name', 'pipeline');
    await page.check('#user-token-scope-account-read');
    await page.click('#user-token-form button[type=submit]');
    await page.waitForSelector('#user-token-issued:not([hidden])');
    const secret = await page.inputValue('#user-token-secret');
    expect(secret).toMatch(/^ast_/);
    await page.waitForSelector('#user-tokens tbody tr:has-text("pipeline"):has-text("account:read")');
    const me = await call('/v4/users/me', { auth: `Bearer ${secret}` });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ login, kind: 'service' });
    await tab.context.close();
  });
});

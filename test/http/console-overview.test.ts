/**
 * The administrator's first screen in headless Chromium, on each host: an administrator signs in
 * and lands on the overview, follows its link to the sessions of all users, finds another user's
 * session by a part of the login and ends it (End, then the confirmation in the row); the user list
 * finds an account by a part of its name. Other roles keep their landing page. Both languages,
 * axe-core on every page at 1280 and 360 px (test-artifacts/console/). Nothing sets a header by hand:
 * the browser sends what it sends.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loggedInBrowser } from '../harness/browser.js';
import { ADMIN, baseUrl, createUser, uniqueLogin } from '../harness/client.js';
import { checkPage, launchChromium, messageOf, newTab, openPage, signIn, type ConsoleTab } from '../harness/console.js';

const kind = inject('hostKind');
const PASSWORD = 'Str0ng$pass';
let browser: Browser;
const ui = (path = '') => `${baseUrl()}/ui/${path}`;

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe('console: the administrator overview and the sessions of all users', () => {
  it('an administrator lands on the overview, follows a link and ends a session of another user', async () => {
    const login = uniqueLogin('ovc');
    await createUser(login, PASSWORD, { displayName: 'Overview Person' });
    const other = await loggedInBrowser(baseUrl(), login, PASSWORD);
    expect((await other.fetch(`${baseUrl()}/v4/users/me`)).status).toBe(200);

    const tab: ConsoleTab = await newTab(browser);
    const { page } = tab;
    await signIn(tab, baseUrl(), ADMIN.login, ADMIN.password);
    expect(new URL(page.url()).pathname).toMatch(/\/ui\/admin\/overview$/);
    await page.waitForSelector('#overview-sessions .count');
    expect(Number(await page.textContent('#overview-sessions .count'))).toBeGreaterThanOrEqual(2);
    for (const card of ['failed', 'locked', 'blocked', 'expired', 'soon', 'mail', 'store'])
      expect(await page.isVisible(`#overview-${card}`), card).toBe(true);
    expect(await page.isVisible('#console-nav a[href$="/ui/admin/overview"][aria-current="page"]')).toBe(true);
    await checkPage(tab, kind, 'admin-overview-en');

    await Promise.all([page.waitForURL(/\/ui\/admin\/sessions$/), page.click('#overview-sessions a')]);
    await page.waitForSelector('body[data-ready]', { state: 'attached' });
    await page.fill('#all-sessions-login', login.slice(3, -2).toUpperCase());
    await page.click('#all-sessions-search button[type=submit]');
    await page.waitForFunction(
      () =>
        document.querySelector('#all-sessions-region caption')?.textContent ===
        'Sessions 1–1 of 1 (most recently used first)',
    );
    expect(await page.textContent('#all-sessions-region tbody')).toContain(login);
    expect(page.url()).toContain('login=');
    await checkPage(tab, kind, 'admin-sessions-en');

    // End asks first, in the row; Cancel keeps the session.
    await page.click('#all-sessions-region tbody button.danger');
    await page.waitForSelector('#all-sessions-region tbody button:text-is("Yes, end it")');
    expect(await page.textContent('#all-sessions-region tbody')).toContain(`End the session of ${login}`);
    await page.click('#all-sessions-region tbody button:text-is("Cancel")');
    expect((await other.fetch(`${baseUrl()}/v4/users/me`)).status).toBe(200);
    await page.click('#all-sessions-region tbody button.danger');
    await page.click('#all-sessions-region tbody button:text-is("Yes, end it")');
    expect(await messageOf(page, '#all-sessions-message')).toBe(`The session of ${login} is ended.`);
    await page.waitForSelector('#all-sessions-region p:text-is("No active session matches.")');
    expect((await other.fetch(`${baseUrl()}/v4/users/me`)).status).toBe(401);
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });

  it('in Russian: the overview, the sessions and the user search by a part of the name', async () => {
    const login = uniqueLogin('ovr');
    const tag = uniqueLogin('Nm');
    await createUser(login, PASSWORD, { displayName: `Иван ${tag} Петров` });
    await loggedInBrowser(baseUrl(), login, PASSWORD);
    const tab = await newTab(browser, { locale: 'ru-RU' });
    const { page } = tab;
    await signIn(tab, baseUrl(), ADMIN.login, ADMIN.password);
    expect(new URL(page.url()).pathname).toMatch(/\/ui\/admin\/overview$/);
    await page.waitForSelector('#overview-sessions .count');
    expect(await page.textContent('h1')).toBe('Обзор');
    expect(await page.textContent('#overview-sessions-title')).toBe('Активные сеансы');
    await checkPage(tab, kind, 'admin-overview-ru');

    await openPage(tab, ui(`admin/sessions?login=${encodeURIComponent(login)}`));
    await page.waitForSelector('#all-sessions-region caption');
    expect(await page.textContent('#all-sessions-region caption')).toMatch(/^Сеансы 1–1 из 1/);
    await page.click('#all-sessions-region tbody button.danger');
    await page.waitForSelector('#all-sessions-region tbody button:text-is("Да, завершить")');
    await checkPage(tab, kind, 'admin-sessions-ru');

    await openPage(tab, ui('admin/users'));
    expect(await page.textContent('label[for="users-q"]')).toBe('Логин, имя или адрес содержит');
    await page.fill('#users-q', tag.toLowerCase());
    await page.click('#users-search button[type=submit]');
    await page.waitForSelector('#users-region caption');
    expect(await page.textContent('#users-region caption')).toMatch(/ 1–1 из 1/);
    expect(await page.textContent('#users-region tbody')).toContain(login);
    expect(page.url()).toContain(`q=${tag.toLowerCase()}`);
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });

  it('other roles keep their landing page (the profile)', async () => {
    const login = uniqueLogin('ovp');
    await createUser(login, PASSWORD);
    const tab = await newTab(browser);
    await signIn(tab, baseUrl(), login, PASSWORD);
    expect(new URL(tab.page.url()).pathname).toMatch(/\/ui\/$/);
    await tab.context.close();
  });
});

/**
 * The first hour in a real browser (headless Chromium), on each host: the first-run page filled in
 * and submitted with the one-time code, then the console's sign-in form, neither with any header
 * set by the test (Chromium posts the first-run form with `Origin: null`, the page being
 * no-referrer, and `Sec-Fetch-Site: same-origin`). A cross-site form post to the page is refused
 * with a page in the visitor's language.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { issueFirstRunCode } from '../../worker/src/first-run/code.js';
import { openDatabase } from '../../worker/node/host.js';
import { launchChromium, newTab, signIn } from '../harness/console.js';
import { eventually } from '../harness/eventually.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const PASSWORD = 'F1rst@dmin';
let browser: Browser;
let host: RunningHost;
let attacker: Server;
let attackerPort = 0;

beforeAll(async () => {
  [browser, host] = await Promise.all([
    launchChromium(),
    startTestHost(kind, { AUTH_BOOTSTRAP_ADMIN_LOGIN: '', AUTH_BOOTSTRAP_ADMIN_PASSWORD: '' }),
  ]);
  // Another site (localhost is another site than 127.0.0.1) whose page posts to the first-run page.
  attacker = createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(`<!doctype html><form method="post" action="${host.url}/first-run">
<input name="code" value="x"><input name="login" value="intruder"><input name="password" value="${PASSWORD}">
</form><script>document.forms[0].submit()</script>`);
  });
  await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
  attackerPort = (attacker.address() as AddressInfo).port;
});
afterAll(async () => {
  await browser?.close();
  await host?.stop();
  attacker?.close();
});

/** The code `npm start` printed (Node), or one issued as `npm run dev:edge` issues it (edge). */
async function oneTimeCode(): Promise<string> {
  if (kind === 'node') {
    // Said after the start's first line (log lines go out in batches): waited for.
    return eventually(() => host.output().match(/one-time code ([A-Z0-9-]{20,})/)?.[1], {
      what: 'the one-time code in the start messages',
    });
  }
  const db = openDatabase(parseEnvironment({ LIBSQL_URL: host.libsqlUrl }));
  try {
    return await issueFirstRunCode(db.db);
  } finally {
    db.close();
  }
}

describe('the first run in Chromium', () => {
  it("another site's form post is refused with a page in the visitor's language", async () => {
    const tab = await newTab(browser, { locale: 'ru-RU' });
    try {
      const refused = tab.page.waitForResponse(
        (r) => r.url().endsWith('/first-run') && r.request().method() === 'POST',
      );
      await tab.page.goto(`http://localhost:${attackerPort}/`);
      const res = await refused;
      expect(res.status()).toBe(403);
      await tab.page.waitForURL(`${host.url}/first-run`);
      expect(await tab.page.textContent('h1')).toBe('Форма отклонена');
      expect(await tab.page.getAttribute('a', 'href')).toBe(`${new URL(host.url).pathname}/first-run`);
    } finally {
      await tab.context.close();
    }
  });

  it('creates the first administrator through the page, who then signs in to the console', async () => {
    const tab = await newTab(browser);
    try {
      await tab.page.goto(`${host.url}/first-run`);
      const code = (await oneTimeCode()).toLowerCase();
      await tab.page.fill('input[name=code]', code);
      await tab.page.fill('input[name=login]', 'first');
      await tab.page.fill('input[name=password]', PASSWORD);
      // A refused form (the passwords differ) comes back with what was typed: the login, and the long code.
      await tab.page.fill('input[name=passwordRepeat]', `${PASSWORD}x`);
      await Promise.all([tab.page.waitForURL(/\/first-run$/), tab.page.click('button[type=submit]')]);
      await tab.page.waitForSelector('.errors');
      // In the page's words: the field's label, not the form's field name.
      expect(await tab.page.textContent('.errors')).toBe('Repeat the password: the two passwords differ');
      expect(await tab.page.inputValue('input[name=code]')).toBe(code);
      expect(await tab.page.inputValue('input[name=login]')).toBe('first');
      await tab.page.fill('input[name=password]', PASSWORD);
      await tab.page.fill('input[name=passwordRepeat]', PASSWORD);
      const posted = tab.page.waitForRequest((r) => r.method() === 'POST');
      await tab.page.click('button[type=submit]');
      const headers = await (await posted).allHeaders();
      // What makes this test worth having: the browser hides the Origin of this page's form.
      expect(headers.origin).toBe('null');
      expect(headers['sec-fetch-site']).toBe('same-origin');
      await tab.page.waitForSelector('h1');
      expect(await tab.page.textContent('h1')).toBe('Administrator "first" created');
      expect(tab.problems).toEqual([]);
      // The page leads to the console's sign-in (README, "The first run").
      await Promise.all([tab.page.waitForURL(/\/ui\/login$/), tab.page.click('text=Sign in to the web console')]);
      await tab.page.waitForSelector('#signin-login');

      await signIn(tab, host.url, 'first', PASSWORD);
      expect(new URL(tab.page.url()).pathname).not.toMatch(/\/login$/);
      expect(tab.problems).toEqual([]);
    } finally {
      await tab.context.close();
    }
  });
});

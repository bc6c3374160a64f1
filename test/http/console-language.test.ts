/**
 * One language per page (docs/console.md, "Layout and words"): an administrator walks every console page
 * in English and in Russian, with data on them (mails: one written or given up, one to an account without
 * an address; an LDAP record whose connection test meets a bridge that is down; audit events, a failed
 * sign-in among them), and each page's visible text is of its own language. English pages: no Cyrillic.
 * Russian pages: none of a list of common English words. Not judged: code (variable names, index patterns,
 * a mail server's reply), inputs, the language switch's other language (marked `lang`), and proper names.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { launchChromium, newTab, openPage, signIn, type ConsoleTab } from '../harness/console.js';
import { freePort, startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
let browser: Browser;
let host: RunningHost;
let bridge: TestBridge;
let userId = '';

const api = <T = Record<string, any>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

/** English words that never belong on a Russian page. */
const ENGLISH = new RegExp(
  '\\b(the|and|is|are|not|was|of|to|with|from|for|has|no|failure|success|unknown|account|password|bridge|' +
    'given up|connection|refused|error|failed|sent|pending|mail|address|accepted|string|integer|none)\\b',
  'i',
);
/** Names that are the same in every language: protocols, products, standards, units. */
const PROPER = /\b(LDAP|LDAPS|OIDC|TOTP|API|URL|HTTP|HTTPS|StartTLS|TLS|DN|DSE|OID|SMTP|Basic|Bearer|JSON|ms)\b/g;

/**
 * The visible text nodes of the page that are the page's own words: not in code, pre, inputs or an
 * element of another language (the switch's "Русский"), and no URL, e-mail address or variable name.
 */
async function ownWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const pageLang = document.documentElement.lang;
    const out: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const parent = n.parentElement;
      const text = (n.textContent ?? '').trim();
      if (!parent || !text) continue;
      if (parent.closest('code, pre, kbd, samp, script, style, textarea, select, .clip, .request-id')) continue;
      const langOf = parent.closest('[lang]')?.getAttribute('lang');
      if (langOf && langOf !== pageLang) continue;
      if (!parent.checkVisibility()) continue;
      out.push(text);
    }
    return out;
  });
}

/** What of `texts` is of the other language. */
function foreign(lang: 'en' | 'ru', texts: string[]): string[] {
  return texts.filter((raw) => {
    const text = raw
      .replace(/\bhttps?:\/\/\S+/g, '')
      .replace(/\S+@\S+/g, '')
      .replace(/\b[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\b/g, '')
      .replace(PROPER, '');
    return lang === 'en' ? /[\u0400-\u04FF]/.test(text) : ENGLISH.test(text);
  });
}

/** Waits until the page's script has loaded what it shows (no region busy). */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0, undefined, {
    timeout: 20_000,
  });
}

beforeAll(async () => {
  bridge = await startTestBridge();
  host = await startTestHost(kind, bridge.env);
  // An LDAP record, then the bridge goes down: its connection test is refused by a bridge that is down.
  const closed = await freePort();
  const record = await api('/v3/settings/ldap-servers', {
    method: 'POST',
    auth: admin,
    json: { name: 'corp', urls: [`ldap://127.0.0.1:${closed}`], startTls: false, baseDn: 'dc=example,dc=org' },
  });
  expect(record.status, JSON.stringify(record.body)).toBe(201);
  await bridge.stop();
  // Mails: one to an address (written to the outbox on Node, given up on the edge), one to no address.
  const withMail = uniqueLogin('lang');
  const created = await api<{ id: string }>('/v4/users', {
    method: 'POST',
    auth: admin,
    json: { login: withMail, password: 'Str0ng$pass', email: `${withMail}@example.com` },
  });
  expect(created.status).toBe(201);
  userId = created.body.id;
  const noMail = await api('/v4/users', {
    method: 'POST',
    auth: admin,
    json: { login: uniqueLogin('lang'), password: 'Str0ng$pass' },
  });
  expect(noMail.status).toBe(201);
  // A failed sign-in: an audit event with the outcome "failure".
  await api('/v3/login_without_session', { method: 'POST', auth: basic(withMail, 'Wr0ng$pass') });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
});

const PAGES = [
  '',
  'password',
  'sessions',
  'tokens',
  'passkeys',
  'security',
  'admin/overview',
  'admin/sessions',
  'admin/users',
  'admin/user?id=USER',
  'admin/settings',
  'admin/audit',
  'admin/directories',
  'admin/services',
  'admin/webhooks',
  'admin/notifications',
];

describe('console: one language per page', () => {
  for (const [lang, locale] of [
    ['en', 'en-GB'],
    ['ru', 'ru-RU'],
  ] as const) {
    it(`every page in ${lang} has no words of the other language, with data on it`, async () => {
      const tab: ConsoleTab = await newTab(browser, { locale });
      try {
        await signIn(tab, host.url, ADMIN.login, ADMIN.password);
        const found: string[] = [];
        for (const path of PAGES) {
          await openPage(tab, `${host.url}/ui/${path.replace('USER', userId)}`);
          expect(await tab.page.getAttribute('html', 'lang')).toBe(lang);
          await settled(tab.page);
          if (path === 'admin/directories') {
            // The connection test of the record meets the bridge that is down.
            await tab.page.click('#ldap-region button:text-matches("test|проверить", "i")');
            await tab.page.waitForSelector('[id^="ldap-test-"]:not([hidden])', { timeout: 20_000 });
          }
          if (path === 'admin/settings') {
            // "Send a test mail" with no mail server: the outbox file (Node) or nothing tried (edge).
            await tab.page.fill('#mail-test-to', 'ops@example.com');
            await tab.page.click('#mail-test button[type=submit]');
            await tab.page.waitForSelector('#mail-test-message:not([hidden])', { timeout: 20_000 });
          }
          if (path === 'admin/audit') await tab.page.waitForSelector('#audit-region table', { timeout: 20_000 });
          if (path === 'admin/notifications') await tab.page.waitForSelector('#notif-region table');
          for (const text of foreign(lang, await ownWords(tab.page))) found.push(`/ui/${path}: ${text}`);
        }
        expect(found, `text of the other language on ${lang} pages`).toEqual([]);
      } finally {
        await tab.context.close();
      }
    }, 180_000);
  }

  it("the audit log's dates are typed in the page's format: Russian day.month.year, refused in its words", async () => {
    const tab: ConsoleTab = await newTab(browser, { locale: 'en-GB' });
    try {
      await signIn(tab, host.url, ADMIN.login, ADMIN.password);
      // The console in Russian, the browser in English: the fields follow the console.
      await openPage(tab, `${host.url}/ui/admin/audit?lang=ru`);
      const { page } = tab;
      await page.waitForSelector('#audit-region table', { timeout: 20_000 });
      expect(await page.getAttribute('#audit-from', 'placeholder')).toBe('ДД.ММ.ГГГГ ЧЧ:ММ');
      expect(await page.getAttribute('#audit-from', 'type')).toBeNull();
      // From tomorrow on: no event; up to tomorrow: the events are there.
      const tomorrow = new Date(Date.now() + 86_400_000);
      const typed = `${tomorrow.getDate()}.${tomorrow.getMonth() + 1}.${tomorrow.getFullYear()}`;
      await page.fill('#audit-from', typed);
      await page.click('#audit-form button[type=submit]');
      await page.waitForSelector('#audit-region p:text-is("Событий не найдено.")');
      await page.fill('#audit-from', '');
      await page.fill('#audit-to', `${typed} 00:00`);
      await page.click('#audit-form button[type=submit]');
      await page.waitForSelector('#audit-region table');
      await page.fill('#audit-to', '31.02.2026');
      await page.click('#audit-form button[type=submit]');
      await page.waitForSelector('#audit-message:has-text("Это не дата: «31.02.2026»")');
      expect(await page.getAttribute('#audit-to', 'aria-invalid')).toBe('true');
    } finally {
      await tab.context.close();
    }
  }, 120_000);
});

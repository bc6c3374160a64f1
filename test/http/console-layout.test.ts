/**
 * The console's layout in headless Chromium on each host (docs/console.md, "Layout"): on every page
 * with a table, at 1280 and 390 px, in English and Russian, no table header or cell breaks inside a
 * word (each word's Range.getClientRects() lies on one line box), and the header fits the viewport
 * at 1024 px on administrator pages. Screenshots go to test-artifacts/console/layout-*.png.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { launchChromium, newTab, openPage, signIn, type ConsoleTab } from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/console');
const WIDTHS = [1280, 390] as const;
let browser: Browser;
let host: RunningHost;
let userId = '';
const PASSWORD = 'Str0ng$passLayout';
const api = <T = Record<string, any>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

/** A real browser's User-Agent for the sessions the tables show. */
const CHROME_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

beforeAll(async () => {
  host = await startTestHost(kind, {});
  // A user with a long login and a long address (each longer than a table cuts them at), sessions
  // from a browser and API tokens: the rows the tables show.
  const login = uniqueLogin('johnathan.doe-layoutington-');
  const made = await api('/v4/users', {
    method: 'POST',
    auth: admin,
    json: {
      login,
      password: PASSWORD,
      displayName: 'Johnathan Doe-Layoutington',
      email: `j.doe.${login}@example-corporation.com`,
    },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  userId = made.body.id;
  for (const [who, password] of [
    [ADMIN.login, ADMIN.password],
    [login, PASSWORD],
  ] as const) {
    const s = await api('/v3/login', {
      method: 'POST',
      headers: { 'User-Agent': CHROME_UA },
      json: { login: who, password },
    });
    expect(s.status).toBe(200);
    const auth = basic(who, password);
    const tok = await api('/v4/users/me/tokens', { method: 'POST', auth, json: { name: 'deployment-pipeline' } });
    expect(tok.status, JSON.stringify(tok.body)).toBe(201);
  }
  const failed = await api('/v3/login_without_session', { method: 'POST', auth: basic(login, 'Wr0ng$password') });
  expect(failed.status).toBe(401);
  const ldap = await api('/v3/settings/ldap-servers', {
    method: 'POST',
    auth: admin,
    json: {
      name: 'corporate-directory',
      urls: ['ldaps://directory.corporation.example.com:636'],
      bindDn: 'cn=service-account,ou=services,dc=corporation,dc=example,dc=com',
      bindPassword: 'x',
      baseDn: 'ou=people,dc=corporation,dc=example,dc=com',
    },
  });
  expect(ldap.status, JSON.stringify(ldap.body)).toBe(201);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
});

/** The pages with tables, and what makes each show its table. */
const PAGES: Array<{ name: string; path: () => string; ready: (page: Page) => Promise<void> }> = [
  { name: 'sessions', path: () => 'sessions', ready: (p) => table(p, '#sessions-region') },
  { name: 'tokens', path: () => 'tokens', ready: (p) => table(p, '#tokens-region') },
  { name: 'admin-users', path: () => 'admin/users', ready: (p) => table(p, '#users-region') },
  {
    name: 'admin-user',
    path: () => `admin/user?id=${userId}`,
    ready: async (p) => {
      await table(p, '#user-sessions');
      await table(p, '#user-tokens');
    },
  },
  { name: 'admin-notifications', path: () => 'admin/notifications', ready: (p) => settled(p, '#notif-region') },
  {
    name: 'admin-audit',
    path: () => 'admin/audit',
    ready: async (p) => {
      await p.waitForSelector('#audit-type option[value=user_activity]', { state: 'attached' });
      await p.selectOption('#audit-type', 'user_activity');
      await p.click('#audit-form button[type=submit]');
      await table(p, '#audit-region');
      await p.click('#audit-fields-load');
      await table(p, '#audit-fields');
    },
  },
  {
    name: 'admin-directories',
    path: () => 'admin/directories',
    ready: (p) => p.waitForSelector('#ldap-region [data-record=corporate-directory]').then(() => undefined),
  },
];

async function table(page: Page, region: string): Promise<void> {
  await page.waitForSelector(`${region} table`, { timeout: 20_000 });
}

async function settled(page: Page, region: string): Promise<void> {
  await page.waitForSelector(`${region}:not([aria-busy])`, { timeout: 20_000 });
}

/**
 * Words of table headers and cells that the layout breaks across lines: for each text node in a
 * `th` or `td`, each whitespace-separated word's client rects must share one line (same top).
 */
function brokenWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const broken: string[] = [];
    for (const cell of document.querySelectorAll('main th, main td')) {
      // Hidden cells, and the phone layout's visually hidden column heads (1 px, clipped), are not read.
      const boxes = [cell, ...(cell.closest('thead') ? [cell.closest('thead')!] : [])].map((e) =>
        e.getBoundingClientRect(),
      );
      if (!(cell as HTMLElement).offsetParent || boxes.some((b) => b.width < 2 || b.height < 2)) continue;
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        // A word: up to a space, or a hyphen ("sign-in" may break after its hyphen, as typesetting does).
        for (const m of text.matchAll(/[^\s-]+-?/g)) {
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (tops.size > 1) broken.push(`${m[0]} (${tops.size} lines, ${cell.tagName.toLowerCase()})`);
        }
      }
    }
    return broken;
  });
}

describe('console layout: tables and header', () => {
  for (const locale of ['en-GB', 'ru-RU']) {
    it(`no table breaks inside a word at 1280 and 390 px (${locale}); the header fits at 1024 px`, async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const tab: ConsoleTab = await newTab(browser, { locale });
      await signIn(tab, host.url, ADMIN.login, ADMIN.password);
      const { page } = tab;
      const lang = locale.slice(0, 2);
      const failures: string[] = [];
      for (const p of PAGES) {
        await page.setViewportSize({ width: WIDTHS[0], height: 900 });
        await openPage(tab, `${host.url}/ui/${p.path()}`);
        await p.ready(page);
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 900 });
          const broken = await brokenWords(page);
          if (broken.length) failures.push(`${p.name} ${lang} ${width}px: ${broken.join(', ')}`);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          if (overflow > 0) failures.push(`${p.name} ${lang} ${width}px: the page scrolls sideways by ${overflow}px`);
          await page.screenshot({
            path: join(ARTIFACTS, `layout-${kind}-${p.name}-${lang}-${width}.png`),
            fullPage: true,
          });
        }
        if (p.name.startsWith('admin-')) {
          await page.setViewportSize({ width: 1024, height: 900 });
          await page.evaluate(() => window.scrollTo(0, 0));
          const header = await page.evaluate(() => {
            const top = document.querySelector('header.top') as HTMLElement;
            const out = [...top.querySelectorAll('a, button, span')].filter((e) => {
              const r = e.getBoundingClientRect();
              return r.width > 0 && (r.right > window.innerWidth || r.left < 0);
            });
            return { scroll: top.scrollWidth - top.clientWidth, out: out.map((e) => e.textContent?.trim()) };
          });
          if (header.scroll > 0 || header.out.length)
            failures.push(`${p.name} ${lang} 1024px: the header overflows (${JSON.stringify(header)})`);
          await page.screenshot({ path: join(ARTIFACTS, `layout-${kind}-${p.name}-${lang}-1024-header.png`) });
        }
      }
      expect(failures).toEqual([]);
      expect(tab.problems).toEqual([]);
      await tab.context.close();
    });
  }
});

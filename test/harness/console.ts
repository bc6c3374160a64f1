/**
 * Driving the web console in Debian's chromium (playwright-core) for the console suites: pages in
 * their own browser contexts (own cookies), CSP violations and page errors collected, axe-core
 * (from node_modules, evaluated through the DevTools protocol so the page's CSP stays as served)
 * and screenshots at desktop and phone widths into test-artifacts/console/ (gitignored).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
/** Desktop and phone widths every page is checked and photographed at. */
export const WIDTHS = [1280, 360] as const;
const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/console');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Starts Debian's headless chromium: the one launch of every browser suite (console, docs, error tracking). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (see .ci/run)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A console tab: its page, and what went wrong in it (CSP refusals, uncaught errors). */
export interface ConsoleTab {
  context: BrowserContext;
  page: Page;
  problems: string[];
}

/** A new browser context (its own cookies) and page, recording CSP violations and page errors. */
export async function newTab(browser: Browser, o: { width?: number; locale?: string } = {}): Promise<ConsoleTab> {
  const context = await browser.newContext({
    viewport: { width: o.width ?? WIDTHS[0], height: 900 },
    locale: o.locale ?? 'en-GB',
    extraHTTPHeaders: { 'Accept-Language': o.locale ?? 'en-GB' },
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  return { context, page, problems };
}

/** Goes to `url` and waits until the console's script has wired the page (`<body data-ready>`). */
export async function openPage(tab: ConsoleTab, url: string): Promise<void> {
  // The document, then the script's own mark: the load event also waits for every image and font,
  // which took over 30 s once on a loaded machine.
  try {
    await tab.page.goto(url, { waitUntil: 'domcontentloaded', timeout: 30_000 });
  } catch (err) {
    if (!(err instanceof Error && err.name === 'TimeoutError')) throw err;
    // Once in CI, with both HTTP projects loading the machine, a navigation waited 45 s for a page
    // that the next test's navigation got at once. Told apart: if the service answers the same
    // address to a plain request now, the browser was stalled, and it navigates once more; if
    // not, the service is at fault and the test fails saying so.
    const probe = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'manual' }).then(
      (res) => {
        void res.body?.cancel();
        return `${res.status}`;
      },
      (e: unknown) => `no answer (${String(e)})`,
    );
    if (!/^\d+$/.test(probe) || Number(probe) >= 500)
      throw new Error(`${err.message}\nthe service, asked the same without a browser: ${probe}`);
    console.warn(`openPage: Chromium gave up on ${url} after 30 s; the service answered ${probe}: navigating again`);
    await tab.page.goto(url, { waitUntil: 'domcontentloaded', timeout: 30_000 });
  }
  await waitReady(tab.page);
}

/** Waits for the page's script to finish starting (after a navigation). */
export async function waitReady(page: Page): Promise<void> {
  await page.waitForSelector('body[data-ready]', { state: 'attached', timeout: 20_000 });
}

/** Violations of impact serious or critical that axe-core finds on the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(o: unknown): Promise<{
            violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe;
    return axe.run({ resultTypes: ['violations'] });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * Checks the page at each width (no serious or critical axe violation, no horizontal scrolling,
 * no CSP violation or page error so far) and keeps a full-page screenshot of each:
 * test-artifacts/console/<host>-<name>-<width>.png.
 */
export async function checkPage(tab: ConsoleTab, host: string, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const { page } = tab;
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    expect(await axeViolations(page), `${name} at ${width} px`).toEqual([]);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${name} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTIFACTS, `${host}-${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: WIDTHS[0], height: 900 });
  expect(tab.problems, `${name}: CSP violations or page errors`).toEqual([]);
}

/** Signs in through the console's sign-in page and waits for the page it leads to. */
export async function signIn(
  tab: ConsoleTab,
  base: string,
  login: string,
  password: string,
  ldapServer?: string,
): Promise<void> {
  await openPage(tab, `${base}/ui/login`);
  await tab.page.fill('#signin-login', login);
  await tab.page.fill('#signin-password', password);
  if (ldapServer) await tab.page.selectOption('#signin-server', ldapServer);
  await Promise.all([
    tab.page.waitForURL((u) => !u.pathname.endsWith('/ui/login'), { timeout: 20_000 }),
    tab.page.click('#signin-form button[type=submit]'),
  ]);
  await waitReady(tab.page);
}

/** The text of the message region `selector` once it shows something. */
export async function messageOf(page: Page, selector: string): Promise<string> {
  await page.waitForSelector(`${selector}:not([hidden])`, { timeout: 20_000 });
  return (await page.textContent(selector)) ?? '';
}

/**
 * "Open the mail" on the notifications page (docs/console.md): with no mail server, the Node host writes
 * each mail to its development outbox, and the page shows one in Chromium, its From, To, Subject, Date and
 * text (the welcome mail's link among it), while the .eml stays a download. The edge has no outbox.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { checkPage, launchChromium, newTab, openPage, signIn } from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
let browser: Browser;
let host: RunningHost;

const api = <T = Record<string, any>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

describe.runIf(kind === 'node')('console: a mail of the outbox opened on the notifications page', () => {
  beforeAll(async () => {
    host = await startTestHost(kind, {});
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await host?.stop();
  });

  it('"Open the mail" shows its headers and text; the .eml is still a download', async () => {
    const login = uniqueLogin('nt');
    const email = `${login}@example.com`;
    const made = await api('/v4/users', { method: 'POST', auth: admin, json: { login, email } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await expect
      .poll(
        async () =>
          (await api<{ items: Array<{ status: string }> }>(`/v4/notifications?recipient=${email}`, { auth: admin }))
            .body.items[0]?.status,
        { timeout: 20_000 },
      )
      .toBe('outbox');
    const tab = await newTab(browser);
    await signIn(tab, host.url, ADMIN.login, ADMIN.password);
    await openPage(tab, `${host.url}/ui/admin/notifications?recipient=${email}`);
    const { page } = tab;
    await page.fill('#notif-recipient', email);
    await page.click('#notif-search button[type=submit]');
    const row = page.locator('#notif-region tbody tr', { hasText: email });
    await row.waitFor();
    const download = row.locator('a[download]');
    expect(await download.textContent()).toBe('Download (.eml)');
    expect(await download.getAttribute('href')).toMatch(/\/v4\/notifications\/[0-9a-f-]{36}\/message$/);
    await row.locator('button', { hasText: 'Open the mail' }).click();
    const viewer = page.locator('#notif-mail');
    await viewer.locator('pre.mail-text').waitFor();
    const facts = await viewer.locator('dl').textContent();
    expect(facts).toContain(email);
    expect(facts).toContain('Для вас создана учётная запись'); // the subject, in the mail's language (ru)
    expect(facts).toMatch(/From.*@/);
    expect(facts).toMatch(/Date.*20\d\d/);
    const text = (await viewer.locator('pre.mail-text').textContent()) ?? '';
    expect(text).toContain(`Здравствуйте, ${login}!`);
    expect(text).toMatch(new RegExp(`${host.url}/ui/reset-password#token=[A-Za-z0-9_-]{40,}`));
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('notif-mail');
    await checkPage(tab, kind, 'admin-notifications-mail');
    await tab.context.close();
  });
});

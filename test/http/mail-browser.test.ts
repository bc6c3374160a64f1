/**
 * "Send a test mail" in the console, in headless Chromium, on each host: an administrator signs in,
 * opens the settings page, names a recipient and clicks the button below the Mail settings; the
 * page says in words that the server accepted the mail (and the SMTP test server has it), then, with
 * a wrong port saved, at which step no answer came. Nothing is set by the test but what a user types.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { checkPage, launchChromium, messageOf, newTab, openPage, signIn, type ConsoleTab } from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestSmtp, type TestSmtp } from '../harness/smtp.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
let browser: Browser;
let host: RunningHost;
let bridge: TestBridge;
let smtp: TestSmtp;
let tab: ConsoleTab;

const api = <T = Record<string, any>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

beforeAll(async () => {
  smtp = await startTestSmtp({ tls: 'starttls', auth: { user: 'mailer', pass: 'M@il-pass' } });
  bridge = await startTestBridge({ mail: { ca: smtp.ca } });
  host = await startTestHost(kind, {
    ...bridge.env,
    EMAIL_HOST: '127.0.0.1',
    EMAIL_PORT: String(smtp.port),
    EMAIL_HOST_USER: 'mailer',
    EMAIL_HOST_PASSWORD: 'M@il-pass',
    EMAIL_FROM: 'Auth service <noreply@auth.test>',
  });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await host?.stop();
  await bridge?.stop();
  await smtp?.stop();
});

describe('console: send a test mail', () => {
  for (const locale of ['en-GB', 'ru-RU'] as const) {
    it(`the button reports the result in words (${locale})`, async () => {
      tab = await newTab(browser, { locale });
      await signIn(tab, host.url, ADMIN.login, ADMIN.password);
      const { page } = tab;
      await openPage(tab, `${host.url}/ui/admin/settings`);
      await page.waitForSelector('#mail-test');
      const to = `${uniqueLogin('bt')}@example.com`;
      await page.fill('#mail-test-to', to);
      await page.click('#mail-test button[type=submit]');
      const said = await messageOf(page, '#mail-test-message');
      expect(said).toContain(
        locale === 'en-GB' ? `Sent: 127.0.0.1:${smtp.port} accepted the mail to ${to}` : 'Отправлено',
      );
      expect(said).toMatch(/250/);
      await expect.poll(() => smtp.received.some((m) => m.to.includes(to)), { timeout: 20_000 }).toBe(true);
      await checkPage(tab, kind, `admin-settings-mail-test-${locale}`);
      await tab.context.close();
    });
  }

  it('a wrong port saved: the page says no answer came at the step "connect"', async () => {
    const saved = await api('/v3/settings', {
      method: 'PATCH',
      auth: admin,
      json: { values: { EMAIL_PORT: 1, EMAIL_HOST_PASSWORD: 'M@il-pass' } },
    });
    expect(saved.status).toBe(200);
    try {
      tab = await newTab(browser);
      await signIn(tab, host.url, ADMIN.login, ADMIN.password);
      await openPage(tab, `${host.url}/ui/admin/settings`);
      await tab.page.fill('#mail-test-to', 'ops@example.com');
      await tab.page.click('#mail-test button[type=submit]');
      expect(await messageOf(tab.page, '#mail-test-message')).toContain(
        'No answer from 127.0.0.1:1 at the step "connect"',
      );
      await tab.context.close();
    } finally {
      await api('/v3/settings/EMAIL_PORT', { method: 'DELETE', auth: admin });
    }
  });
});

/**
 * The console's audit page on the embedded default (no log store configured: the embedded audit
 * log, docs/audit-logs-embedded.md), in headless Chromium on each host, driven as a person does:
 * the page says where the events are kept, a failed login just made is found by the simple search
 * and its filters, its full record shows, the query DSL runs its subset (and names what needs the
 * log store), and the fields are listed. test/http/console-admin.test.ts covers the page with a log store.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, uniqueLogin } from '../harness/client.js';
import { launchChromium, messageOf, newTab, openPage, signIn, type ConsoleTab } from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
let browser: Browser;
let host: RunningHost;
let tab: ConsoleTab;
const stranger = uniqueLogin('nobody');

beforeAll(async () => {
  // The default: LOGSTORE_URLS is its placeholder, no bridge.
  host = await startTestHost(kind, {});
  browser = await launchChromium();
  tab = await newTab(browser);
  await signIn(tab, host.url, ADMIN.login, ADMIN.password);
  // A failed login from another client (the event the issue could not see anywhere).
  const failed = await callJson('/v3/login_without_session', {
    base: host.url,
    method: 'POST',
    auth: basic(stranger, 'Wr0ng$password'),
  });
  expect(failed.status).toBe(401);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
});

describe('console: audit log on the embedded default', () => {
  it(
    "opens on the last events without pressing Find; the overview's failed sign-ins open on the " + 'failures',
    async () => {
      const { page } = tab;
      await openPage(tab, `${host.url}/ui/admin/overview`);
      await Promise.all([
        page.waitForURL(/\/ui\/admin\/audit\?type=user_activity&outcome=failure$/),
        page.click('a[href$="admin/audit?type=user_activity&outcome=failure"]'),
      ]);
      await page.waitForSelector('#audit-region table', { timeout: 20_000 });
      expect(await page.inputValue('#audit-outcome')).toBe('failure');
      const found = (await page.textContent('#audit-region')) ?? '';
      expect(found).toContain('login.failure');
      expect(found).toContain(stranger);
      expect(found).not.toContain('login.success');
    },
  );

  it('says where events are kept, finds a failed login, shows it, runs the DSL subset, lists fields', async () => {
    const { page } = tab;
    await openPage(tab, `${host.url}/ui/admin/audit`);
    expect(await messageOf(page, '#page-message')).toContain('kept in this database for 30 days');
    await page.waitForSelector('#audit-type option[value=user_activity]', { state: 'attached' });
    await page.selectOption('#audit-type', 'user_activity');
    await page.fill('#audit-user', stranger);
    await page.selectOption('#audit-outcome', 'failure');
    await page.click('#audit-form button[type=submit]');
    await page.waitForSelector('#audit-region table');
    const found = (await page.textContent('#audit-region')) ?? '';
    expect(found).toContain('login.failure');
    expect(found).toContain(stranger);
    expect(found).toMatch(/Events \(newest first\), 1 of 1/);
    await page.click('#audit-region tbody tr:first-child button');
    await page.waitForSelector('#audit-record-box:not([hidden])');
    const record = JSON.parse((await page.textContent('#audit-record')) ?? '{}');
    expect(record).toMatchObject({
      event: { type: 'login.failure', outcome: 'failure' },
      subject: { login: stranger },
    });

    // The administrator's own sign-in is there too: the filter by type alone finds it.
    await page.fill('#audit-user', '');
    await page.selectOption('#audit-outcome', '');
    await page.fill('#audit-event-types', 'login.success');
    await page.click('#audit-form button[type=submit]');
    await page.waitForFunction(
      (login) => document.querySelector('#audit-region')?.textContent?.includes(login),
      ADMIN.login,
      { timeout: 20_000 },
    );

    await page.fill('#audit-query-body', JSON.stringify({ query: { term: { 'event.type': 'login.failure' } } }));
    await page.click('#audit-query button[type=submit]');
    await page.waitForSelector('#audit-query-answer:not([hidden])');
    expect(await page.textContent('#audit-query-answer')).toContain(stranger);
    await page.fill('#audit-query-body', JSON.stringify({ aggs: { t: { terms: { field: 'event.type.keyword' } } } }));
    await page.click('#audit-query button[type=submit]');
    expect(await messageOf(page, '#audit-query-message')).toContain('needs the log store');

    await page.click('#audit-fields-load');
    await page.waitForSelector('#audit-fields table');
    expect(await page.textContent('#audit-fields')).toContain('event.type');
    expect(tab.problems).toEqual([]);
  });
});

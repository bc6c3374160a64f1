/**
 * The web console's administrator pages in headless Chromium, on each host (its own host with a
 * bridge and the test log store, since settings change): users (search, filters, pages, create with
 * the API's detail on a refusal, edit, block and unblock, password reset, super-access countdown,
 * sessions, tokens), settings (a Security setting edited and applied at the next login, validation,
 * secrets write-only, reset), the unlock that follows, the audit viewer finding those events, LDAP
 * server records (test connection step by step against slapd) and identity providers, the
 * notification history, and a non-administrator who gets the 403 in the page's words. Every page passes axe-core
 * (no serious or critical violation) at 1280 and 360 px and is photographed (test-artifacts/console/).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import {
  axeViolations,
  checkPage,
  launchChromium,
  messageOf,
  newTab,
  openPage,
  signIn,
  type ConsoleTab,
} from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';
import { startSlapd, type Slapd } from '../harness/slapd.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Str0ng$pass';
const FIREFOX_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0';
let browser: Browser;
let host: RunningHost;
let bridge: TestBridge;
let store: TestLogStore;
let tab: ConsoleTab;
let slapd: Slapd | undefined;

type Json = Record<string, any>;
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const ui = (path = '') => `${host.url}/ui/${path}`;
const loginWithoutSession = (login: string, password: string) =>
  api('/v3/login_without_session', { method: 'POST', auth: basic(login, password) });

/** The login the users test creates through the console (the later tests use it). */
const person = { login: uniqueLogin('cad'), id: '', password: PASSWORD };

beforeAll(async () => {
  store = await startTestLogStore({ nodes: 1 });
  bridge = await startTestBridge({ logstore: { ca: store.caPem } });
  host = await startTestHost(kind, { ...bridge.env, LOGSTORE_VERIFY_CERTS: 'True' });
  const r = await api('/v3/settings', {
    method: 'PATCH',
    auth: admin,
    json: { values: { LOGSTORE_URLS: store.urls.join(';') } },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  browser = await launchChromium();
  tab = await newTab(browser);
  await signIn(tab, host.url, ADMIN.login, ADMIN.password);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  await Promise.all([bridge?.stop(), store?.stop(), slapd?.stop()]);
});

/** Opens the user's page from the users list (search by login). */
async function openUser(page: Page, login: string): Promise<void> {
  await openPage(tab, ui(`admin/users?login=${login}`));
  await Promise.all([page.waitForURL(/\/ui\/admin\/user\?id=/), page.click(`#users-region a:text-is("${login}")`)]);
  await page.waitForSelector('body[data-ready]', { state: 'attached' });
  await page.waitForSelector('#user-panels:not([hidden])');
}

describe('console: users', () => {
  it('lists, filters and pages the users; creates one (the API detail on a refusal)', async () => {
    const { page } = tab;
    const prefix = uniqueLogin('pg');
    for (let i = 0; i < 21; i++) {
      const r = await api('/v4/users', {
        method: 'POST',
        auth: admin,
        json: {
          login: `${prefix}-${String(i).padStart(2, '0')}`,
          password: PASSWORD,
          role: i === 3 ? 'auditor' : 'user',
        },
      });
      expect(r.status).toBe(201);
    }
    await openPage(tab, ui('admin/users'));
    expect(await page.isVisible('#console-nav a[href$="/ui/admin/users"]')).toBe(true);
    await page.fill('#users-q', prefix);
    await page.click('#users-search button[type=submit]');
    await page.waitForSelector('#users-region caption');
    expect(await page.textContent('#users-region caption')).toBe('Users 1–20 of 21');
    expect(await page.isDisabled('#users-prev')).toBe(true);
    await page.click('#users-next');
    await page.waitForFunction(
      () => document.querySelector('#users-region caption')?.textContent === 'Users 21–21 of 21',
    );
    expect(await page.textContent('#users-region tbody')).toContain(`${prefix}-20`);
    expect(page.url()).toContain('offset=20');
    await page.selectOption('#users-role', 'auditor');
    await page.click('#users-search button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#users-region caption')?.textContent === 'Users 1–1 of 1');
    expect(await page.textContent('#users-region tbody')).toContain(`${prefix}-03`);
    await checkPage(tab, kind, 'admin-users');

    // The policy is shown before any refusal, and a new account must change its password by default.
    expect(await page.isVisible('#create-password-policy li[data-rule=min_length]')).toBe(true);
    expect(await page.textContent('#create-password-policy')).toContain('length: at least 8');
    expect(await page.isChecked('#create-must')).toBe(true);
    // A refused password: one message naming the broken rules in words, and nothing is created.
    await page.fill('#create-login', person.login);
    await page.fill('#create-display', 'Console Admin Person');
    await page.fill('#create-password', 'short');
    await page.click('#user-create button[type=submit]');
    const refused = await messageOf(page, '#user-create-message');
    expect(refused).toContain('The password does not meet these rules:');
    expect(refused.split('at least 8')).toHaveLength(2);
    expect(await page.getAttribute('#user-create-message', 'role')).toBe('alert');
    expect((await api(`/v4/users?login=${person.login}`, { auth: admin })).body.total).toBe(0);
    await page.fill('#create-password', PASSWORD);
    await page.uncheck('#create-must');
    await page.click('#user-create button[type=submit]');
    await page.waitForSelector('#user-create-message.message-success');
    expect(await page.textContent('#user-create-message')).toContain(`User ${person.login} is created.`);
    const made = await api<{ items: Json[] }>(`/v4/users?login=${person.login}`, { auth: admin });
    expect(made.body.items[0]).toMatchObject({
      login: person.login,
      displayName: 'Console Admin Person',
      role: 'user',
    });
    person.id = made.body.items[0]!.id;
  });

  it(
    'edits, blocks and unblocks, ends sessions, revokes tokens, resets the password, grants ' + 'super-access',
    async () => {
      const { page } = tab;
      // The user signs in (a session) and has an API token.
      const session = await api('/v3/login', { method: 'POST', json: { login: person.login, password: PASSWORD } });
      expect(session.status).toBe(200);
      const cookie = (session.res.headers.get('set-cookie') ?? '').split(';')[0]!;
      const token = await api('/v4/users/me/tokens', {
        method: 'POST',
        auth: basic(person.login, PASSWORD),
        json: { name: 'console-test-token' },
      });
      expect(token.status).toBe(201);
      await openUser(page, person.login);
      expect(await page.textContent('#user-facts')).toContain('Console Admin Person');
      await page.waitForSelector('#user-sessions table');
      await page.waitForSelector('#user-tokens table');
      expect(await page.textContent('#user-tokens')).toContain('console-test-token');
      await checkPage(tab, kind, 'admin-user');

      await page.fill('#edit-display', 'Renamed Person');
      await page.fill('#edit-limit', '3');
      await page.click('#user-edit button[type=submit]');
      await page.waitForSelector('#user-edit-message.message-success');
      expect((await api(`/v4/users/${person.id}`, { auth: admin })).body).toMatchObject({
        displayName: 'Renamed Person',
        sessionLimit: 3,
      });

      // Block asks first (an accessible dialog); cancelled, nothing changes.
      await page.click('#user-block');
      await page.waitForSelector('dialog.confirm[open]');
      expect(await page.textContent('dialog.confirm')).toContain(`Block ${person.login}?`);
      await page.keyboard.press('Escape');
      await page.waitForSelector('dialog.confirm', { state: 'detached' });
      expect((await api(`/v4/users/${person.id}`, { auth: admin })).body.status).toBe('active');
      await page.click('#user-block');
      await page.click('dialog.confirm button.danger');
      await page.waitForSelector('#user-actions-message.message-success');
      expect(await page.isVisible('#user-unblock')).toBe(true);
      expect(await page.textContent('#user-facts')).toContain('blocked');
      expect((await api(`/v4/users/${person.id}`, { auth: admin })).body.status).toBe('blocked');
      expect((await loginWithoutSession(person.login, PASSWORD)).status).not.toBe(200);
      // The block ended the session for good.
      expect((await api('/v4/users/me', { headers: { Cookie: cookie } })).status).toBe(401);
      await page.click('#user-unblock');
      await page.waitForFunction(() =>
        document.querySelector('#user-actions-message')?.textContent?.includes('unblocked'),
      );
      expect((await api(`/v4/users/${person.id}`, { auth: admin })).body.status).toBe('active');
      expect((await loginWithoutSession(person.login, PASSWORD)).status).toBe(200);

      // A new session, ended from the page.
      expect(
        (
          await api('/v3/login', {
            method: 'POST',
            headers: { 'User-Agent': FIREFOX_MAC },
            json: { login: person.login, password: PASSWORD },
          })
        ).status,
      ).toBe(200);
      await openUser(page, person.login);
      await page.waitForSelector('#user-sessions table');
      // The client in words, the raw header only in the title.
      expect(await page.textContent('#user-sessions tbody')).toContain('Firefox 133 on macOS');
      expect(await page.textContent('#user-sessions tbody')).not.toContain('Mozilla/');
      await page.click('#user-sessions button.danger');
      await page.click('dialog.confirm button.danger');
      await page.waitForSelector('#user-sessions-message.message-success');
      expect((await api(`/v4/users/${person.id}/sessions`, { auth: admin })).body.items).toHaveLength(0);
      await page.click('#user-tokens button.danger');
      await page.click('dialog.confirm button.danger');
      await page.waitForSelector('#user-tokens-message.message-success');
      expect((await api(`/v4/users/${person.id}/tokens`, { auth: admin })).body.items).toHaveLength(0);

      // Password reset: the policy refusal's detail, then the reset (must change at the next login).
      await page.fill('#reset-password', 'abc');
      await page.click('#user-reset button[type=submit]');
      expect(await messageOf(page, '#user-reset-message')).toContain('length: at least 8');
      await page.fill('#reset-password', 'N3w$ecretPw');
      await page.click('#user-reset button[type=submit]');
      await page.waitForSelector('#user-reset-message.message-success');
      expect((await api(`/v4/users/${person.id}`, { auth: admin })).body.mustChangePassword).toBe(true);
      // Not reused (the password history): a third one, without the change at the next login, for the tests below.
      person.password = 'Thr3e$Passw';
      const reset = await api(`/v4/users/${person.id}/password`, {
        method: 'POST',
        auth: admin,
        json: { password: person.password, mustChangePassword: false },
      });
      expect(reset.status, JSON.stringify(reset.body)).toBe(204);

      // Super-access: granted for 5 minutes, counted down each second, then ended.
      await page.fill('#su-minutes', '5');
      await page.click('#user-su button[type=submit]');
      await page.waitForSelector('#user-su-message.message-success');
      const first = await page.textContent('#user-su-state');
      expect(first).toMatch(/^active, [45]:\d\d left/);
      await page.waitForFunction((before) => document.querySelector('#user-su-state')?.textContent !== before, first, {
        timeout: 5000,
      });
      expect((await api(`/v4/users/${person.id}`, { auth: admin })).body.superAccessUntil).not.toBeNull();
      await page.click('#su-revoke');
      await page.waitForFunction(() => document.querySelector('#user-su-state')?.textContent === 'none');
      expect((await api(`/v4/users/${person.id}`, { auth: admin })).body.superAccessUntil).toBeNull();
      expect(tab.problems).toEqual([]);
    },
  );
});

describe('console: settings', () => {
  it('shows the groups with type, bounds, default and source; secrets write-only; a bad value is ' +
    'refused with its detail', async () => {
    const { page } = tab;
    await openPage(tab, ui('admin/settings'));
    await page.waitForSelector('form.settings-group');
    const groups = await page.$$eval('form.settings-group h2', (hs) => hs.map((h) => h.textContent));
    expect(groups).toEqual(expect.arrayContaining(['Security', 'Mail']));
    const meta = await page.textContent('#set-AUTH_FAILED_COUNT-meta');
    expect(meta).toContain('whole number');
    expect(meta).toContain('Default: 3');
    expect(meta).toContain('Source: default');
    expect(await page.getAttribute('#set-AUTH_FAILED_COUNT', 'max')).toBe('100');
    expect(await page.getAttribute('#set-EMAIL_HOST_PASSWORD', 'type')).toBe('password');
    expect(await page.inputValue('#set-EMAIL_HOST_PASSWORD')).toBe('');
    // A fixed set of values is a choice: a select, showing the value in force.
    for (const name of ['LOG_LEVEL', 'ACCESS_LOG_LEVEL']) {
      expect(await page.$eval(`#set-${name}`, (e) => e.tagName), name).toBe('SELECT');
    }
    expect(await page.inputValue('#set-LOG_LEVEL')).toMatch(/^(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)$/);
    // A section index of anchor links, one per group; human labels, the variable as secondary text.
    const index = await page.$$eval('nav.settings-index a', (as) =>
      as.map((a) => [a.textContent, a.getAttribute('href')]),
    );
    expect(index).toEqual(
      expect.arrayContaining([
        ['Security', '#settings-security'],
        ['Mail', '#settings-mail'],
      ]),
    );
    expect(await page.isVisible('#settings-security h2')).toBe(true);
    const label = page.locator('label[for=set-AUTH_FAILED_COUNT]');
    expect(await label.textContent()).toContain('Failed sign-ins before a lock');
    expect(await label.locator('code').textContent()).toBe('AUTH_FAILED_COUNT');
    // A list is typed one value per line; nothing beside it says comma-separated.
    const symbols = (await page.textContent('[data-setting=USER_PASSWORD_SPECIAL_SYM]')) ?? '';
    expect(symbols).toContain('One value per line');
    expect(symbols).not.toContain('comma-separated');
    await checkPage(tab, kind, 'admin-settings');
    // In Russian (the language switch, same session): labels and descriptions translated.
    await openPage(tab, ui('admin/settings?lang=ru'));
    await page.waitForSelector('#set-AUTH_FAILED_COUNT');
    expect(await page.textContent('label[for=set-AUTH_FAILED_COUNT]')).toContain('Неудачных входов до блокировки');
    expect(await page.textContent('#set-AUTH_FAILED_COUNT-desc')).toMatch(/^[^a-z]*$/);
    expect(await page.textContent('nav.settings-index')).toContain('Безопасность');
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: `test-artifacts/console/${kind}-admin-settings-ru-1280.png`, fullPage: true });
    await openPage(tab, ui('admin/settings?lang=en'));
    await page.waitForSelector('#set-AUTH_FAILED_COUNT');

    const security = page.locator('form.settings-group', { has: page.locator('#set-AUTH_FAILED_COUNT') });
    // Out of bounds: the browser refuses it already (the control carries min and max).
    await page.fill('#set-AUTH_FAILED_COUNT', '0');
    await security.locator('button[type=submit]').last().click();
    expect(await page.$eval('#set-AUTH_FAILED_COUNT', (i) => (i as HTMLInputElement).validity.rangeUnderflow)).toBe(
      true,
    );
    await page.fill('#set-AUTH_FAILED_COUNT', '3');
    // In bounds but in conflict (minimum length over the maximum): the API's detail, the control marked.
    await page.fill('#set-USER_PASSWORD_MIN_LENGTH', '30');
    await security.locator('button[type=submit]').last().click();
    await page.waitForSelector('#set-USER_PASSWORD_MIN_LENGTH[aria-invalid=true]');
    expect(await security.locator('.message-error').textContent()).toContain('USER_PASSWORD_MIN_LENGTH');
    expect(
      (await api<{ items: Json[] }>('/v3/settings', { auth: admin })).body.items.find(
        (s) => s.name === 'USER_PASSWORD_MIN_LENGTH',
      ),
    ).toMatchObject({ source: 'default' });
    expect(
      (await api<{ items: Json[] }>('/v3/settings', { auth: admin })).body.items.find(
        (s) => s.name === 'AUTH_FAILED_COUNT',
      ),
    ).toMatchObject({ value: 3, source: 'default' });
  }, 120_000);

  it('a Security setting edited here applies at the next login (AUTH_FAILED_COUNT 1: one failure ' +
    'locks); unlock; reset', async () => {
    const { page } = tab;
    await openPage(tab, ui('admin/settings'));
    await page.waitForSelector('#set-AUTH_FAILED_COUNT');
    const security = page.locator('form.settings-group', { has: page.locator('#set-AUTH_FAILED_COUNT') });
    await page.fill('#set-AUTH_FAILED_COUNT', '1');
    await security.locator('button[type=submit]').last().click();
    await page.waitForFunction(() => /Saved: AUTH_FAILED_COUNT/.test(document.body.textContent ?? ''));
    expect(await page.textContent('#set-AUTH_FAILED_COUNT-meta')).toContain('Source: console (saved)');

    expect((await loginWithoutSession(person.login, 'Wr0ng$pass')).body.code).toBe('INVALID_CREDENTIALS');
    expect((await loginWithoutSession(person.login, person.password)).body.code).toBe('ACCOUNT_LOCKED');

    await openUser(page, person.login);
    expect(await page.isVisible('#user-unlock')).toBe(true);
    await page.click('#user-unlock');
    await page.waitForFunction(() =>
      document.querySelector('#user-actions-message')?.textContent?.includes('lock is ended'),
    );
    expect(await page.isHidden('#user-unlock')).toBe(true);
    expect((await loginWithoutSession(person.login, person.password)).status).toBe(200);

    await openPage(tab, ui('admin/settings'));
    await page.waitForSelector('#set-AUTH_FAILED_COUNT');
    await page.click('[data-setting=AUTH_FAILED_COUNT] button[aria-label="Reset AUTH_FAILED_COUNT"]');
    await page.waitForFunction(() =>
      /AUTH_FAILED_COUNT is back to its default value/.test(document.body.textContent ?? ''),
    );
    expect(await page.inputValue('#set-AUTH_FAILED_COUNT')).toBe('3');
    expect(
      (await api<{ items: Json[] }>('/v3/settings', { auth: admin })).body.items.find(
        (s) => s.name === 'AUTH_FAILED_COUNT',
      ),
    ).toMatchObject({ value: 3, source: 'default' });
  }, 120_000);
});

describe('console: audit log', () => {
  it(
    'finds the events just made, pages with the cursor, shows the full record, runs a query DSL and ' +
      'lists the fields',
    async () => {
      const { page } = tab;
      await openPage(tab, ui('admin/audit'));
      await page.waitForSelector('#audit-type option[value=crud_admin]', { state: 'attached' });
      await page.selectOption('#audit-type', 'crud_admin');
      await page.fill('#audit-user', person.login);
      // Shipping runs after the responses: search until the unlock made above is in the store.
      const found = await eventually(
        async () => {
          await page.click('#audit-form button[type=submit]');
          await page.waitForFunction(
            () =>
              document.querySelector('#audit-region')?.textContent ||
              !document.querySelector('#audit-message')?.hasAttribute('hidden'),
          );
          const text = (await page.textContent('#audit-region')) ?? '';
          if (text.includes('account.unlocked')) return text;
          // A request that kicks the shipping again.
          await api('/v3/logout', { method: 'POST' });
          throw new Error(`events not found: ${text} ${await page.textContent('#audit-message')}`);
        },
        { timeoutMs: 40_000, intervalMs: 100, what: 'the unlock in the audit page' },
      );
      for (const type of ['user.created', 'account.blocked', 'account.unblocked', 'account.unlocked'])
        expect(found).toContain(type);
      await checkPage(tab, kind, 'admin-audit');

      // Paging: one event per page, then the cursor's next page adds the second.
      await page.fill('#audit-size', '1');
      await page.click('#audit-form button[type=submit]');
      await page.waitForFunction(() =>
        /Events \(newest first\), 1 of \d+/.test(document.querySelector('#audit-region caption')?.textContent ?? ''),
      );
      await page.click('#audit-more');
      await page.waitForFunction(() =>
        /, 2 of \d+/.test(document.querySelector('#audit-region caption')?.textContent ?? ''),
      );
      await page.click('#audit-region tbody tr:first-child button');
      await page.waitForSelector('#audit-record-box:not([hidden])');
      const record = JSON.parse((await page.textContent('#audit-record')) ?? '{}');
      expect(record.event.type).toBe('account.unlocked');
      expect(record.subject.login).toBe(person.login);

      await page.fill(
        '#audit-query-body',
        JSON.stringify({ query: { term: { 'event.type.keyword': 'user.created' } }, size: 5 }),
      );
      await page.click('#audit-query button[type=submit]');
      await page.waitForSelector('#audit-query-answer:not([hidden])');
      expect(await page.textContent('#audit-query-answer')).toContain('"user.created"');
      await page.fill('#audit-query-body', '{ not json');
      await page.click('#audit-query button[type=submit]');
      expect(await messageOf(page, '#audit-query-message')).toContain('not valid JSON');

      await page.click('#audit-fields-load');
      await page.waitForSelector('#audit-fields table');
      expect(await page.textContent('#audit-fields')).toContain('event.type');
      expect(tab.problems).toEqual([]);
    },
  );
});

describe('console: directories', () => {
  it(
    'adds an LDAP server record (secret write-only), tests the connection step by step, edits, ' +
      'deletes; adds an identity provider',
    async () => {
      const { page } = tab;
      slapd = await startSlapd();
      const conn = slapd.connection({ via: 'starttls' });
      await openPage(tab, ui('admin/directories'));
      await page.waitForSelector('#ldap-editor form');
      await page.fill('#ldap-f-name', 'console-corp');
      await page.fill('#ldap-f-urls', conn.urls.join('\n'));
      if (conn.startTls) await page.check('#ldap-f-startTls');
      await page.fill('#ldap-f-caCert', conn.caCert ?? '');
      await page.fill('#ldap-f-bindDn', slapd.serviceDn);
      await page.fill('#ldap-f-bindPassword', slapd.servicePassword);
      await page.fill('#ldap-f-baseDn', slapd.baseDn);
      await page.click('#ldap-editor button[type=submit]');
      await page.waitForSelector('#ldap-region [data-record=console-corp]');
      const saved = await api('/v3/settings/ldap-servers/console-corp', { auth: admin });
      expect(saved.body).toMatchObject({
        urls: conn.urls,
        bindDn: slapd.serviceDn,
        bindPasswordSet: true,
        baseDn: slapd.baseDn,
        enabled: true,
      });
      expect(await page.content()).not.toContain(slapd.servicePassword);

      await page.click('[data-record=console-corp] button[aria-label="Test connection to console-corp"]');
      await page.waitForSelector('#ldap-test-console-corp ol.steps');
      expect(await page.getAttribute('#ldap-test-console-corp', 'class')).toContain('message-success');
      const steps = await page.$$eval('#ldap-test-console-corp ol.steps li', (lis) =>
        lis.map((li) => li.textContent ?? ''),
      );
      expect(steps.length).toBeGreaterThanOrEqual(3);
      expect(steps.join('|')).toMatch(/bind/);
      for (const step of steps) expect(step).toContain('ok');

      // Edit: a wrong service password (typed, so sent) makes the bind step fail, named.
      await page.click('[data-record=console-corp] button[aria-label="Edit console-corp"]');
      expect(await page.inputValue('#ldap-f-bindPassword')).toBe('');
      await page.fill('#ldap-f-bindPassword', 'not-the-password');
      await page.uncheck('#ldap-f-enabled');
      await page.click('#ldap-editor button[type=submit]');
      await page.waitForSelector('#ldap-message.message-success');
      expect((await api('/v3/settings/ldap-servers/console-corp', { auth: admin })).body.enabled).toBe(false);
      await page.click('[data-record=console-corp] button[aria-label="Test connection to console-corp"]');
      await page.waitForSelector('#ldap-test-console-corp.message-error ol.steps');
      expect(await page.textContent('#ldap-test-console-corp li.unmet')).toMatch(/bind/);
      await checkPage(tab, kind, 'admin-directories');

      await page.click('[data-record=console-corp] button[aria-label="Delete console-corp"]');
      await page.waitForSelector('#ldap-test-console-corp.message-info');
      await page.click('[data-record=console-corp] button[aria-label="Delete console-corp"]');
      await page.waitForSelector('#ldap-region [data-record=console-corp]', { state: 'detached' });
      expect((await api('/v3/settings/ldap-servers/console-corp', { auth: admin })).status).toBe(404);

      // An identity provider: added; a second one of the same name is refused with the API's detail.
      await page.fill('#idp-f-name', 'console-idp');
      await page.fill('#idp-f-issuer', 'https://idp.example.org/');
      await page.fill('#idp-f-clientId', 'console');
      await page.fill('#idp-f-clientSecret', 'idp-client-secret');
      await page.click('#idp-editor button[type=submit]');
      await page.waitForSelector('#idp-region [data-record=console-idp]');
      expect((await api('/v3/settings/identity-providers/console-idp', { auth: admin })).body).toMatchObject({
        issuer: 'https://idp.example.org/',
        clientSecretSet: true,
      });
      await page.fill('#idp-f-name', 'console-idp');
      await page.fill('#idp-f-issuer', 'https://idp2.example.org/');
      await page.fill('#idp-f-clientId', 'console');
      await page.fill('#idp-f-clientSecret', 'x');
      await page.click('#idp-editor button[type=submit]');
      const dup = await messageOf(page, '#idp-editor .message');
      const direct = await api('/v3/settings/identity-providers', {
        method: 'POST',
        auth: admin,
        json: { name: 'console-idp', issuer: 'https://idp2.example.org/', clientId: 'c', clientSecret: 'x' },
      });
      expect(direct.status).toBe(409);
      expect(dup).toContain(direct.body.detail);
      expect(await page.content()).not.toContain('idp-client-secret');
      // Edit: a cleared field that has a default is kept (not sent as null); the secret is kept unless typed.
      await page.click('[data-record=console-idp] button[aria-label="Edit console-idp"]');
      expect(await page.inputValue('#idp-f-scopes')).toBe('openid profile email');
      await page.fill('#idp-f-scopes', '');
      await page.fill('#idp-f-clientId', 'console-2');
      await page.click('#idp-editor button[type=submit]');
      await page.waitForSelector('#idp-message.message-success');
      expect((await api('/v3/settings/identity-providers/console-idp', { auth: admin })).body).toMatchObject({
        clientId: 'console-2',
        scopes: 'openid profile email',
        clientSecretSet: true,
      });
      expect(tab.problems).toEqual([]);
    },
  );

  it(
    'an LDAP record with plain ldap:// and no StartTLS warns, on its card, that passwords travel ' + 'unencrypted',
    async () => {
      const { page } = tab;
      const plainUrl = 'ldap://plain.example.org:389';
      const made = await api('/v3/settings/ldap-servers', {
        method: 'POST',
        auth: admin,
        json: { name: 'console-plain', urls: [plainUrl], baseDn: 'dc=example,dc=org', enabled: false },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const tls = await api('/v3/settings/ldap-servers', {
        method: 'POST',
        auth: admin,
        json: { name: 'console-tls', urls: ['ldaps://tls.example.org'], baseDn: 'dc=example,dc=org', enabled: false },
      });
      expect(tls.status, JSON.stringify(tls.body)).toBe(201);
      try {
        await openPage(tab, ui('admin/directories'));
        const warning = '[data-record=console-plain] [data-warning]';
        await page.waitForSelector(warning);
        expect(await page.textContent(warning)).toContain(`Passwords travel unencrypted to ${plainUrl}`);
        // A record over ldaps:// (or StartTLS) shows none.
        expect(await page.$$('[data-record=console-tls] [data-warning]')).toEqual([]);
      } finally {
        for (const name of ['console-plain', 'console-tls'])
          await api(`/v3/settings/ldap-servers/${name}`, { method: 'DELETE', auth: admin });
      }
    },
  );
});

describe('console: notifications', () => {
  it("lists the mail history, filtered by kind: the lock above asked for an 'account locked' mail", async () => {
    const { page } = tab;
    await openPage(tab, ui('admin/notifications'));
    await page.selectOption('#notif-kind', 'account_locked');
    await eventually(
      async () => {
        await page.click('#notif-search button[type=submit]');
        await page.waitForSelector('#notif-region:not([aria-busy])');
        const text = (await page.textContent('#notif-region')) ?? '';
        if (!text.includes(person.login)) throw new Error(`no notification: ${text}`);
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: "the 'account locked' mail in the history" },
    );
    const row = await page.textContent('#notif-region tbody');
    expect(row).toContain('account locked');
    const listed = await api<{ items: Json[] }>('/v4/notifications?kind=account_locked', { auth: admin });
    expect(listed.body.items.some((n) => n.userLogin === person.login)).toBe(true);
    await checkPage(tab, kind, 'admin-notifications');
  });
});

describe('console: administrator pages for others', () => {
  it('a user sees no administrator link, and an administrator page shows the 403 in the page language', async () => {
    const other = await newTab(browser, { locale: 'ru-RU' });
    await signIn(other, host.url, person.login, person.password);
    expect(await other.page.isHidden('#console-nav a[href$="/ui/admin/users"]')).toBe(true);
    await openPage(other, ui('admin/users'));
    await other.page.waitForSelector('#users-region .message-error');
    const forbidden = await api('/v4/users', { auth: basic(person.login, person.password) });
    expect(forbidden.status).toBe(403);
    // In the page's language (Russian), not the API's English detail (docs/console.md, "Layout and words").
    const shown = await other.page.textContent('#users-region .message-error');
    expect(shown).toContain('Это действие вам не разрешено');
    expect(shown).not.toContain(forbidden.body.detail);
    expect(await other.page.textContent('h1')).toBe('Пользователи');
    await checkPage(other, kind, 'admin-users-forbidden-ru');
    expect(await other.page.isHidden('#console-nav a[href$="/ui/admin/audit"]')).toBe(true);
    await other.context.close();
  });

  it('an auditor sees the audit log link only, and uses the audit viewer', async () => {
    const login = uniqueLogin('caud');
    const made = await api('/v4/users', {
      method: 'POST',
      auth: admin,
      json: { login, password: PASSWORD, role: 'auditor' },
    });
    expect(made.status).toBe(201);
    const auditor = await newTab(browser);
    await signIn(auditor, host.url, login, PASSWORD);
    expect(await auditor.page.isVisible('#console-nav a[href$="/ui/admin/audit"]')).toBe(true);
    expect(await auditor.page.isHidden('#console-nav a[href$="/ui/admin/users"]')).toBe(true);
    expect(await auditor.page.isHidden('#console-nav a[href$="/ui/admin/settings"]')).toBe(true);
    await openPage(auditor, ui('admin/audit'));
    await auditor.page.selectOption('#audit-type', 'crud_admin');
    await auditor.page.fill('#audit-user', person.login);
    await auditor.page.click('#audit-form button[type=submit]');
    await auditor.page.waitForSelector('#audit-region table');
    expect(await auditor.page.textContent('#audit-region')).toContain('user.created');
    expect(auditor.problems).toEqual([]);
    await auditor.context.close();
  });
});

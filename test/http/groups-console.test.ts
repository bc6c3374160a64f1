/**
 * Groups beyond the API (docs/groups.md), on each host (its own, since the last administrator changes):
 * the console's groups page in headless Chromium (the groups with source, member count and the roles
 * GROUP_ROLES gives; a local group made, members added by login and removed, the group deleted, each
 * delete pressed twice), and the last active administrator, who keeps admin when the groups of an OIDC
 * login no longer give it (a `user.last_admin_kept` warning), while another administrator is demoted.
 */
import type { Browser as Chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { checkPage, launchChromium, newTab, openPage, signIn } from '../harness/console.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestProvider, throughProvider, type TestProvider } from '../harness/oidc-provider.js';

type Json = Record<string, any>;
const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Gr0up$console';
const IDP = 'grpidp';
/** The groups GROUP_ROLES makes administrators and auditors of. */
const ADMINS = uniqueLogin('Admins');
const AUDITORS = uniqueLogin('Auditors');
let host: RunningHost;
let idp: TestProvider;
let chromium: Chromium | undefined;

const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

beforeAll(async () => {
  host = await startTestHost(kind);
  idp = await startTestProvider([`${host.url}/v3/oidc/callback/${IDP}`]);
  const record = await api('/v3/settings/identity-providers', {
    method: 'POST',
    auth: admin,
    json: {
      name: IDP,
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      claimGroups: 'groups',
    },
  });
  expect(record.status, JSON.stringify(record.body)).toBe(201);
  const set = await api('/v3/settings', {
    method: 'PATCH',
    auth: admin,
    json: { values: { GROUP_ROLES: [`${ADMINS}=admin`, `${AUDITORS}=auditor`] } },
  });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await idp?.close();
  await host?.stop();
});

/** Signs `sub` in through the provider in a browser of its own; returns the browser and `GET /v4/users/me`. */
async function oidcSignIn(sub: string): Promise<{ b: Browser; me: Json }> {
  const b = new Browser(new URL(host.url).origin);
  await b.fetch(await throughProvider(b, host.url, IDP, sub));
  const res = await b.fetch(`${host.url}/v4/users/me`);
  expect(res.status).toBe(200);
  return { b, me: (await res.json()) as Json };
}

describe('console: groups', () => {
  it('lists the groups with source, members and roles; makes one, adds and removes members, deletes it', async () => {
    const member = uniqueLogin('gm');
    const made = await api('/v4/users', { method: 'POST', auth: admin, json: { login: member, password: PASSWORD } });
    expect(made.status).toBe(201);
    // A provider's group that GROUP_ROLES maps: listed with its source and the role it gives.
    const sub = uniqueLogin('gc');
    idp.groups[sub] = [AUDITORS];
    await oidcSignIn(sub);

    chromium ??= await launchChromium();
    const tab = await newTab(chromium);
    const { page } = tab;
    try {
      await signIn(tab, host.url, ADMIN.login, ADMIN.password);
      await openPage(tab, `${host.url}/ui/admin/groups`);
      const row = (name: string) => `#grp-region tr:has([data-group="${name}"])`;
      await page.waitForSelector(row(AUDITORS));
      const cells = await page.$$eval(`${row(AUDITORS)} td`, (tds) => tds.map((td) => td.textContent));
      expect(cells.slice(0, 4)).toEqual([AUDITORS, `OIDC (${IDP})`, '1', 'auditor']);
      // A provider's group is not deleted here (it would come back at the next login).
      expect(await page.$(`${row(AUDITORS)} button[aria-label="Delete ${AUDITORS}"]`)).toBeNull();

      const name = uniqueLogin('Console');
      await page.fill('#grp-name', name);
      await page.fill('#grp-description', 'made in the console');
      await page.click('#grp-create button[type=submit]');
      await page.waitForSelector(row(name));
      expect(await page.textContent('#grp-create-message')).toContain(name);
      const listed = await api<{ items: Json[] }>('/v4/groups?limit=100', { auth: admin });
      const group = listed.body.items.find((g) => g.name === name)!;
      expect(group).toMatchObject({ source: 'local', description: 'made in the console', members: 0, roles: [] });
      await checkPage(tab, kind, 'admin-groups');

      // Members: added by login (whatever its case); an unknown login is named.
      await page.click(`${row(name)} button[aria-label="Members of ${name}"]`);
      await page.waitForSelector('#grp-members-box:not([hidden]) #grp-members p');
      await page.fill('#grp-add-login', `${member}-nobody`);
      await page.click('#grp-add button[type=submit]');
      await page.waitForFunction(
        (login) => (document.querySelector('#grp-add-message')?.textContent ?? '').includes(`login ${login}`),
        `${member}-nobody`,
      );
      await page.fill('#grp-add-login', member.toUpperCase());
      await page.click('#grp-add button[type=submit]');
      await page.waitForSelector(`#grp-members td:text-is("${member}")`);
      expect((await api(`/v4/groups/${group.id}`, { auth: admin })).body.members).toBe(1);
      await page.waitForFunction(
        (sel) => document.querySelector(sel)?.querySelectorAll('td')[2]?.textContent === '1',
        row(name),
      );
      const mine = await api<Json>('/v4/users/me', { auth: basic(member, PASSWORD) });
      expect(mine.body.groups).toEqual([{ name, source: 'local' }]);

      // A removal and a delete each ask first: the first press changes nothing.
      const remove = `#grp-members button[aria-label="Remove ${member} from ${name}"]`;
      await page.click(remove);
      await page.waitForSelector('#grp-members-message:has-text("Press again")');
      expect((await api(`/v4/groups/${group.id}`, { auth: admin })).body.members).toBe(1);
      await page.click(remove);
      await page.waitForSelector('#grp-members p:text-is("No members.")');
      expect((await api(`/v4/groups/${group.id}`, { auth: admin })).body.members).toBe(0);

      const del = `${row(name)} button[aria-label="Delete ${name}"]`;
      await page.click(del);
      await page.waitForSelector('#grp-message:has-text("Press again")');
      await page.click(del);
      await page.waitForSelector(row(name), { state: 'detached' });
      expect((await api(`/v4/groups/${group.id}`, { auth: admin })).status).toBe(404);
    } finally {
      await tab.context.close();
    }
  });
});

describe('the last active administrator and roles from groups', () => {
  it(
    "keeps admin when an OIDC login's groups no longer give it, with a warning; another admin is " + 'demoted',
    async () => {
      const sub = uniqueLogin('gl');
      idp.groups[sub] = [ADMINS];
      const { b, me } = await oidcSignIn(sub);
      expect(me.role).toBe('admin');
      const root = (await api<Json>('/v4/users/me', { auth: admin })).body;
      // The OIDC administrator demotes the built-in one: it is now the only active administrator.
      // The session limit is 1 by default: each sign-in ends the one before, so the newest browser acts.
      let current = b;
      const patch = (role: string) =>
        current.fetch(`${host.url}/v4/users/${root.id}`, {
          method: 'PATCH',
          body: JSON.stringify({ role }),
          headers: { 'Content-Type': 'application/json' },
        });
      const demoted = await patch('user');
      expect(demoted.status, await demoted.clone().text()).toBe(200);
      try {
        idp.groups[sub] = [];
        const again = await oidcSignIn(sub);
        current = again.b;
        expect(again.me.role).toBe('admin');
        const res = await again.b.fetch(
          `${host.url}/v3/logs/crud_admin/events?user=${encodeURIComponent(sub)}&size=50`,
        );
        expect(res.status).toBe(200);
        const events = ((await res.json()) as { items: Json[] }).items;
        const kept = events.find((e) => e.event.type === 'user.last_admin_kept');
        expect(kept, JSON.stringify(events.map((e) => e.event.type))).toBeDefined();
        expect(JSON.stringify(kept)).toContain('"role":"user"');
      } finally {
        const restored = await patch('admin');
        expect(restored.status, await restored.clone().text()).toBe(200);
      }
      // With another active administrator, the groups decide again.
      expect((await oidcSignIn(sub)).me.role).toBe('user');
    },
  );
});

/**
 * Groups (docs/groups.md) on both hosts: local groups and their members under /v4/groups, the
 * caller's groups in GET /v4/users/me (from the account's row: a warm token reads nothing more), the
 * OIDC groups claim read at each login, and GROUP_ROLES giving roles at such logins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import {
  ADMIN,
  basic,
  baseUrl,
  callJson,
  createSuperAccessHolder,
  createUser,
  uniqueLogin,
  withSettings,
} from '../harness/client.js';
import { startTestProvider, throughProvider, type TestProvider } from '../harness/oidc-provider.js';

type Json = Record<string, any>;
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Gr0up$pass';
const uniqueGroup = (prefix = 'g') => uniqueLogin(prefix);

async function makeGroup(name: string, description = ''): Promise<Json> {
  const r = await callJson('/v4/groups', { method: 'POST', auth: admin, json: { name, description } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}
const me = (auth: string) => callJson<Json>('/v4/users/me', { auth });
const put = (group: string, user: string, auth = admin) =>
  callJson(`/v4/groups/${group}/members/${user}`, { method: 'PUT', auth });
const remove = (group: string, user: string, auth = admin) =>
  callJson(`/v4/groups/${group}/members/${user}`, { method: 'DELETE', auth });

describe('local groups', () => {
  it(
    'are made, read, listed, renamed and removed by an administrator; names are unique whatever their ' + 'case',
    async () => {
      const name = uniqueGroup('Dev');
      const g = await makeGroup(name, 'the developers');
      expect(g).toMatchObject({ name, description: 'the developers', source: 'local', sourceName: null, members: 0 });
      const again = await callJson('/v4/groups', { method: 'POST', auth: admin, json: { name: name.toUpperCase() } });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ errors: [{ path: 'name' }] });

      expect((await callJson(`/v4/groups/${g.id}`, { auth: admin })).body).toMatchObject({ id: g.id, name });
      const page = await callJson<Json>('/v4/groups?limit=100', { auth: admin });
      expect(page.status).toBe(200);
      expect(page.body.total).toBeGreaterThanOrEqual(1);

      const renamed = `${name}-renamed`;
      const patched = await callJson(`/v4/groups/${g.id}`, { method: 'PATCH', auth: admin, json: { name: renamed } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject({ name: renamed, description: 'the developers' });
      const other = await makeGroup(uniqueGroup());
      const clash = await callJson(`/v4/groups/${other.id}`, { method: 'PATCH', auth: admin, json: { name: renamed } });
      expect(clash.status).toBe(409);

      expect((await callJson(`/v4/groups/${g.id}`, { method: 'DELETE', auth: admin })).status).toBe(204);
      expect((await callJson(`/v4/groups/${g.id}`, { auth: admin })).status).toBe(404);
      expect((await callJson(`/v4/groups/${g.id}`, { method: 'DELETE', auth: admin })).status).toBe(404);
    },
  );

  it('refuse names that could not travel in a comma-separated header, naming the field', async () => {
    for (const name of ['a,b', 'x=admin', ' lead', 'tab\there', '', 'x'.repeat(129)]) {
      const r = await callJson('/v4/groups', { method: 'POST', auth: admin, json: { name } });
      expect(r.status, name).toBe(422);
      expect(r.body.code).toBe('VALIDATION');
      expect(JSON.stringify(r.body.errors)).toContain('name');
    }
    const extra = await callJson('/v4/groups', { method: 'POST', auth: admin, json: { name: 'ok', source: 'ldap' } });
    expect(extra.status).toBe(422);
  });

  it(
    "members see their groups in /v4/users/me at once, with each membership's source; removal takes " + 'them away',
    async () => {
      const login = uniqueLogin('gm');
      const id = await createUser(login, PASSWORD);
      const auth = basic(login, PASSWORD);
      expect((await me(auth)).body.groups).toEqual([]);
      const [b, a] = [await makeGroup(uniqueGroup('b')), await makeGroup(uniqueGroup('a'))];

      // An API token, warm before the change: the change reaches it at once.
      const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
        method: 'POST',
        auth,
        json: { name: 'groups' },
      });
      expect(issued.status, JSON.stringify(issued.body)).toBe(201);
      const bearer = `Bearer ${issued.body.token}`;
      expect((await me(bearer)).body.groups).toEqual([]);

      expect((await put(b.id, id)).status).toBe(204);
      expect((await put(a.id, id)).status).toBe(204);
      expect((await put(a.id, id)).status).toBe(204); // idempotent
      const sorted = [a.name, b.name].sort((x: string, y: string) => x.toLowerCase().localeCompare(y.toLowerCase()));
      expect((await me(bearer)).body.groups).toEqual(sorted.map((name) => ({ name, source: 'local' })));
      expect((await me(auth)).body.groups.map((g: Json) => g.name)).toEqual(sorted);

      const admins = await callJson<Json>(`/v4/users/${id}`, { auth: admin });
      expect(admins.body.groups.map((g: Json) => g.name)).toEqual(sorted);
      const members = await callJson<Json>(`/v4/groups/${a.id}/members`, { auth: admin });
      expect(members.body).toMatchObject({ total: 1, items: [{ id, login, source: 'local' }] });
      expect((await callJson<Json>(`/v4/groups/${a.id}`, { auth: admin })).body.members).toBe(1);

      // A rename reaches the members' groups.
      const renamed = `${a.name}-x`;
      await callJson(`/v4/groups/${a.id}`, { method: 'PATCH', auth: admin, json: { name: renamed } });
      expect((await me(bearer)).body.groups.map((g: Json) => g.name)).toContain(renamed);

      expect((await remove(a.id, id)).status).toBe(204);
      expect((await remove(a.id, id)).status).toBe(404);
      expect((await me(bearer)).body.groups).toEqual([{ name: b.name, source: 'local' }]);
      // Removing the group removes the membership.
      expect((await callJson(`/v4/groups/${b.id}`, { method: 'DELETE', auth: admin })).status).toBe(204);
      expect((await me(bearer)).body.groups).toEqual([]);
    },
  );

  it('a warm token answers its groups without another database lookup', async () => {
    const login = uniqueLogin('gw');
    const id = await createUser(login, PASSWORD);
    const g = await makeGroup(uniqueGroup('warm'));
    await put(g.id, id);
    const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
      method: 'POST',
      auth: basic(login, PASSWORD),
      json: { name: 'warm' },
    });
    const bearer = `Bearer ${issued.body.token}`;
    expect((await me(bearer)).body.groups).toEqual([{ name: g.name, source: 'local' }]);
    const lookups = async () => (await callJson<{ tokens: number }>('/__test__/credential-lookups')).body.tokens;
    const before = await lookups();
    for (let i = 0; i < 3; i++) expect((await me(bearer)).body.groups).toEqual([{ name: g.name, source: 'local' }]);
    expect(await lookups()).toBe(before);
  });

  it('404 for an unknown group or account; only administrators change groups, auditors read them', async () => {
    const g = await makeGroup(uniqueGroup());
    const id = await createUser(uniqueLogin('g4'), PASSWORD);
    expect((await put('no-such-group', id)).status).toBe(404);
    expect((await put(g.id, 'no-such-user')).status).toBe(404);

    const auditor = uniqueLogin('gaud');
    await createUser(auditor, PASSWORD, { role: 'auditor' });
    const auditorAuth = basic(auditor, PASSWORD);
    expect((await callJson('/v4/groups', { auth: auditorAuth })).status).toBe(200);
    expect((await callJson(`/v4/groups/${g.id}/members`, { auth: auditorAuth })).status).toBe(200);
    expect((await put(g.id, id, auditorAuth)).status).toBe(403);
    const made = await callJson('/v4/groups', { method: 'POST', auth: auditorAuth, json: { name: uniqueGroup() } });
    expect(made.status).toBe(403);

    const user = uniqueLogin('gusr');
    await createUser(user, PASSWORD);
    expect((await callJson('/v4/groups', { auth: basic(user, PASSWORD) })).status).toBe(403);
    expect((await callJson('/v4/groups')).status).toBe(401);

    // Lent admin rights read groups but never change them (a membership would outlive the loan).
    const holder = await createSuperAccessHolder();
    expect((await callJson('/v4/groups', { auth: holder.auth })).status).toBe(200);
    expect((await put(g.id, holder.id, holder.auth)).status).toBe(403);
  });

  it('changes are audited in crud_admin with the acting administrator', async () => {
    const login = uniqueLogin('gaudit');
    const id = await createUser(login, PASSWORD);
    const g = await makeGroup(uniqueGroup('audited'));
    await put(g.id, id);
    await remove(g.id, id);
    const found = await callJson<{ items: Json[] }>(
      `/v3/logs/crud_admin/events?user=${encodeURIComponent(login)}&size=50`,
      { auth: admin },
    );
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const types = found.body.items.map((i) => i.event.type);
    expect(types).toEqual(expect.arrayContaining(['group.member_added', 'group.member_removed']));
  });
});

describe('OIDC groups and roles from groups', () => {
  let idp: TestProvider;
  const name = `grp${Date.now().toString(36)}`;
  const plain = `${name}-nogroups`;
  const callback = (n: string) => `${baseUrl()}/v3/oidc/callback/${n}`;

  beforeAll(async () => {
    idp = await startTestProvider([callback(name), callback(plain)]);
    for (const [n, claimGroups] of [
      [name, 'groups'],
      [plain, null],
    ] as const) {
      const r = await callJson('/v3/settings/identity-providers', {
        method: 'POST',
        auth: admin,
        json: { name: n, issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, claimGroups },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.claimGroups).toBe(claimGroups);
    }
  });
  afterAll(async () => {
    await idp?.close();
  });

  async function signIn(record: string, sub: string): Promise<Json> {
    const b = new Browser(new URL(baseUrl()).origin);
    await b.fetch(await throughProvider(b, baseUrl(), record, sub));
    const res = await b.fetch(`${baseUrl()}/v4/users/me`);
    expect(res.status).toBe(200);
    return (await res.json()) as Json;
  }

  it("reads the provider's groups claim at each login: new groups appear, dropped ones go", async () => {
    const sub = uniqueLogin('og');
    const [ga, gb] = [uniqueGroup('OidcA'), uniqueGroup('OidcB')];
    idp.groups[sub] = [ga, gb, 'bad,name'];
    const first = await signIn(name, sub);
    expect(first.groups).toEqual(
      [ga, gb].sort((x, y) => x.toLowerCase().localeCompare(y.toLowerCase())).map((n) => ({ name: n, source: 'oidc' })),
    );
    const list = await callJson<Json>('/v4/groups?limit=100', { auth: admin });
    expect(list.body.items.find((g: Json) => g.name === ga)).toMatchObject({ source: 'oidc', sourceName: name });

    // A local membership of the same account stays through its logins; the provider's follow the claim.
    const local = await makeGroup(uniqueGroup('Local'));
    expect((await put(local.id, first.id)).status).toBe(204);
    idp.groups[sub] = [gb];
    const second = await signIn(name, sub);
    expect(second.groups).toEqual(
      [
        { name: gb, source: 'oidc' },
        { name: local.name, source: 'local' },
      ].sort((x, y) => x.name.toLowerCase().localeCompare(y.name.toLowerCase())),
    );
    // The provider's membership cannot be removed here: it is the provider's.
    const gbId = list.body.items.find((g: Json) => g.name === gb).id;
    expect((await remove(gbId, first.id)).status).toBe(404);
  });

  it('a provider without claimGroups reads no groups', async () => {
    const sub = uniqueLogin('on');
    idp.groups[sub] = [uniqueGroup('ignored')];
    expect((await signIn(plain, sub)).groups).toEqual([]);
  });

  it(
    'GROUP_ROLES makes members of a mapped group auditors or admins at each login, and takes it ' + 'back',
    async () => {
      const sub = uniqueLogin('or');
      const [auditors, admins] = [uniqueGroup('Auditors'), uniqueGroup('Admins')];
      const bad = await callJson('/v3/settings', {
        method: 'PATCH',
        auth: admin,
        json: { values: { GROUP_ROLES: [`${auditors}=root`] } },
      });
      expect(bad.status).toBe(422);
      await withSettings({ GROUP_ROLES: [`${auditors.toUpperCase()}=auditor`, `${admins}=admin`] }, async () => {
        idp.groups[sub] = [auditors];
        const first = await signIn(name, sub);
        expect(first.role).toBe('auditor');
        idp.groups[sub] = [auditors, admins];
        expect((await signIn(name, sub)).role).toBe('admin');
        // A manual change holds until the next login, where the groups decide again.
        const patched = await callJson(`/v4/users/${first.id}`, {
          method: 'PATCH',
          auth: admin,
          json: { role: 'user' },
        });
        expect(patched.status, JSON.stringify(patched.body)).toBe(200);
        expect((await callJson<Json>(`/v4/users/${first.id}`, { auth: admin })).body.role).toBe('user');
        expect((await signIn(name, sub)).role).toBe('admin');
        idp.groups[sub] = [];
        expect((await signIn(name, sub)).role).toBe('user');
      });
      // A source that reads no groups leaves roles alone.
      const other = uniqueLogin('op');
      idp.groups[other] = [admins];
      await withSettings({ GROUP_ROLES: [`${admins}=admin`] }, async () => {
        expect((await signIn(plain, other)).role).toBe('user');
      });
    },
  );
});

/** LDAP server records in the database: the service password is sealed, never stored or returned in clear. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ldapServers } from '../../schema/index.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { ADMIN } from '../harness/client.js';

let t: TestApp;
const SERVICE_PASSWORD = 'svc-Pa55word-never-in-clear';
const auth = `Basic ${btoa(`${ADMIN.login}:${ADMIN.password}`)}`;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const request = (path: string, method: string, json?: unknown) =>
  t.app.request(`/api/auth${path}`, {
    method,
    headers: { Authorization: auth, ...(json ? { 'Content-Type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });

describe('LDAP server records', () => {
  it(
    'a database dump alone does not reveal the service password; the API never returns it; a new one ' + 'replaces it',
    async () => {
      const created = await request('/v3/settings/ldap-servers', 'POST', {
        name: 'corp',
        urls: ['ldaps://ldap.example.test'],
        baseDn: 'dc=example,dc=test',
        bindDn: 'cn=svc,dc=example,dc=test',
        bindPassword: SERVICE_PASSWORD,
      });
      expect(created.status).toBe(201);
      expect(await created.text()).not.toContain(SERVICE_PASSWORD);
      const dump = JSON.stringify(await t.db.select().from(ldapServers));
      expect(dump).not.toContain(SERVICE_PASSWORD);
      const [row] = await t.db.select().from(ldapServers);
      expect(row!.bindPasswordEnc).toMatch(/^v1\./);

      const patched = await request('/v3/settings/ldap-servers/corp', 'PATCH', { bindPassword: 'another-Secret-1' });
      expect(patched.status).toBe(200);
      const [after] = await t.db.select().from(ldapServers);
      expect(after!.bindPasswordEnc).not.toBe(row!.bindPasswordEnc);

      // Clearing the service account clears its password with it (anonymous search).
      const cleared = await request('/v3/settings/ldap-servers/corp', 'PATCH', { bindDn: null });
      expect(cleared.status).toBe(200);
      expect(await cleared.json()).toMatchObject({ bindDn: null, bindPasswordSet: false });
    },
  );

  it('without a bridge, test connection and LDAP logins are a clear 503', async () => {
    const test = await request('/v3/settings/ldap-servers/corp/test', 'POST');
    expect(test.status).toBe(503);
    expect((await test.json()) as { detail: string }).toMatchObject({
      detail: expect.stringContaining('AUTH_BRIDGE_URL'),
    });
    const login = await t.app.request('/api/auth/v3/login_without_session', {
      method: 'POST',
      headers: { Authorization: `Basic ${btoa('alice:alice-Secret-1')}`, 'X-LDAP-Name': 'corp' },
    });
    expect(login.status).toBe(503);
  });
});

/**
 * After a key rotation, the periodic job moves every stored secret (LDAP service passwords, OIDC
 * client secrets) to the current key, and a re-seal never overwrites a record changed meanwhile.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityProviders, ldapServers } from '../../schema/index.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { runScheduledJobs } from '../../worker/src/schedule/index.js';
import { openSecret, sealSecret } from '../../worker/src/store/secret-box.js';
import { resealLdapPassword } from '../../worker/src/store/stored-secrets.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { scopeWithoutRequest } from '../../worker/src/http/scope.js';

const OLD = 'old-session-secret-key-0123456789abcdefgh';
const NEW = 'new-session-secret-key-0123456789abcdefgh';
const before = parseEnvironment({ SESSION_SECRET_KEY: OLD });
const rotated = parseEnvironment({ SESSION_SECRET_KEY: NEW, SESSION_SECRET_KEY_PREVIOUS: OLD });
const after = parseEnvironment({ SESSION_SECRET_KEY: NEW });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ SESSION_SECRET_KEY: OLD });
});
afterAll(() => t.close());

const ldapRow = async (name: string) => (await t.db.select().from(ldapServers).where(eq(ldapServers.name, name)))[0]!;

describe('re-sealing stored secrets', () => {
  it('the periodic job re-seals every record sealed with the previous key, and only those', async () => {
    const now = Date.now();
    const base = {
      urls: ['ldap://127.0.0.1:1'],
      baseDn: 'dc=example,dc=com',
      bindDn: 'cn=svc',
      createdAt: now,
      updatedAt: now,
    };
    await t.db.insert(ldapServers).values([
      { ...base, name: 'old-ldap', bindPasswordEnc: await sealSecret(before, 'ldap-password') },
      { ...base, name: 'new-ldap', bindPasswordEnc: await sealSecret(after, 'other-password') },
      { ...base, name: 'no-password', bindDn: null, bindPasswordEnc: null },
    ]);
    const clientSecretEnc = await sealSecret(before, 'client-secret');
    const idpRow = { name: 'old-idp', issuer: 'https://idp.example', clientId: 'c', clientSecretEnc };
    await t.db.insert(identityProviders).values({ ...idpRow, createdAt: now, updatedAt: now });
    const current = (await ldapRow('new-ldap')).bindPasswordEnc;

    expect(await runScheduledJobs(scopeWithoutRequest({ db: t.db, config: rotated, now: () => now }))).toEqual([]);

    // Now the new key alone opens them all: SESSION_SECRET_KEY_PREVIOUS can be dropped.
    expect(await openSecret(after, (await ldapRow('old-ldap')).bindPasswordEnc!)).toBe('ldap-password');
    const idp = (await t.db.select().from(identityProviders).where(eq(identityProviders.name, 'old-idp')))[0]!;
    expect(await openSecret(after, idp.clientSecretEnc)).toBe('client-secret');
    expect((await ldapRow('new-ldap')).bindPasswordEnc).toBe(current);
    expect((await ldapRow('no-password')).bindPasswordEnc).toBeNull();
  });

  it('a re-seal does not overwrite a secret an admin changed since it was read', async () => {
    const read = (await ldapRow('old-ldap')).bindPasswordEnc!;
    const changed = await sealSecret(after, 'set-by-admin');
    await t.db.update(ldapServers).set({ bindPasswordEnc: changed }).where(eq(ldapServers.name, 'old-ldap'));
    await resealLdapPassword(t.db, 'old-ldap', read)(await sealSecret(after, 'ldap-password'));
    expect(await openSecret(after, (await ldapRow('old-ldap')).bindPasswordEnc!)).toBe('set-by-admin');
  });
});

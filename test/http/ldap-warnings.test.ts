/**
 * An LDAP server record that sends passwords in clear text (docs/ldap.md, "Record"): plain ldap:// URLs
 * without StartTLS are allowed, but every answer with the record warns that the bind passwords travel
 * unencrypted, naming the URLs; ldaps:// or StartTLS answer no warning.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
let host: RunningHost;
const api = <T = Record<string, any>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

beforeAll(async () => {
  host = await startTestHost(kind, {});
}, 180_000);
afterAll(async () => {
  await host?.stop();
});

const record = (name: string, extra: Record<string, unknown>) =>
  api('/v3/settings/ldap-servers', {
    method: 'POST',
    auth: admin,
    json: {
      name,
      baseDn: 'dc=example,dc=org',
      bindDn: 'cn=svc,dc=example,dc=org',
      bindPassword: 'S3rvice$pw',
      ...extra,
    },
  });

describe('LDAP server records: the warning of passwords sent unencrypted', () => {
  it('ldap:// without StartTLS: created, with an UNENCRYPTED_BIND warning naming the plain URLs', async () => {
    const urls = ['ldap://dir1.example.org:389', 'ldaps://dir2.example.org:636'];
    const made = await record('plain', { urls, startTls: false });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.warnings).toEqual([
      {
        code: 'UNENCRYPTED_BIND',
        urls: ['ldap://dir1.example.org:389'],
        message: expect.stringMatching(/^bind passwords .* travel unencrypted to ldap:\/\/dir1\.example\.org:389: /),
      },
    ]);
    // Never the password itself, in the warning or elsewhere.
    expect(JSON.stringify(made.body)).not.toContain('S3rvice$pw');
    // Every answer with the record says it: read, list.
    expect((await api('/v3/settings/ldap-servers/plain', { auth: admin })).body.warnings).toHaveLength(1);
    const list = await api<{ items: Array<Record<string, any>> }>('/v3/settings/ldap-servers', { auth: admin });
    expect(list.body.items.find((r) => r.name === 'plain')?.warnings).toHaveLength(1);
    // StartTLS turned on: no warning any more.
    const fixed = await api('/v3/settings/ldap-servers/plain', {
      method: 'PATCH',
      auth: admin,
      json: { startTls: true },
    });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(200);
    expect(fixed.body.warnings).toEqual([]);
  });

  it('ldaps:// only, or ldap:// with StartTLS: no warning', async () => {
    const tls = await record('tls', { urls: ['ldaps://dir.example.org'] });
    expect(tls.status).toBe(201);
    expect(tls.body.warnings).toEqual([]);
    const starttls = await record('starttls', { urls: ['ldap://dir.example.org'], startTls: true });
    expect(starttls.status).toBe(201);
    expect(starttls.body.warnings).toEqual([]);
  });
});

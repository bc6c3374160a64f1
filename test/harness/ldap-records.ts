/** LDAP server records for HTTP tests: one added through the admin API, pointing at a test slapd. */
import { expect } from 'vitest';
import { ADMIN, basic, callJson } from './client.js';
import type { Slapd } from './slapd.js';

/**
 * Adds the record `name` on `host` (as the built-in admin) for `slapd` reached `via` ldap://, StartTLS or
 * ldaps:// with its service account; `extra` overrides or adds fields (urls, attrRole, enabled...). Expects 201
 * and returns the record.
 */
export async function addLdapServer(
  host: { url: string },
  name: string,
  slapd: Slapd,
  via: 'ldap' | 'starttls' | 'ldaps',
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const conn = slapd.connection({ via });
  const r = await callJson('/v3/settings/ldap-servers', {
    base: host.url,
    method: 'POST',
    auth: basic(ADMIN.login, ADMIN.password),
    json: {
      name,
      urls: conn.urls,
      startTls: conn.startTls,
      caCert: conn.caCert,
      bindDn: slapd.serviceDn,
      bindPassword: slapd.servicePassword,
      baseDn: slapd.baseDn,
      ...extra,
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

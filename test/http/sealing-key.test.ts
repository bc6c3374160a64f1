/**
 * A host without a configured sealing key (docs/operations.md, "Keys the Node host keeps";
 * docs/security.md, "Key rotation"): the Node host keeps a generated key and stores secrets; the
 * edge host refuses to store one with a 503 naming AUTH_SECRETS_ENCRYPTION_KEY, and its console says
 * so on the forms that would store one before anyone starts filling them in.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN } from '../harness/client.js';
import { loggedInBrowser } from '../harness/browser.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');

describe('no AUTH_SECRETS_ENCRYPTION_KEY and no SESSION_SECRET_KEY', () => {
  let host: RunningHost;
  beforeAll(async () => {
    host = await startTestHost(kind, { SESSION_SECRET_KEY: '', AUTH_SECRETS_ENCRYPTION_KEY: '' });
  });
  afterAll(async () => {
    await host?.stop();
  });

  it(
    kind === 'node'
      ? 'Node: a TOTP enrolment is stored (the kept key seals it)'
      : 'edge: a TOTP enrolment is refused with 503 naming AUTH_SECRETS_ENCRYPTION_KEY',
    async () => {
      const admin = await loggedInBrowser(host.url, ADMIN.login, ADMIN.password);
      const res = await admin.fetch(`${host.url}/v4/users/me/totp`, { method: 'POST' });
      if (kind === 'node') {
        expect(res.status).toBe(201);
        return;
      }
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as { code: string; detail: string };
      expect(body.code).toBe('SERVICE_UNAVAILABLE');
      expect(body.detail).toContain('AUTH_SECRETS_ENCRYPTION_KEY');
    },
  );

  it(
    kind === 'node'
      ? 'Node: the console shows no notice on the forms that store secrets'
      : 'edge: the console says that secrets cannot be stored, on the TOTP card and the LDAP and OIDC forms',
    async () => {
      const security = await (await fetch(`${host.url}/ui/security?lang=en`)).text();
      const directories = await (await fetch(`${host.url}/ui/admin/directories?lang=en`)).text();
      const notice = 'This service cannot store secrets';
      if (kind === 'node') {
        expect(security).not.toContain(notice);
        expect(directories).not.toContain(notice);
        return;
      }
      expect(security).toMatch(/id="totp-no-key"[^>]*>\s*<p>This service cannot store secrets/);
      expect(security).toContain('AUTH_SECRETS_ENCRYPTION_KEY');
      expect(directories).toContain('id="ldap-no-key"');
      expect(directories).toContain('id="idp-no-key"');
    },
  );
});

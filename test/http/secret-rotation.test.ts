/**
 * Rotating SESSION_SECRET_KEY as documented, on each host: a host restarted on the same database
 * with the new key and the old one in SESSION_SECRET_KEY_PREVIOUS still opens the stored LDAP
 * service password (LDAP logins and "test connection" work through the bridge and a real slapd),
 * re-seals it with the new key as it reads it, so that once the previous key is dropped it still
 * works; and a key the host was never given does not open it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { addLdapServer } from '../harness/ldap-records.js';
import { startSlapd, type Slapd } from '../harness/slapd.js';

const kind = inject('hostKind');
const OLD = 'old-session-secret-key-0123456789abcdefgh';
const NEW = 'new-session-secret-key-0123456789abcdefgh';
const admin = basic(ADMIN.login, ADMIN.password);

let slapd: Slapd;
let bridge: TestBridge;
let dir: string;
let database: string;
let host: RunningHost | undefined;

beforeAll(async () => {
  [slapd, bridge] = await Promise.all([startSlapd(), startTestBridge()]);
  dir = mkdtempSync(join(tmpdir(), 'secret-rotation-'));
  database = join(dir, 'auth.db');
}, 60_000);
afterAll(async () => {
  await host?.stop();
  await Promise.all([bridge?.stop(), slapd?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** (Re)starts the host on the shared database with these session keys. */
async function restart(keys: Record<string, string>): Promise<RunningHost> {
  await host?.stop();
  host = undefined;
  // The periodic jobs would re-seal at start on Node; here only reading does (as on the edge).
  host = await startTestHost(kind, { ...bridge.env, IN_APP_SCHEDULER_ENABLED: 'False', ...keys }, { database });
  return host;
}

/** An LDAP login with Basic and X-LDAP-Name: it binds with the stored service password. */
async function ldapLogin(h: RunningHost) {
  const alice = slapd.user('alice');
  const auth = basic(alice.login, alice.password!);
  return callJson('/v3/login_without_session', {
    base: h.url,
    method: 'POST',
    auth,
    headers: { 'X-LDAP-Name': 'corp' },
  });
}

describe('SESSION_SECRET_KEY rotation and stored secrets', () => {
  it(
    'a stored LDAP service password survives the rotation, is re-sealed, and works once the previous ' + 'key is gone',
    async () => {
      // Before: the record is sealed with the old key.
      let h = await restart({ SESSION_SECRET_KEY: OLD });
      await addLdapServer(h, 'corp', slapd, 'ldap');
      expect((await ldapLogin(h)).status).toBe(200);

      // A key the host was not given does not open it: a clear 502, never a wrong bind.
      h = await restart({ SESSION_SECRET_KEY: NEW });
      const refused = await ldapLogin(h);
      expect(refused.status).toBe(502);
      expect(JSON.stringify(refused.body)).toContain('cannot be decrypted');

      // The documented rotation: the new key, and the old one as SESSION_SECRET_KEY_PREVIOUS.
      h = await restart({ SESSION_SECRET_KEY: NEW, SESSION_SECRET_KEY_PREVIOUS: OLD });
      const testPath = '/v3/settings/ldap-servers/corp/test';
      const tested = await callJson<{ ok: boolean }>(testPath, { base: h.url, method: 'POST', auth: admin });
      expect(tested.status, JSON.stringify(tested.body)).toBe(200);
      expect(tested.body.ok).toBe(true);
      expect((await ldapLogin(h)).status).toBe(200);

      // The previous key dropped: the record was re-sealed with the new key when it was read.
      h = await restart({ SESSION_SECRET_KEY: NEW });
      const after = await ldapLogin(h);
      expect(after.status, JSON.stringify(after.body)).toBe(200);
    },
  );
});

/**
 * Hostile suite (docs/testing.md, "The hostile suite"), LDAP attacks: the worker → the bridge (mutual TLS) → a real
 * OpenLDAP slapd. Its own host with a bridge, so that locks and settings touch no other suite. Each `it` is
 * one attack.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { addLdapServer } from '../harness/ldap-records.js';
import { startSlapd, type Slapd } from '../harness/slapd.js';
import { compareTimings } from '../harness/timing.js';

let host: RunningHost;
let bridge: TestBridge;
let slapd: Slapd;
const admin = basic(ADMIN.login, ADMIN.password);

const api = <T = Record<string, unknown>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const ldapBasic = (server: string, login: string, password: string) =>
  api('/v3/login_without_session', {
    method: 'POST',
    auth: basic(login, password),
    headers: { 'X-LDAP-Name': server },
  });

async function settings(values: Record<string, unknown>) {
  const r = await api('/v3/settings', { method: 'PATCH', auth: admin, json: { values } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

beforeAll(async () => {
  [slapd, bridge] = await Promise.all([startSlapd(), startTestBridge()]);
  host = await startTestHost(inject('hostKind'), bridge.env);
  await addLdapServer(host, 'corp-plain', slapd, 'ldap');
  await addLdapServer(host, 'corp-ldaps', slapd, 'ldaps');
}, 180_000);

afterAll(async () => {
  await host?.stop();
  await Promise.all([bridge?.stop(), slapd?.stop()]);
});

/** The filters of the searches slapd logged since `from` (its log length then). */
function filtersSince(from: number): string[] {
  return [
    ...slapd
      .log()
      .slice(from)
      .matchAll(/ SRCH .*?filter="([^"]*)"/g),
  ].map((m) => m[1]!);
}

/** The account id of an LDAP login that works, by its profile. */
async function accountId(login: string, password: string): Promise<string> {
  const r = await api<{ id: string }>('/v4/users/me', {
    auth: basic(login, password),
    headers: { 'X-LDAP-Name': 'corp-ldaps' },
  });
  expect(r.status, `${JSON.stringify(login)}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.id;
}

describe('LDAP attacks', () => {
  it('LDAP injection in every field that reaches a filter or a DN: the login, through every way in', async () => {
    // The login is the only caller's field the bridge puts into a filter (the DNs it binds with and
    // compares are the directory's own): sent as Basic with X-LDAP-Name, as JSON and as a form.
    const alice = slapd.user('alice');
    const payloads = [
      '*',
      'al*',
      `${alice.login})(uid=*`,
      '*)(|(uid=*',
      `${alice.login})(|(objectClass=*)`,
      '\\',
      `${alice.login}\\2a`,
      '(uid=alice)',
      `${alice.login}\u0000`,
    ];
    const ways: [string, (login: string) => Promise<number>][] = [
      ['Basic + X-LDAP-Name', async (login) => (await ldapBasic('corp-plain', login, alice.password!)).status],
      [
        'POST /v3/login JSON ldapServer',
        async (login) =>
          (
            await api('/v3/login', {
              method: 'POST',
              json: { login, password: alice.password, ldapServer: 'corp-plain' },
            })
          ).status,
      ],
      [
        'POST /v3/login form ldap_server',
        async (login) => {
          const body = new URLSearchParams({ login, password: alice.password!, ldap_server: 'corp-plain' });
          const res = await fetch(`${host.url}/v3/login`, { method: 'POST', body, redirect: 'manual' });
          await res.body?.cancel();
          // A form login answers 303: to the front end with auth_error when it failed.
          return res.status === 303 && !(res.headers.get('location') ?? '').includes('auth_error') ? 200 : res.status;
        },
      ],
    ];
    const from = slapd.log().length;
    for (const [way, send] of ways) {
      for (const login of payloads) {
        const status = await send(login);
        expect([400, 401, 303], `${way} ${JSON.stringify(login)} → ${status}`).toContain(status);
      }
    }
    // Every filter the payloads reached is one equality assertion with every metacharacter escaped.
    // (The other searches are the bridge's own: the root DSE, with a filter of its own.)
    const filters = filtersSince(from).filter((f) => f !== '(objectClass=*)');
    expect(filters.length).toBeGreaterThanOrEqual(payloads.length);
    for (const f of filters) {
      // One `(uid=…)` assertion whose value is literal characters and \XX escapes only: no wildcard, no
      // filter component of the login's own.
      const assertion = /\(uid=(?:[^*()\\]|\\[0-9a-fA-F]{2})*\)/.exec(f)?.[0];
      expect(assertion, f).toBeDefined();
      expect(f.replace(assertion!, ''), f).not.toContain('uid=');
      expect(f === assertion || /^\(&\([a-zA-Z]+=[a-zA-Z]+\)\(uid=.*\)\)$/.test(f), f).toBe(true);
    }
    // A login with metacharacters matches only its own entry; two entries with one login: none.
    const special = slapd.user('special');
    expect((await ldapBasic('corp-plain', special.login, 'wrong-password')).status).toBe(401);
    const found = await ldapBasic('corp-plain', special.login, special.password!);
    expect(found.status, JSON.stringify(found.body)).toBe(403);
    expect(String(found.body.detail)).toContain('"*" (U+002A)');
    const comma = slapd.user('comma');
    const commaFound = await ldapBasic('corp-plain', comma.login, comma.password!);
    expect(commaFound.status).toBe(403);
    expect(String(commaFound.body.detail)).toContain('"," (U+002C)');
    const twin = slapd.user('twin1');
    expect((await ldapBasic('corp-ldaps', twin.login, twin.password!)).status).toBe(401);
  });

  it('case and Unicode-normalisation variants of an LDAP login share one counter and one account', async () => {
    // The directory matches `Bob`, `BOB`, full-width `ｂｏｂ` and `bob ` (insignificant spaces) to one
    // entry: every variant must log into one account and spend the one counter of the login.
    const bob = slapd.user('bob');
    const wide = [...bob.login].map((ch) => String.fromCodePoint(ch.codePointAt(0)! + 0xfee0)).join('');
    const variants = [
      bob.login,
      bob.login.toUpperCase(),
      bob.login[0]!.toUpperCase() + bob.login.slice(1),
      wide,
      `${bob.login} `,
      ` ${bob.login}`,
    ];
    const ids = new Set<string>();
    for (const v of variants) ids.add(await accountId(v, bob.password!));
    expect(ids.size).toBe(1);
    // AUTH_FAILED_COUNT (3) wrong passwords, each under another variant, lock every variant.
    for (const v of [`${bob.login} `, wide, bob.login.toUpperCase()]) {
      const r = await ldapBasic('corp-ldaps', v, 'wrong-password');
      expect(r.body.code, JSON.stringify(v)).toBe('INVALID_CREDENTIALS');
    }
    for (const v of variants) {
      const r = await ldapBasic('corp-ldaps', v, bob.password!);
      expect(r.body.code, JSON.stringify(v)).toBe('ACCOUNT_LOCKED');
    }
    const [id] = [...ids];
    expect((await api(`/v4/users/${id}/unlock`, { method: 'POST', auth: admin })).status).toBeLessThan(300);
  });

  it('timing of unknown and known LDAP logins (wrong password) within 10 %', async () => {
    // Like with like: unknown and known logins, three of each, taken in turn (an attacker's first try of
    // a login costs a new lockout row whether or not the account exists), each tried fewer times than
    // the lock's highest limit (set for the test, reset to its default after). A right password first
    // clears what a run before (a retry) counted for the known ones.
    await settings({ AUTH_FAILED_COUNT: 100 });
    try {
      const known = ['jose', 'alice', 'carol'].map((k) => slapd.user(k));
      for (const u of known) {
        const r = await ldapBasic('corp-plain', u.login, u.password!);
        expect(r.status, `${u.login}: ${JSON.stringify(r.body)}`).toBe(200);
      }
      const unknown = known.map((_, i) => `nobody-${crypto.randomUUID().slice(0, 8)}-${i}`);
      let [u, k] = [0, 0];
      // 60 rounds, not 25 (at most 62 + 62 + 122 tries, 82 per login): an LDAP login is a few short hops
      // (host, bridge, slapd), each one waiting or not for a core on a loaded machine; there, 25 samples'
      // medians came out 0.54 to 1.71 apart, 100 samples' 0.94 to 1.03 (docs/testing.md, "The hostile suite").
      const result = await compareTimings(
        {
          unknown: async () => void (await ldapBasic('corp-plain', unknown[u++ % 3]!, 'wrong-Password-1')),
          known: async () => void (await ldapBasic('corp-plain', known[k++ % 3]!.login, 'wrong-Password-1')),
        },
        { rounds: 60 },
      );
      expect(result.ratio, JSON.stringify(result)).toBeLessThan(1.1);
    } finally {
      expect((await api('/v3/settings/AUTH_FAILED_COUNT', { method: 'DELETE', auth: admin })).status).toBe(200);
    }
  });
});

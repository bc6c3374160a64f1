/**
 * The bridge's LDAP routes against a real OpenLDAP (test/harness/slapd.ts): plain LDAP, StartTLS
 * and LDAPS with a test CA, an Active Directory flavour, and servers that refuse or never answer.
 * Split as happy path, errors, security; then the diagnostic endpoint.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BridgeProblemSchema,
  LdapAuthenticateResponseSchema,
  LdapTestResponseSchema,
  type LdapConnection,
} from '../../../schema/bridge/index.js';
import {
  closedPortUrl,
  startSilentServer,
  startSlapd,
  type SilentServer,
  type Slapd,
} from '../../../test/harness/slapd.js';
import { buildBridge } from '../app.js';
import {
  authenticate,
  BlankPasswordError,
  escapeFilterValue,
  guidString,
  mapRole,
  normalizeDn,
  firstRdnValue,
  groupFilterFor,
  userFilterFor,
} from './index.js';

let ldap: Slapd;
let ad: Slapd;
let silent: SilentServer;
let app: FastifyInstance;
let logs = '';

beforeAll(async () => {
  [ldap, ad, silent] = await Promise.all([
    startSlapd({ anonymousSearch: true }),
    startSlapd({ activeDirectory: true }),
    startSilentServer(),
  ]);
  const stream = new Writable({
    write(chunk, _enc, done) {
      logs += String(chunk);
      done();
    },
  });
  app = buildBridge({ server: { logger: { level: 'debug', stream } } });
  await app.ready();
}, 30_000);

afterAll(async () => {
  await app?.close();
  await Promise.all([ldap?.stop(), ad?.stop(), silent?.stop()]);
});

const post = (url: string, body: unknown) => app.inject({ method: 'POST', url, payload: body as object });
const auth = async (connection: LdapConnection, login: string, password: string) => {
  const res = await post('/v1/ldap/authenticate', { connection, login, password });
  return { status: res.statusCode, body: res.json(), raw: res.body };
};
const okBody = (b: unknown) => LdapAuthenticateResponseSchema.parse(b);
const problem = (b: unknown) => BridgeProblemSchema.parse(b);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('authenticate: happy path', () => {
  it('binds over ldap://, maps the profile and the role from memberOf', async () => {
    const alice = ldap.user('alice');
    const r = await auth(ldap.connection(), 'alice', alice.password!);
    expect(r.status).toBe(200);
    const body = okBody(r.body);
    expect(body).toMatchObject({
      outcome: 'ok',
      activeDirectory: false,
      profile: { dn: alice.dn, login: 'alice', displayName: 'Alice Admin', email: 'alice@example.test', role: 'admin' },
    });
    if (body.outcome === 'ok') expect(body.profile.externalId).toMatch(UUID); // entryUUID
  });

  it('upgrades ldap:// with StartTLS verified by the given CA', async () => {
    const r = await auth(ldap.connection({ via: 'starttls' }), 'bob', ldap.user('bob').password!);
    expect(okBody(r.body)).toMatchObject({ outcome: 'ok', profile: { login: 'bob', role: 'auditor' } });
    expect(ldap.log()).toMatch(/STARTTLS/);
  });

  it(
    'connects with ldaps:// verified by the given CA; the login as the directory spells it; blanks ' +
      'inside a password are kept',
    async () => {
      const r = await auth(ldap.connection({ via: 'ldaps' }), 'carol', '  carol pass  ');
      expect(okBody(r.body)).toMatchObject({ outcome: 'ok', profile: { login: 'Carol', role: 'user' } });
    },
  );

  it('maps the role from a plain attribute, and from group DNs written differently', async () => {
    const byType = ldap.connection({ attributes: { displayName: null, email: null, role: 'employeeType' } });
    for (const [key, role] of [
      ['alice', 'admin'],
      ['bob', 'auditor'],
      ['carol', 'user'],
    ] as const) {
      const u = ldap.user(key);
      expect(okBody((await auth(byType, u.login, u.password!)).body)).toMatchObject({
        outcome: 'ok',
        profile: { role, displayName: null, email: null },
      });
    }
    const shouting = ldap.connection({
      roleGroups: { admin: 'CN=Auth-Admins, OU=groups,DC=EXAMPLE,DC=test', auditor: null },
    });
    expect(okBody((await auth(shouting, 'alice', ldap.user('alice').password!)).body)).toMatchObject({
      profile: { role: 'admin' },
    });
    expect(okBody((await auth(shouting, 'bob', ldap.user('bob').password!)).body)).toMatchObject({
      profile: { role: 'user' },
    });
    const unmapped = ldap.connection({ attributes: { displayName: 'displayName', email: 'mail', role: null } });
    expect(okBody((await auth(unmapped, 'alice', ldap.user('alice').password!)).body)).toMatchObject({
      profile: { role: null },
    });
  });

  it('finds logins with filter metacharacters, DN escapes and non-ASCII letters', async () => {
    for (const key of ['special', 'comma', 'jose']) {
      const u = ldap.user(key);
      const body = okBody((await auth(ldap.connection(), u.login, u.password!)).body);
      expect(body, key).toMatchObject({ outcome: 'ok', profile: { login: u.login } });
      if (body.outcome === 'ok') expect(normalizeDn(body.profile.dn)).toBe(normalizeDn(u.dn));
    }
  });

  it('uses a configured filter, anonymous search, and the next URL when the first is down', async () => {
    const byMail = ldap.connection({ userFilter: '(&(objectClass=inetOrgPerson)(mail={login}))' });
    expect(okBody((await auth(byMail, 'bob@example.test', ldap.user('bob').password!)).body)).toMatchObject({
      outcome: 'ok',
      profile: { login: 'bob@example.test' },
    });
    const anonymous = ldap.connection({ bindDn: null, bindPassword: null });
    expect(okBody((await auth(anonymous, 'alice', ldap.user('alice').password!)).body)).toMatchObject({
      outcome: 'ok',
    });
    const failover = ldap.connection({ urls: [await closedPortUrl(), ldap.ldapUrl] });
    expect(okBody((await auth(failover, 'alice', ldap.user('alice').password!)).body)).toMatchObject({ outcome: 'ok' });
  });
});

describe('authenticate: Active Directory', () => {
  it(
    'detects AD from the root DSE; sAMAccountName and userPrincipalName logins; objectGUID; memberOf ' + 'roles',
    async () => {
      const ada = ad.user('ada');
      for (const login of ['ada', 'ADA@example.test']) {
        const body = okBody((await auth(ad.connection({ via: 'ldaps' }), login, ada.password!)).body);
        expect(body, login).toEqual({
          outcome: 'ok',
          activeDirectory: true,
          profile: {
            dn: ada.dn,
            login: 'ada',
            externalId: ada.objectGuid,
            displayName: 'Ada Lovelace',
            email: 'ada@example.test',
            role: 'admin',
          },
        });
      }
      const ken = ad.user('ken');
      expect(okBody((await auth(ad.connection(), 'kthompson@example.test', ken.password!)).body)).toMatchObject({
        profile: { login: 'kthompson', role: 'user' },
      });
    },
  );

  it('answers disabled for ACCOUNTDISABLE or LOCKOUT only with the right password', async () => {
    for (const key of ['grace', 'linus']) {
      const u = ad.user(key);
      const reason = key === 'grace' ? 'account-disabled' : 'locked-out';
      expect((await auth(ad.connection(), u.login, u.password!)).body, key).toEqual({ outcome: 'disabled', reason });
      expect((await auth(ad.connection(), u.login, `${u.password!}x`)).body, key).toEqual({
        outcome: 'invalid-credentials',
      });
    }
  });

  it('is not AD when the root DSE lacks directorySignature: no AD defaults, no AD checks', async () => {
    const other = ad.connection({ directorySignature: '1.2.3.4' });
    const grace = ad.user('grace');
    // userFilter null is (uid={login}) outside AD: these entries have no uid.
    expect((await auth(other, 'grace', grace.password!)).body).toEqual({ outcome: 'invalid-credentials' });
    const body = okBody(
      (await auth({ ...other, userFilter: '(sAMAccountName={login})' }, 'grace', grace.password!)).body,
    );
    expect(body).toMatchObject({ outcome: 'ok', activeDirectory: false, profile: { login: 'grace' } });
    if (body.outcome === 'ok') expect(body.profile.externalId).not.toBe(grace.objectGuid);
  });
});

describe('authenticate: wrong credentials', () => {
  it(
    'answers invalid-credentials alike for a wrong password, an unknown login, no password, and two ' + 'matches',
    async () => {
      const cases: [string, string][] = [
        ['alice', 'wrong-password'],
        ['nobody', 'whatever-1'],
        ['nopass', 'anything-2'],
        ['twin', ldap.user('twin1').password!],
      ];
      for (const [login, password] of cases) {
        const r = await auth(ldap.connection(), login, password);
        expect([r.status, r.body], login).toEqual([200, { outcome: 'invalid-credentials' }]);
      }
    },
  );

  it('makes a decoy bind for an unknown login, so timing does not tell which logins exist', async () => {
    const before = ldap.log().length;
    await auth(ldap.connection(), 'nobody-at-all', 'whatever-1');
    expect(ldap.log().slice(before)).toMatch(/BIND dn="cn=[0-9a-f-]{36},dc=example,dc=test"/);
  });
});

describe('authenticate: directory failures', () => {
  it('502 DIRECTORY_TLS when the CA does not verify the server (ldaps://, StartTLS, system roots)', async () => {
    for (const connection of [
      ldap.connection({ via: 'ldaps', caCert: ldap.otherCaCertPem }),
      ldap.connection({ via: 'starttls', caCert: ldap.otherCaCertPem }),
      ldap.connection({ via: 'ldaps', caCert: null }),
    ]) {
      const r = await auth(connection, 'alice', ldap.user('alice').password!);
      expect(r.status).toBe(502);
      expect(problem(r.body)).toMatchObject({
        code: 'DIRECTORY_TLS',
        status: 502,
        type: 'urn:auth-service:problem:directory-tls',
      });
    }
  });

  it('502 DIRECTORY_UNAVAILABLE when nothing listens', async () => {
    const r = await auth(ldap.connection({ urls: [await closedPortUrl()] }), 'alice', 'pw-1');
    expect([r.status, problem(r.body).code]).toEqual([502, 'DIRECTORY_UNAVAILABLE']);
    expect(r.body.detail).toMatch(/ECONNREFUSED/);
  });

  it(
    '504 DIRECTORY_TIMEOUT within the timeouts when the server never answers (bind, TLS handshake, ' + 'StartTLS)',
    async () => {
      for (const [urls, startTls, budget] of [
        [[silent.url], false, 'searchTimeoutMs'],
        [[silent.ldapsUrl], false, 'connectTimeoutMs'],
        [[silent.url], true, 'connectTimeoutMs'],
      ] as const) {
        const connection = ldap.connection({ urls: [...urls], startTls, connectTimeoutMs: 300, searchTimeoutMs: 400 });
        const t0 = Date.now();
        const r = await auth(connection, 'alice', 'pw-1');
        const elapsed = Date.now() - t0;
        expect([r.status, problem(r.body).code], `${urls[0]} ${startTls}`).toEqual([504, 'DIRECTORY_TIMEOUT']);
        expect(elapsed).toBeGreaterThanOrEqual(connection[budget] - 20);
        expect(elapsed).toBeLessThan(connection[budget] + 400);
      }
    },
  );

  it("502 DIRECTORY_ERROR when the service account's bind is refused, never a wrong password", async () => {
    const r = await auth(
      ldap.connection({ bindPassword: 'not-the-service-password' }),
      'alice',
      ldap.user('alice').password!,
    );
    expect(r.status).toBe(502);
    expect(problem(r.body)).toMatchObject({
      code: 'DIRECTORY_ERROR',
      detail: "the service account's bind was refused",
    });
    expect(r.raw).not.toContain('not-the-service-password');
  });

  it('502 DIRECTORY_ERROR for an unknown base DN', async () => {
    const r = await auth(
      ldap.connection({ baseDn: 'ou=nowhere,dc=example,dc=test' }),
      'alice',
      ldap.user('alice').password!,
    );
    expect([r.status, problem(r.body).code]).toEqual([502, 'DIRECTORY_ERROR']);
  });
});

describe('authenticate: security', () => {
  const hostile = [
    '*',
    ')(',
    '\\',
    '\u0000',
    '*)(uid=*',
    'alice)(|(uid=*',
    'al*',
    'a*e',
    '*)(objectClass=*))(|(uid=*',
    '$&',
    '$`',
    'alice\u0000',
    `${'a'.repeat(250)}*`,
    '(uid=alice)',
  ];

  it('logins with filter syntax match only themselves and never fail with a 500', async () => {
    for (const login of hostile) {
      const r = await auth(ldap.connection(), login, ldap.user('alice').password!);
      expect([r.status, r.body], JSON.stringify(login)).toEqual([200, { outcome: 'invalid-credentials' }]);
    }
    // What reached the directory: the metacharacters escaped (RFC 4515).
    expect(ldap.log()).toContain('filter="(uid=\\2A)"');
    expect(ldap.log()).toContain('filter="(uid=\\2A\\29\\28uid=\\2A)"');
    expect(ldap.log()).not.toMatch(/filter="\(uid=\*\)"/);
  });

  it('refuses empty and whitespace-only passwords with 400 before any bind', async () => {
    const binds = () => (ldap.log().match(/ BIND /g) ?? []).length;
    const before = binds();
    for (const password of ['', ' ', '\t \n', '\u00a0']) {
      const res = await post('/v1/ldap/authenticate', { connection: ldap.connection(), login: 'alice', password });
      expect(res.statusCode, JSON.stringify(password)).toBe(400);
      expect(problem(res.json())).toMatchObject({ code: 'BAD_REQUEST', type: 'urn:auth-service:problem:bad-request' });
      expect(res.json().detail).toMatch(/password/);
    }
    await expect(authenticate(ldap.connection(), 'alice', ' \t')).rejects.toBeInstanceOf(BlankPasswordError);
    expect(binds()).toBe(before);
  });

  it('400 names the bad fields and never echoes a password', async () => {
    const connection = { ...ldap.connection(), urls: ['http://example.test/x'], bindPassword: 'SERVICE-SECRET-9' };
    const res = await post('/v1/ldap/authenticate', { connection, login: '', password: 'USER-SECRET-8' });
    expect(res.statusCode).toBe(400);
    const body = problem(res.json());
    expect(body.detail).toContain('connection.urls.0');
    expect(body.detail).toContain('login');
    expect(res.body).not.toMatch(/SECRET/);
    const notJson = await app.inject({
      method: 'POST',
      url: '/v1/ldap/authenticate',
      headers: { 'content-type': 'application/json' },
      payload: '{"password":"USER-SECRET-8"',
    });
    expect(notJson.statusCode).toBe(400);
    expect(problem(notJson.json()).code).toBe('BAD_REQUEST');
    expect(notJson.body).not.toMatch(/SECRET/);
  });

  it('logs no password, and closes every connection it opened', async () => {
    await auth(ldap.connection({ via: 'starttls' }), 'alice', ldap.user('alice').password!);
    await auth(ldap.connection({ bindPassword: 'SERVICE-SECRET-7' }), 'alice', 'USER-SECRET-6');
    for (const u of Object.values(ldap.users)) if (u.password) expect(logs).not.toContain(u.password.trim());
    expect(logs).not.toContain(ldap.servicePassword);
    expect(logs).not.toMatch(/SECRET/);
    expect(logs).toMatch(/ldap authenticate/);
    await new Promise((r) => setTimeout(r, 200));
    const accepted = (ldap.log().match(/ ACCEPT from /g) ?? []).length;
    const closed = (ldap.log().match(/ closed( \(|$)/gm) ?? []).length;
    expect(closed).toBe(accepted);
  });
});

describe('POST /v1/ldap/test', () => {
  const test = async (connection: LdapConnection) => {
    const res = await post('/v1/ldap/test', { connection });
    expect(res.statusCode).toBe(200);
    return LdapTestResponseSchema.parse(res.json());
  };
  const steps = (r: { steps: { step: string; ok: boolean }[] }) =>
    r.steps.map((s) => `${s.step}:${s.ok ? 'ok' : 'FAIL'}`);

  it('runs every step against a healthy directory', async () => {
    const r = await test(ldap.connection({ via: 'starttls' }));
    expect(r).toMatchObject({ ok: true, url: ldap.ldapUrl, activeDirectory: false });
    expect(steps(r)).toEqual(['connect:ok', 'starttls:ok', 'bind:ok', 'rootDse:ok', 'baseDn:ok', 'userFilter:ok']);
    expect(r.steps.every((s) => s.ms >= 0)).toBe(true);
    const adr = await test(ad.connection({ via: 'ldaps' }));
    expect(adr).toMatchObject({ ok: true, url: ad.ldapsUrl, activeDirectory: true });
    expect(adr.steps.find((s) => s.step === 'userFilter')?.detail).toBe(
      '(|(sAMAccountName={login})(userPrincipalName={login}))',
    );
  });

  it('reports the failing step with ok: false instead of an error', async () => {
    const closed = await closedPortUrl();
    const cases: [LdapConnection, string[], RegExp][] = [
      [ldap.connection({ bindPassword: 'nope' }), ['connect:ok', 'bind:FAIL'], /bind was refused/],
      [ldap.connection({ urls: [closed] }), ['connect:FAIL'], /ECONNREFUSED/],
      [ldap.connection({ via: 'ldaps', caCert: ldap.otherCaCertPem }), ['connect:FAIL'], /TLS/],
      [ldap.connection({ via: 'starttls', caCert: ldap.otherCaCertPem }), ['connect:ok', 'starttls:FAIL'], /TLS/],
      [
        ldap.connection({ urls: [silent.url], searchTimeoutMs: 300 }),
        ['connect:ok', 'bind:FAIL'],
        /no answer within 300 ms/,
      ],
      [
        ldap.connection({ baseDn: 'ou=nowhere,dc=example,dc=test' }),
        ['connect:ok', 'bind:ok', 'rootDse:ok', 'baseDn:FAIL'],
        /base DN was not found/,
      ],
    ];
    for (const [connection, expected, detail] of cases) {
      const r = await test(connection);
      expect(r.ok).toBe(false);
      expect(steps(r)).toEqual(expected);
      expect(r.steps.at(-1)?.detail).toMatch(detail);
      expect(JSON.stringify(r)).not.toContain(ldap.servicePassword);
    }
    const failover = await test(ldap.connection({ urls: [closed, ldap.ldapUrl] }));
    expect(failover).toMatchObject({ ok: true, url: ldap.ldapUrl });
    expect(steps(failover).slice(0, 2)).toEqual(['connect:FAIL', 'connect:ok']);
  });
});

describe('helpers', () => {
  it('escapes RFC 4515 metacharacters and keeps UTF-8 literal', () => {
    expect(escapeFilterValue('a*b(c)d\\e\u0000')).toBe('a\\2ab\\28c\\29d\\5ce\\00');
    expect(escapeFilterValue('josé')).toBe('josé');
    expect(userFilterFor('(|(uid={login})(mail={login}))', '$&*')).toBe('(|(uid=$&\\2a)(mail=$&\\2a))');
  });

  it('compares DNs regardless of case, blanks and escaping', () => {
    expect(normalizeDn('CN=Doe\\, John, OU=People,DC=x')).toBe(normalizeDn('cn=doe\\2c john,ou=people,dc=x'));
    expect(normalizeDn('cn=a+uid=b,dc=x')).toBe(normalizeDn('UID=b+CN=a,dc=x'));
    expect(normalizeDn('cn=a\\,b,dc=x')).not.toBe(normalizeDn('cn=a,b=,dc=x'));
    expect(
      mapRole(['cn=Auditors,dc=x', 'CN=ADMINS,DC=X'], { admin: 'cn=admins,dc=x', auditor: 'cn=auditors,dc=x' }),
    ).toBe('admin');
    expect(mapRole(['Auditor'], { admin: null, auditor: null })).toBe('auditor');
    expect(mapRole([], { admin: null, auditor: null })).toBe('user');
  });

  it("names a group by its DN's first RDN value, escapes decoded; puts the escaped DN in a group filter", () => {
    expect(firstRdnValue('cn=Developers,ou=groups,dc=x')).toBe('Developers');
    expect(firstRdnValue('CN=Doe\\, John,OU=Groups,DC=x')).toBe('Doe, John');
    expect(firstRdnValue('cn=caf\\c3\\a9 team+ou=x,dc=x')).toBe('café team');
    expect(firstRdnValue(' cn = spaced ,dc=x')).toBe('spaced');
    expect(firstRdnValue('no-equals')).toBeNull();
    expect(firstRdnValue('cn=,dc=x')).toBeNull();
    expect(groupFilterFor('(&(objectClass=groupOfNames)(member={dn}))', 'uid=a*(b)\\5c,dc=x')).toBe(
      '(&(objectClass=groupOfNames)(member=uid=a\\2a\\28b\\29\\5c5c,dc=x))',
    );
  });

  it('prints objectGUID as AD does', () => {
    expect(
      guidString(
        Uint8Array.from([
          0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
        ]),
      ),
    ).toBe('00112233-4455-6677-8899-aabbccddeeff');
  });
});

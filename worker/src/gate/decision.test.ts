import { describe, expect, it } from 'vitest';
import { DEFAULT_HEADERS, decide, type GateAccount, type GateCredential, type ServiceRule } from './decision.js';
import { normaliseHost, normalisePrefix, normaliseUrl, urlFromParts } from './target.js';

const rule = (over: Partial<ServiceRule>): ServiceRule => ({
  id: 'id',
  name: 'svc',
  hosts: [],
  prefixes: [],
  access: { anyAccount: true, roles: [], accounts: [], groups: [] },
  requireSecondFactor: false,
  allowBasic: false,
  headers: DEFAULT_HEADERS,
  ...over,
});
const open = rule({ name: 'open', hosts: ['open.example.com'] });
const admins = rule({
  name: 'admins',
  hosts: ['admins.example.com'],
  access: { anyAccount: false, roles: ['admin'], accounts: ['u-carol'], groups: ['ops'] },
});
const mfa = rule({ name: 'mfa', hosts: ['mfa.example.com'], requireSecondFactor: true });
const basic = rule({ name: 'basic', hosts: ['basic.example.com'], allowBasic: true });
const app = rule({ name: 'app', prefixes: ['https://open.example.com/app/'] });
const services = [open, admins, mfa, basic, app];

const person = (over: Partial<GateAccount> = {}): GateAccount => ({
  id: 'u-alice',
  login: 'alice',
  displayName: 'Alice',
  email: 'alice@example.com',
  role: 'user',
  groups: [],
  ...over,
});
const session = (account = person(), secondFactor = false): GateCredential => ({
  kind: 'account',
  account,
  method: 'session',
  secondFactor,
});
const token = (account = person()): GateCredential => ({
  kind: 'account',
  account,
  method: 'token',
  secondFactor: false,
});
const limited = (audiences: string[], account = person()): GateCredential => ({
  kind: 'account',
  account,
  method: 'token',
  secondFactor: false,
  audiences,
});
const password = (account = person()): GateCredential => ({
  kind: 'account',
  account,
  method: 'basic',
  secondFactor: false,
});

// credential × service rule → outcome, reason, service (docs/integration.md, "The decision")
const table: [string, GateCredential, string, string, string, string | undefined][] = [
  ['nothing, open service', { kind: 'none' }, 'https://open.example.com/', 'sign-in', 'no-credentials', 'open'],
  ['invalid, open service', { kind: 'invalid' }, 'https://open.example.com/', 'sign-in', 'invalid-credentials', 'open'],
  ['session, open service', session(), 'https://open.example.com/x', 'allow', 'allowed', 'open'],
  ['session, host case and dot', session(), 'https://OPEN.Example.com./x', 'allow', 'allowed', 'open'],
  ['session, unknown host', session(), 'https://other.example.com/', 'refuse', 'unknown-service', undefined],
  ['nothing, unknown host', { kind: 'none' }, 'https://other.example.com/', 'refuse', 'unknown-service', undefined],
  ['session, longest prefix wins', session(), 'https://open.example.com/app/x', 'allow', 'allowed', 'app'],
  ['session, prefix boundary', session(), 'https://open.example.com/apple', 'allow', 'allowed', 'open'],
  ['user, admins only', session(), 'https://admins.example.com/', 'refuse', 'not-allowed', 'admins'],
  [
    'admin, admins only',
    session(person({ role: 'admin' })),
    'https://admins.example.com/',
    'allow',
    'allowed',
    'admins',
  ],
  ['named account', session(person({ id: 'u-carol' })), 'https://admins.example.com/', 'allow', 'allowed', 'admins'],
  ['group member', session(person({ groups: ['ops'] })), 'https://admins.example.com/', 'allow', 'allowed', 'admins'],
  [
    'other group',
    session(person({ groups: ['dev'] })),
    'https://admins.example.com/',
    'refuse',
    'not-allowed',
    'admins',
  ],
  ['session without 2nd factor', session(), 'https://mfa.example.com/', 'second-step', 'second-factor-required', 'mfa'],
  ['session with 2nd factor', session(person(), true), 'https://mfa.example.com/', 'allow', 'allowed', 'mfa'],
  ['API token, 2nd factor', token(), 'https://mfa.example.com/', 'refuse', 'second-factor-required', 'mfa'],
  ['API token, open', token(), 'https://open.example.com/', 'allow', 'allowed', 'open'],
  ['Basic, not allowed', password(), 'https://open.example.com/', 'sign-in', 'basic-not-allowed', 'open'],
  [
    'Basic refused unchecked',
    { kind: 'basic-refused' },
    'https://open.example.com/',
    'sign-in',
    'basic-not-allowed',
    'open',
  ],
  ['Basic, allowed', password(), 'https://basic.example.com/', 'allow', 'allowed', 'basic'],
  // API token audiences (docs/api.md, "API token audiences"): only the services named, and only where the owner may.
  ['token for open, open', limited(['open']), 'https://open.example.com/', 'allow', 'allowed', 'open'],
  [
    'token for open, an admin at admins',
    limited(['open'], person({ role: 'admin' })),
    'https://admins.example.com/',
    'refuse',
    'token-audience',
    'admins',
  ],
  [
    'token for admins, a user at admins',
    limited(['admins']),
    'https://admins.example.com/',
    'refuse',
    'not-allowed',
    'admins',
  ],
  ['token for nothing known', limited([]), 'https://open.example.com/', 'refuse', 'token-audience', 'open'],
];

describe('decide', () => {
  it.each(table)('%s', (_, credential, raw, outcome, reason, service) => {
    const d = decide({ credential, url: normaliseUrl(raw), services, method: 'GET', clientAddress: '192.0.2.1' });
    expect([d.outcome, d.reason, d.service?.name]).toEqual([outcome, reason, service]);
  });

  it('refuses a target it cannot read', () => {
    const d = decide({ credential: session(), url: undefined, services, method: 'GET', clientAddress: null });
    expect([d.outcome, d.reason]).toEqual(['refuse', 'bad-target']);
  });

  it('passes the identity under the service names, groups included, non-ASCII encoded', () => {
    const renamed = rule({ hosts: ['open.example.com'], headers: { ...DEFAULT_HEADERS, user: 'X-User' } });
    const d = decide({
      credential: session(person({ displayName: 'Алиса\r\nX: y', groups: ['ops', 'dev'] })),
      url: normaliseUrl('https://open.example.com/'),
      services: [renamed],
      method: 'GET',
      clientAddress: null,
    });
    expect(d.outcome === 'allow' && d.headers).toEqual({
      'X-User': 'alice',
      'Remote-Name': encodeURIComponent('Алиса\r\nX: y'),
      'Remote-Email': 'alice@example.com',
      'Remote-Groups': 'ops,dev',
      'Remote-Role': 'user',
    });
  });
});

describe('target normalisation', () => {
  it('normalises hosts: case, trailing dot, IDNA, port', () => {
    expect(normaliseHost('App.Example.COM.')).toBe('app.example.com');
    expect(normaliseHost('bücher.example')).toBe('xn--bcher-kva.example');
    expect(normaliseHost('Example.com:8443')).toBe('example.com:8443');
    for (const bad of ['', 'a b', 'evil.test/x', 'user@host', 'a\\b', 'a%2fb', 'a\tb', '..', 'x..y'])
      expect(normaliseHost(bad), bad).toBeUndefined();
  });

  it('refuses every ambiguous URL shape', () => {
    for (const bad of [
      'https://user@open.example.com/',
      'https://open.example.com@evil.test/',
      'https:\\\\evil.test/',
      'https:evil.test',
      '//evil.test/',
      'javascript:alert(1)',
      'https://open.example.com/%0d%0aSet-Cookie:x',
      'https://open.example.com/a%2f..%2fb',
      'https://open.example.com/a\\b',
      'https://open.example.com/%20',
      'https://open.example.com/\t',
    ])
      expect(normaliseUrl(bad), bad).toBeUndefined();
    expect(normaliseUrl('https://open.example.com/a/../b/%2e%2e/c')?.href).toBe('https://open.example.com/c');
  });

  it('builds the URL of forwarded parts', () => {
    expect(urlFromParts('HTTPS', 'Open.Example.com.', '/x?y=1')?.href).toBe('https://open.example.com/x?y=1');
    expect(urlFromParts('https', 'open.example.com', '//evil.test/')).toBeUndefined();
    expect(urlFromParts('ftp', 'open.example.com', '/')).toBeUndefined();
    expect(urlFromParts('https', 'open.example.com', 'x')).toBeUndefined();
    expect(normalisePrefix('https://Open.example.com./app/')).toBe('https://open.example.com/app/');
    expect(normalisePrefix('https://open.example.com/app/?x')).toBeUndefined();
  });
});

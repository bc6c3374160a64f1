/**
 * The audit trail end to end, on both hosts: what users and administrators do is recorded in the
 * outbox and shipped (kicked after the response: OUTBOX_CONTEXT_DETACH) through the bridge over
 * mutual TLS into the TEST LOG STORE (test/harness/logstore: a protocol-level stand-in for
 * OpenSearch/Elasticsearch, which cannot be installed here), each event in the dated index of its
 * stream, in the documented shape; then the auditor finds them through /v3/logs. The calls made to
 * external services on a user's behalf (ext_service_access) go to real servers: slapd, the test
 * OpenID provider (oidc-provider) and an SMTP server (smtp-server).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EVENT_CATALOGUE, eventTypesOf, type AuditStream } from '../../worker/src/audit/catalogue.js';
import { Browser } from '../harness/browser.js';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { addLdapServer } from '../harness/ldap-records.js';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';
import type { StoredDoc } from '../harness/logstore/query.js';
import { startTestProvider, throughProvider, type TestProvider } from '../harness/oidc-provider.js';
import { closedPortUrl, startSlapd, type Slapd } from '../harness/slapd.js';
import { startTestSmtp, type TestSmtp } from '../harness/smtp.js';

let host: RunningHost;
let bridge: TestBridge;
let store: TestLogStore;
let slapd: Slapd;
let smtp: TestSmtp;
let idp: TestProvider;
const idpName = `trail${Date.now().toString(36)}`;
const SMTP_PASS = 'M@il-pass-trail';
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Str0ng$pass';

type Json = Record<string, any>;
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

/** Waits until the store holds a document matching `match` (shipping runs after the responses). */
async function shipped(match: (d: StoredDoc) => boolean, timeoutMs = 30_000): Promise<StoredDoc> {
  return eventually(
    async () => {
      const found = store.documents('*').find(match);
      if (found) return found;
      // A request that may write events kicks the shipping again (at most once a second).
      await api('/v3/logout', { method: 'POST' });
      throw new Error(
        `the store has ${store
          .documents('*')
          .map((d) => `${d.index}:${(d.source.event as Json)?.type}`)
          .join(', ')}`,
      );
    },
    { timeoutMs, intervalMs: 100, what: 'the event shipped' },
  );
}
const typeIs = (type: string, login?: string) => (d: StoredDoc) => {
  const s = d.source as Json;
  return s.event?.type === type && (login === undefined || s.subject?.login === login || s.actor?.login === login);
};
const today = () => new Date().toISOString().slice(0, 10).replaceAll('-', '.');

beforeAll(async () => {
  [store, slapd, smtp] = await Promise.all([
    startTestLogStore({ nodes: 2 }),
    startSlapd(),
    startTestSmtp({ tls: 'starttls', auth: { user: 'mailer', pass: SMTP_PASS } }),
  ]);
  bridge = await startTestBridge({ logstore: { ca: store.caPem }, mail: { ca: smtp.ca } });
  host = await startTestHost(inject('hostKind'), {
    ...bridge.env,
    LOGSTORE_VERIFY_CERTS: 'True',
    EMAIL_HOST: '127.0.0.1',
    EMAIL_PORT: String(smtp.port),
    EMAIL_USE_TLS: 'True',
    EMAIL_HOST_USER: 'mailer',
    EMAIL_HOST_PASSWORD: SMTP_PASS,
    EMAIL_FROM: 'Auth service <noreply@auth.test>',
  });
  const r = await api('/v3/settings', {
    method: 'PATCH',
    auth: admin,
    json: { values: { LOGSTORE_URLS: store.urls.join(';') } },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  idp = await startTestProvider([`${host.url}/v3/oidc/callback/${idpName}`]);
  const added = await api('/v3/settings/identity-providers', {
    method: 'POST',
    auth: admin,
    json: { name: idpName, issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
  });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  await addLdapServer(host, 'trail-ldap', slapd, 'ldap');
  await addLdapServer(host, 'trail-ldap-down', slapd, 'ldap', { urls: [await closedPortUrl()] });
}, 180_000);

afterAll(async () => {
  await host?.stop();
  await Promise.all([bridge?.stop(), store?.stop(), slapd?.stop(), smtp?.stop(), idp?.close()]);
});

describe('the audit trail in the log store', () => {
  it("users' and administrators' actions land in their streams' dated indices, in the documented shape", async () => {
    const login = uniqueLogin('trail');
    expect((await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD } })).status).toBe(
      201,
    );
    expect((await api('/v3/login_without_session', { method: 'POST', auth: basic(login, 'Wr0ng$pass') })).status).toBe(
      401,
    );
    expect((await api('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(200);
    const token = await api<{ id: string }>('/v4/users/me/tokens', {
      method: 'POST',
      auth: basic(login, PASSWORD),
      json: { name: 'ci' },
    });
    expect(token.status).toBe(201);

    const created = await shipped(typeIs('user.created', login));
    expect(created.index).toBe(`svc-sec-crud-admin-logs-${today()}`);
    expect(created.source).toMatchObject({
      event: { id: created.id, type: 'user.created', stream: 'crud_admin' },
      actor: { login: ADMIN.login },
      subject: { login },
      request: { id: expect.any(String) },
      service: { name: 'auth-service' },
    });
    expect(Date.parse(String(created.source['@timestamp']))).toBeGreaterThan(Date.now() - 600_000);

    const failure = await shipped(typeIs('login.failure', login));
    expect(failure.index).toBe(`svc-sec-user-activity-${today()}`);
    expect(failure.source).toMatchObject({
      event: { stream: 'user_activity', outcome: 'failure' },
      subject: { login },
    });
    expect((await shipped(typeIs('login.success', login))).source).toMatchObject({ event: { outcome: 'success' } });
    const issued = await shipped(typeIs('token.issued', login));
    expect(issued.index).toBe(`svc-sec-crud-user-logs-${today()}`);
    // No secret in any document.
    expect(JSON.stringify(store.documents('*'))).not.toContain(PASSWORD);
  });

  it('each event is delivered once: the store holds every id at most once, and the outbox empties', async () => {
    const ids = store.documents('*').map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    const pipeline = await api<{ streams: Array<{ stream: string; depth: number; deadLetters: number }> }>(
      '/v3/logs/pipeline',
      { auth: admin },
    );
    expect(pipeline.status).toBe(200);
    for (const s of pipeline.body.streams) expect(s.deadLetters, s.stream).toBe(0);
  });

  it('an auditor finds the events just made through /v3/logs', async () => {
    const login = uniqueLogin('aud');
    expect(
      (await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD, role: 'auditor' } }))
        .status,
    ).toBe(201);
    await shipped(typeIs('user.created', login));
    const found = await api<{ items: Json[] }>(`/v3/logs/crud_admin/events?user=${encodeURIComponent(login)}`, {
      auth: basic(login, PASSWORD),
    });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.items.map((i) => i.event.type)).toContain('user.created');
  });
});

const extIndex = () => `svc-sec-ext-service-access-${today()}`;
const extOf = (type: string, match: (s: Json) => boolean) => (d: StoredDoc) => {
  const s = d.source as Json;
  return s.event?.type === type && match(s);
};

describe('external-service access (ext_service_access)', () => {
  it('an LDAP login: ldap.authenticate per record with its outcome and error class, never the password', async () => {
    const bob = slapd.user('bob');
    const ldap = (server: string, login: string, password: string) =>
      api('/v3/login_without_session', {
        method: 'POST',
        auth: basic(login, password),
        headers: { 'X-LDAP-Name': server },
      });
    expect((await ldap('trail-ldap', bob.login, bob.password!)).status).toBe(200);
    expect((await ldap('trail-ldap', bob.login, 'Wr0ng-directory-pass')).status).toBe(401);
    expect((await ldap('trail-ldap-down', bob.login, bob.password!)).status).toBe(502);

    const ok = await shipped(
      extOf('ldap.authenticate', (s) => s.data?.server === 'trail-ldap' && s.data?.result === 'ok'),
    );
    expect(ok.index).toBe(extIndex());
    expect(ok.source).toMatchObject({
      event: { id: ok.id, type: 'ldap.authenticate', stream: 'ext_service_access', outcome: 'success' },
      subject: { login: bob.login },
      request: { id: expect.any(String) },
      service: { name: 'auth-service' },
      data: { server: 'trail-ldap', result: 'ok', activeDirectory: false, durationMs: expect.any(Number) },
    });
    // Written with the login's own writes: the login.success of the same request.
    const success = await shipped(
      (d) =>
        (d.source as Json).event?.type === 'login.success' &&
        (d.source as Json).request?.id === (ok.source as Json).request.id,
    );
    expect((success.source as Json).data).toMatchObject({ source: 'ldap', server: 'trail-ldap' });

    const wrong = await shipped(extOf('ldap.authenticate', (s) => s.data?.result === 'invalid-credentials'));
    expect(wrong.source).toMatchObject({
      event: { outcome: 'failure' },
      subject: { login: bob.login },
      data: { server: 'trail-ldap' },
    });
    const down = await shipped(extOf('ldap.authenticate', (s) => s.data?.server === 'trail-ldap-down'));
    expect(down.source).toMatchObject({
      event: { outcome: 'failure' },
      data: { result: 'error', errorClass: 'DIRECTORY_UNAVAILABLE' },
    });

    // An administrator's connection test is recorded too.
    expect((await api('/v3/settings/ldap-servers/trail-ldap/test', { method: 'POST', auth: admin })).status).toBe(200);
    const test = await shipped(extOf('ldap.test', (s) => s.data?.server === 'trail-ldap'));
    expect(test.source).toMatchObject({ event: { outcome: 'success' }, actor: { login: ADMIN.login } });

    const all = JSON.stringify(store.documents('*'));
    for (const secret of [bob.password!, 'Wr0ng-directory-pass', slapd.servicePassword])
      expect(all).not.toContain(secret);
  });

  it(
    'an OIDC login: oidc.token_exchange with the provider, status class and duration, never the code ' + 'or tokens',
    async () => {
      const user = uniqueLogin('oidctrail');
      const b = new Browser(new URL(host.url).origin);
      const callbackUrl = await throughProvider(b, host.url, idpName, user);
      const code = new URL(callbackUrl).searchParams.get('code')!;
      expect(code.length).toBeGreaterThan(10);
      const done = await b.fetch(callbackUrl);
      expect(done.status).toBe(303);

      const exchange = await shipped(extOf('oidc.token_exchange', (s) => s.subject?.login === user));
      expect(exchange.index).toBe(extIndex());
      expect(exchange.source).toMatchObject({
        event: { type: 'oidc.token_exchange', stream: 'ext_service_access', outcome: 'success' },
        request: { id: expect.any(String) },
        data: { provider: idpName, statusClass: '2xx', durationMs: expect.any(Number) },
      });
      // The same request's login, written in one batch with it.
      await shipped(
        (d) =>
          (d.source as Json).event?.type === 'login.success' &&
          (d.source as Json).request?.id === (exchange.source as Json).request.id,
      );

      // The used code again, in a new login's flow: the provider refuses it, a failure with its OAuth error.
      const again = new Browser(new URL(host.url).origin);
      const start = await again.fetch(`${host.url}/v3/oidc/login/${idpName}`);
      expect(start.status).toBe(302);
      const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
      const replay = new URL(callbackUrl);
      replay.searchParams.set('state', state);
      expect((await again.fetch(replay.href)).status).toBe(400);
      const refused = await shipped(
        extOf('oidc.token_exchange', (s) => s.event?.outcome === 'failure' && s.data?.provider === idpName),
      );
      expect(refused.source).toMatchObject({
        data: { statusClass: '4xx', error: 'invalid_grant', durationMs: expect.any(Number) },
      });
      const all = JSON.stringify(store.documents('*'));
      for (const secret of [code, state, idp.clientSecret]) expect(all).not.toContain(secret);
    },
  );

  it('a mail: mail.send with the kind, the masked recipient and the cause, never the reset token', async () => {
    const login = uniqueLogin('mailtrail');
    const email = `${login}@example.com`;
    expect(
      (await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD, email } })).status,
    ).toBe(201);
    expect((await api('/v3/password_reset/request', { method: 'POST', json: { login } })).status).toBe(202);
    const deadline = Date.now() + 20_000;
    let token: string | undefined;
    while (!token && Date.now() < deadline) {
      const mail = smtp.received.find((m) => m.to.includes(email) && /#token=/.test(m.parsed.text ?? ''));
      token = mail ? /#token=([A-Za-z0-9_-]{40,})/.exec(mail.parsed.text ?? '')?.[1] : undefined;
      if (!token) await new Promise((r) => setTimeout(r, 100));
    }
    expect(token).toBeDefined();

    const sent = await shipped(
      extOf('mail.send', (s) => s.subject?.login === login && s.data?.kind === 'password_reset'),
    );
    expect(sent.index).toBe(extIndex());
    const requested = await shipped(typeIs('password_reset.requested', login));
    expect(sent.source).toMatchObject({
      event: { type: 'mail.send', stream: 'ext_service_access', outcome: 'success' },
      subject: { login },
      request: { id: (requested.source as Json).request.id },
      data: {
        kind: 'password_reset',
        recipient: `${login[0]}***@example.com`,
        causeEventId: requested.id,
        attempt: 1,
        result: 'sent',
        durationMs: expect.any(Number),
      },
    });
    const all = JSON.stringify(store.documents('*'));
    for (const secret of [token!, email, SMTP_PASS]) expect(all).not.toContain(secret);
  });

  it('no secret in any recorded event: passwords, codes, tokens', async () => {
    const all = JSON.stringify(store.documents('*'));
    for (const secret of [PASSWORD, ADMIN.password, SMTP_PASS, idp.clientSecret, slapd.servicePassword])
      expect(all).not.toContain(secret);
    expect(all).not.toMatch(/ast_[A-Za-z0-9_-]{20,}/);
  });
});

describe('the event catalogue through the API', () => {
  it('audit_log_types lists, per stream, its event types from the catalogue', async () => {
    const r = await api<{ items: Array<{ name: AuditStream; eventTypes: Json[] }> }>('/v3/logs/audit_log_types', {
      auth: admin,
    });
    expect(r.status).toBe(200);
    for (const item of r.body.items) {
      expect(
        item.eventTypes.map((e) => e.type),
        item.name,
      ).toEqual(eventTypesOf(item.name));
      for (const e of item.eventTypes) {
        const spec = EVENT_CATALOGUE[e.type as keyof typeof EVENT_CATALOGUE];
        expect(e).toEqual({
          type: e.type,
          outcomes: [...spec.outcomes],
          description: spec.description,
          data: { ...spec.data },
        });
      }
    }
    expect(r.body.items.find((i) => i.name === 'ext_service_access')!.eventTypes.map((e) => e.type)).toEqual([
      'service.access',
      'ldap.authenticate',
      'ldap.test',
      'oidc.token_exchange',
      'mail.send',
    ]);
  });

  it("the logs endpoints' OpenAPI descriptions carry the catalogue", async () => {
    const doc = await api<{ paths: Record<string, Record<string, { description: string }>> }>('/openapi.json');
    const path = (p: string) => doc.body.paths[`/v3/logs/{audit_log_type}/${p}`]!;
    const ops = [path('search').post!, path('field_caps').post!, path('events').get!, path('export').get!];
    for (const op of ops)
      for (const type of Object.keys(EVENT_CATALOGUE)) expect(op.description).toContain(`| \`${type}\` |`);
  });
});

/**
 * Rows of the gate's decision table that gate.test.ts does not drive over HTTP (docs/integration.md, "The
 * decision"): an API token made with scopes, a blocked account's session, Basic where a second factor is
 * required; and the gate's `service.access` events in their windows ("Audit and metrics"), on both hosts (a
 * host of its own: its clock moves): within one window of AUDIT_API_ACCESS_WINDOW_SEC an
 * admission is written once per credential (session or API token) and service, a refusal once per
 * service, reason, account and client address whatever the credential; the next window writes them again.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, testClock, uniqueLogin } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Gate$audit1';
const WINDOW_MS = 60_000;
let host: RunningHost;
const clock = testClock(() => host?.url);

beforeAll(async () => {
  host = await startTestHost(kind, { AUTH_TRUSTED_PROXIES: '127.0.0.1,::1' });
});
afterAll(async () => {
  await host?.stop();
});

/**
 * Asks the Caddy/Traefik endpoint about `http://{hostName}/` (node:http: fetch adds Sec-Fetch-Mode); the
 * status and body of its answer.
 */
function decideFully(hostName: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const forwarded = {
    'X-Forwarded-Method': 'GET',
    'X-Forwarded-Proto': 'http',
    'X-Forwarded-Host': hostName,
    'X-Forwarded-Uri': '/',
  };
  return new Promise((resolve, reject) => {
    const url = new URL(`${host.url}/v4/authz/forward-auth`);
    const req = request(url, { headers: { ...forwarded, ...headers } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The status of the answer about `http://{hostName}/`. */
const decide = async (hostName: string, headers: Record<string, string>) =>
  (await decideFully(hostName, headers)).status;

/** A local account and its session cookie. */
async function account(): Promise<{ login: string; id: string; cookie: Record<string, string> }> {
  const login = uniqueLogin('wa');
  const made = await callJson<{ id: string }>('/v4/users', {
    base: host.url,
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD },
  });
  expect(made.status).toBe(201);
  const signedIn = await fetch(`${host.url}/v3/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ login, password: PASSWORD }),
  });
  expect(signedIn.status).toBe(200);
  const cookie = signedIn.headers
    .getSetCookie()
    .find((c) => c.startsWith('auth_session='))!
    .split(';')[0]!;
  return { login, id: made.body.id, cookie: { Cookie: cookie } };
}

describe('the decision table over HTTP', () => {
  it(
    'a scoped API token and a blocked account sign in again; Basic is refused where a second factor is ' + 'required',
    async () => {
      const tag = uniqueLogin('t');
      for (const json of [
        { name: `${tag}-open`, hosts: [`${tag}-open.test`] },
        { name: `${tag}-strong`, hosts: [`${tag}-strong.test`], requireSecondFactor: true, allowBasic: true },
      ]) {
        const r = await callJson('/v4/services', { base: host.url, method: 'POST', auth: admin, json });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
      const someone = await account();
      const reasonOf = async (hostName: string, headers: Record<string, string>) => {
        const r = await decideFully(hostName, headers);
        return [r.status, (JSON.parse(r.body || '{}') as { reason?: string }).reason ?? 'allowed'];
      };
      const scoped = await callJson<{ token: string }>('/v4/users/me/tokens', {
        base: host.url,
        method: 'POST',
        auth: basic(someone.login, PASSWORD),
        json: { name: 'scoped', scopes: ['account:read'] },
      });
      expect(scoped.status, JSON.stringify(scoped.body)).toBe(201);
      expect(await reasonOf(`${tag}-open.test`, { Authorization: `Bearer ${scoped.body.token}` })).toEqual([
        401,
        'invalid-credentials',
      ]);
      const password = { Authorization: basic(someone.login, PASSWORD) };
      expect(await reasonOf(`${tag}-strong.test`, password)).toEqual([403, 'second-factor-required']);
      expect(await reasonOf(`${tag}-open.test`, password)).toEqual([401, 'basic-not-allowed']);
      expect(await reasonOf(`${tag}-open.test`, someone.cookie)).toEqual([200, 'allowed']);
      const blocked = await callJson(`/v4/users/${someone.id}/block`, { base: host.url, method: 'POST', auth: admin });
      expect(blocked.status, JSON.stringify(blocked.body)).toBe(200);
      expect(await reasonOf(`${tag}-open.test`, someone.cookie)).toEqual([401, 'invalid-credentials']);
    },
  );
});

type Event = { event: { outcome: string }; data: { service: string; outcome: string; reason: string } };

describe('service.access events', () => {
  it(
    'admissions once per credential and service, refusals once per service, reason, account and ' +
      'address, per window',
    async () => {
      const tag = uniqueLogin('w');
      const names = { open: `${tag}-open`, closed: `${tag}-closed`, strong: `${tag}-strong` };
      for (const json of [
        { name: names.open, hosts: [`${names.open}.test`] },
        { name: names.closed, hosts: [`${names.closed}.test`], access: { anyAccount: false, roles: ['admin'] } },
        { name: names.strong, hosts: [`${names.strong}.test`], requireSecondFactor: true },
      ]) {
        const r = await callJson('/v4/services', { base: host.url, method: 'POST', auth: admin, json });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
      const login = uniqueLogin('wa');
      const made = await callJson('/v4/users', {
        base: host.url,
        method: 'POST',
        auth: admin,
        json: { login, password: PASSWORD },
      });
      expect(made.status).toBe(201);
      const signedIn = await fetch(`${host.url}/v3/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ login, password: PASSWORD }),
      });
      const cookie = {
        Cookie: signedIn.headers
          .getSetCookie()
          .find((c) => c.startsWith('auth_session='))!
          .split(';')[0]!,
      };
      const made2 = await callJson<{ token: string }>('/v4/users/me/tokens', {
        base: host.url,
        method: 'POST',
        auth: basic(login, PASSWORD),
        json: { name: 'w' },
      });
      const token = { Authorization: `Bearer ${made2.body.token}` };

      // One second into a window of the service's clock (windows are whole multiples of their length).
      await clock.move(WINDOW_MS - (Date.now() % WINDOW_MS) + 1_000);
      const at = (h: string) => `${h}.test`;
      for (let i = 0; i < 3; i++) expect(await decide(at(names.open), cookie)).toBe(200);
      for (let i = 0; i < 2; i++) expect(await decide(at(names.open), token)).toBe(200);
      for (let i = 0; i < 3; i++) expect(await decide(at(names.closed), cookie)).toBe(403);
      for (let i = 0; i < 2; i++) expect(await decide(at(names.strong), token)).toBe(403);
      // The same refusal through another credential of the account: the same key.
      expect(await decide(at(names.closed), token)).toBe(403);
      // The next window writes them again.
      await clock.move(WINDOW_MS - (Date.now() % WINDOW_MS) + WINDOW_MS + 1_000);
      expect(await decide(at(names.open), cookie)).toBe(200);
      expect(await decide(at(names.closed), cookie)).toBe(403);

      const path = `/v3/logs/ext_service_access/events?type=service.access&user=${encodeURIComponent(login)}&size=100`;
      const events = await eventually(
        async () => {
          const r = await callJson<{ items: Event[] }>(path, { base: host.url, auth: admin });
          const items = r.body.items ?? [];
          if (items.length < 6) throw new Error(`${items.length} events so far`);
          return items;
        },
        { what: 'the six service.access events', timeoutMs: 15_000 },
      );
      const keys = events.map((e) => `${e.data.service} ${e.data.outcome} ${e.data.reason}`).sort();
      expect(keys).toEqual(
        [
          `${names.open} allow allowed`,
          `${names.open} allow allowed`,
          `${names.open} allow allowed`,
          `${names.closed} refuse not-allowed`,
          `${names.closed} refuse not-allowed`,
          `${names.strong} refuse second-factor-required`,
        ].sort(),
      );
    },
  );
});

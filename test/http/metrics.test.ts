/**
 * GET ROOT_PATH/metrics (docs/operations.md, "Metrics") on both hosts: the scrape token, the Prometheus text format
 * (a strict grammar check and the parse-prometheus-text-format parser), and each family moving with
 * what it counts. Its own host (token set, a real bridge and slapd, no background shipping, so the outbox
 * only grows); the shared host has no token and shows the disabled endpoint.
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, MINUTE, basic, call, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { addLdapServer } from '../harness/ldap-records.js';
import { histogramOf, parseExposition, sampleValue } from '../harness/prometheus.js';
import { startSlapd, type Slapd } from '../harness/slapd.js';

const TOKEN = 'metrics-scrape-token-0123456789abcdef-XYZ';
const PASSWORD = 'Str0ng$pass';
const WRONG = 'Wr0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);

let host: RunningHost;
let bridge: TestBridge;
let slapd: Slapd;
let root: string;
let bridgeStopped = false;

const api = (path: string, o: Call = {}) => callJson(path, { base: host.url, ...o });
const setClock = async (offsetMs: number) => {
  const r = await call('/__test__/clock', { base: host.url, method: 'POST', json: { offsetMs } });
  expect(r.status).toBe(200);
};

/** Scrapes the test host; checks the answer and returns the text and its parsed families. */
async function scrape() {
  const res = await call('/metrics', { base: host.url, auth: `Bearer ${TOKEN}` });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return { text, families: parseExposition(text) };
}
type Scrape = Awaited<ReturnType<typeof scrape>>;
const value = (s: Scrape, name: string, labels: Record<string, string> = {}) =>
  sampleValue(s.families, name, labels) ?? NaN;

async function createUser(login: string) {
  const r = await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: PASSWORD } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return (r.body as { id: string }).id;
}
const loginWithoutSession = (login: string, password: string) =>
  api('/v3/login_without_session', { method: 'POST', auth: basic(login, password) });

beforeAll(async () => {
  [bridge, slapd] = await Promise.all([startTestBridge(), startSlapd()]);
  const quiet = { OUTBOX_CONTEXT_DETACH: 'False', IN_APP_SCHEDULER_ENABLED: 'False' };
  host = await startTestHost(inject('hostKind'), { ...bridge.env, ...quiet, AUTH_METRICS_TOKEN: TOKEN });
  root = new URL(host.url).pathname.replace(/\/$/, '');
  await addLdapServer(host, 'corp', slapd, 'ldap');
}, 180_000);
afterAll(async () => {
  await host?.stop();
  if (!bridgeStopped) await bridge?.stop();
  await slapd?.stop();
});
afterEach(() => setClock(0));

describe('GET /metrics: access', () => {
  it('is disabled (404 problem) while AUTH_METRICS_TOKEN is unset (the shared host)', async () => {
    const r = await callJson('/metrics', { auth: `Bearer ${TOKEN}` });
    expect(r.status).toBe(404);
    expect(r.res.headers.get('content-type')).toContain('application/problem+json');
    expect(r.body).toMatchObject({ code: 'NOT_FOUND', detail: expect.stringContaining('AUTH_METRICS_TOKEN') });
  });

  it('needs the Bearer scrape token: none, a wrong one, a prefix of it or an admin password are 401', async () => {
    for (const auth of [
      undefined,
      'Bearer wrong-token',
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}x`,
      admin,
      `Basic ${TOKEN}`,
    ]) {
      const r = await api('/metrics', auth ? { auth } : {});
      expect(r.status, String(auth)).toBe(401);
      expect(r.body).toMatchObject({ code: 'UNAUTHENTICATED' });
      expect(r.res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(JSON.stringify(r.body)).not.toContain(TOKEN);
    }
    const ok = await scrape();
    expect(ok.text).toContain('# TYPE auth_http_requests_total counter');
  });
});

describe('GET /metrics: what it counts', () => {
  it('counts requests by route pattern (never the raw path) and status, with a latency histogram', async () => {
    const before = await scrape();
    const id = crypto.randomUUID();
    const missing = await api(`/v4/users/${id}`, { auth: admin });
    expect(missing.status).toBe(404);
    for (let i = 0; i < 2; i++) expect((await api('/health/live')).status).toBe(200);
    expect((await api(`/no-such-path-${id}`)).status).toBe(404);
    const after = await scrape();

    const userRoute = { method: 'GET', route: `${root}/v4/users/:userId` };
    const live = { method: 'GET', route: `${root}/health/live` };
    const delta = (labels: Record<string, string>) =>
      value(after, 'auth_http_requests_total', labels) - value(before, 'auth_http_requests_total', labels);
    expect(delta({ ...userRoute, status: '404' })).toBe(1);
    expect(delta({ ...live, status: '200' })).toBe(2);
    expect(delta({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    // The ids of the requests are in no label.
    expect(after.text).not.toContain(id);

    const h0 = histogramOf(before.text, 'auth_http_request_duration_seconds', live);
    const h1 = histogramOf(after.text, 'auth_http_request_duration_seconds', live)!;
    expect(h1.count - (h0?.count ?? 0)).toBe(2);
    expect(h1.buckets['+Inf']).toBe(h1.count);
    const le = (k: string) => (k === '+Inf' ? Infinity : Number(k));
    const cumulative = Object.entries(h1.buckets)
      .sort(([a], [b]) => le(a) - le(b))
      .map(([, n]) => n);
    expect(cumulative).toHaveLength(12);
    expect(cumulative).toEqual([...cumulative].sort((a, b) => a - b));
    expect(h1.sum).toBeGreaterThanOrEqual(0);
  });

  it('counts logins by method and outcome, and lockouts', async () => {
    const login = uniqueLogin('m');
    await createUser(login);
    const before = await scrape();
    expect((await loginWithoutSession(login, PASSWORD)).status).toBe(200);
    expect((await loginWithoutSession(login, WRONG)).status).toBe(401);
    const mid = await scrape();
    const logins = (s: Scrape, outcome: string) => value(s, 'auth_logins_total', { method: 'local', outcome });
    expect(logins(mid, 'success') - logins(before, 'success')).toBe(1);
    expect(logins(mid, 'failure') - logins(before, 'failure')).toBe(1);
    expect(
      value(mid, 'auth_lockouts_total', { method: 'local' }) -
        value(before, 'auth_lockouts_total', { method: 'local' }),
    ).toBe(0);

    // Two more failures reach AUTH_FAILED_COUNT (3): the login locks; the next attempt is refused unchecked.
    for (let i = 0; i < 2; i++)
      expect((await loginWithoutSession(login, WRONG)).body).toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect((await loginWithoutSession(login, PASSWORD)).body).toMatchObject({ code: 'ACCOUNT_LOCKED' });
    const after = await scrape();
    expect(
      value(after, 'auth_lockouts_total', { method: 'local' }) - value(mid, 'auth_lockouts_total', { method: 'local' }),
    ).toBe(1);
    expect(logins(after, 'failure') - logins(mid, 'failure')).toBe(2);
    expect(logins(after, 'locked') - logins(mid, 'locked')).toBe(1);
    expect(after.text).not.toContain(login);
  });

  it('counts LDAP logins under method ldap', async () => {
    const alice = slapd.user('alice');
    const ldapLogin = (password: string) =>
      api('/v3/login_without_session', {
        method: 'POST',
        auth: basic(alice.login, password),
        headers: { 'X-LDAP-Name': 'corp' },
      });
    const before = await scrape();
    expect((await ldapLogin(alice.password!)).status).toBe(200);
    expect((await ldapLogin(WRONG)).status).toBe(401);
    const after = await scrape();
    const ldap = (s: Scrape, outcome: string) => value(s, 'auth_logins_total', { method: 'ldap', outcome });
    expect(ldap(after, 'success') - ldap(before, 'success')).toBe(1);
    expect(ldap(after, 'failure') - ldap(before, 'failure')).toBe(1);
    expect(after.text).not.toContain(alice.login);
  });

  it('a login refused for inactivity (its event written conditionally) is counted once, as refused', async () => {
    const login = uniqueLogin('i');
    await createUser(login);
    await setClock(46 * 24 * 60 * MINUTE); // past USER_INACTIVE_TIMEOUT_DAY (45)
    const before = await scrape();
    const r = await loginWithoutSession(login, PASSWORD);
    expect(r.body).toMatchObject({ code: 'ACCOUNT_BLOCKED' });
    const after = await scrape();
    const refused = (s: Scrape) => value(s, 'auth_logins_total', { method: 'local', outcome: 'refused' });
    expect(refused(after) - refused(before)).toBe(1);
    const success = (s: Scrape) => value(s, 'auth_logins_total', { method: 'local', outcome: 'success' });
    expect(success(after) - success(before)).toBe(0);
  });

  it('active sessions are read from the database: a login adds one, the idle timeout ends it', async () => {
    const login = uniqueLogin('s');
    await createUser(login);
    const before = await scrape();
    const r = await api('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const after = await scrape();
    const active = (s: Scrape) => value(s, 'auth_sessions_active', { kind: 'cookie' });
    expect(active(after) - active(before)).toBe(1);
    // Past SESSION_IDLE_TIMEOUT_MIN (120) no session of this host is live any more.
    await setClock(121 * MINUTE);
    const idle = await scrape();
    expect(active(idle)).toBe(0);
    expect(value(idle, 'auth_sessions_active', { kind: 'oauth' })).toBe(0);
  });

  it('the audit outbox per stream: depth grows with events, the age follows the oldest waiting event', async () => {
    const before = await scrape();
    const login = uniqueLogin('o');
    expect((await loginWithoutSession(login, WRONG)).status).toBe(401);
    const after = await scrape();
    const depth = (s: Scrape, stream: string) => value(s, 'auth_outbox_depth', { stream });
    // Nothing ships here: the failed login's event waits in user_activity.
    expect(depth(after, 'user_activity') - depth(before, 'user_activity')).toBe(1);
    for (const stream of [
      'user_activity',
      'crud_user',
      'crud_admin',
      'api_access',
      'ext_service_access',
      'data_lifecycle',
    ]) {
      expect(value(after, 'auth_outbox_dead_letters', { stream }), stream).toBe(0);
      expect(Number.isFinite(value(after, 'auth_outbox_oldest_age_seconds', { stream })), stream).toBe(true);
    }
    await setClock(10 * MINUTE);
    const later = await scrape();
    expect(value(later, 'auth_outbox_oldest_age_seconds', { stream: 'user_activity' })).toBeGreaterThanOrEqual(600);
  });

  it('job runs and failures are counted in the database', async () => {
    const job = 'purge-login-throttle';
    const before = await scrape();
    const r = await api('/__test__/jobs', { method: 'POST', json: { names: [job] } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const after = await scrape();
    expect(value(after, 'auth_job_runs_total', { job }) - value(before, 'auth_job_runs_total', { job })).toBe(1);
    expect(value(after, 'auth_job_failures_total', { job })).toBe(0);
    expect(after.text).toContain(`auth_job_failures_total{job="${job}"} 0`);
  });

  it('database and bridge health: up while they answer, the bridge down once it stops', async () => {
    const up = await scrape();
    expect(value(up, 'auth_database_up')).toBe(1);
    expect(value(up, 'auth_bridge_configured')).toBe(1);
    expect(value(up, 'auth_bridge_up')).toBe(1);
    await bridge.stop();
    bridgeStopped = true;
    const down = await scrape();
    expect(value(down, 'auth_bridge_up')).toBe(0);
    expect(value(down, 'auth_database_up')).toBe(1);
  });
});

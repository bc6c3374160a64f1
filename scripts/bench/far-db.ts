/**
 * far-db: the hot paths against a far database (docs/performance.md, "A far database"). One libSQL dev
 * server (a remote database, as Turso or sqld is), migrated, its bootstrap administrator created by a
 * near Node host that also makes the accounts, tokens and sessions used here; then, for each host
 * (the edge host under `wrangler dev`, and the Node host compiled as `npm start` runs it, with the
 * remote URL) and each delay (0 and 50 ms per round trip), a far host reaching the database through
 * the delaying proxy of test/harness/far-database.ts, which counts every libSQL HTTP request (one
 * round trip: a statement or a batch).
 *
 * Per operation, sequentially (each sample waits until the far host's earlier work has settled):
 * the round trips that finished before the answer and those after it (until quiet), the background
 * work apart (settings refreshes, job leases, batches of earlier requests' API-access events), and p50/p90 latency.
 * Operations: Bearer and cookie GET /v4/users/me one request every FAR_DB_INTERVAL_MS (a user's requests), Basic login
 * (login_without_session), session login (/v3/login), the same with the device cookie of an earlier login, a passkey
 * sign-in (a software authenticator, test/harness/soft-authenticator.ts; no target: logins' is for passwords), POST
 * /v3/logout (a fresh session each), PATCH /v3/settings (a warm administrator's session); and the cold start: a fresh
 * host's first request and its second, once with /health/live and once with a Bearer request, each sent as soon as the
 * host is ready. Plus the edge bundle's gzipped size (`wrangler deploy --dry-run`, as test/unit/bundle-size.test.ts
 * builds it).
 *
 * A round trip finishing before the answer is counted as one the answer waited for: at +0 ms, work
 * started after an answer (a last-used time) can finish before the client has read it, so the counts
 * are those of the +50 ms rows.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { farDatabase, remoteDatabase, type FarDatabase, type RoundTrip } from '../../test/harness/far-database.js';
import { BASE_TEST_ENV, startEdgeTestHost } from '../../test/harness/hosts.js';
import { buildEdgeScript } from './edge-build.js';
import { ADMIN_LOGIN, policyPassword, ROOT_PATH, startBenchNodeHost } from './node-host.js';
import type { ScenarioResult } from './report.js';
import { basic, createToken, expectStatus, loginCookie, ScenarioError } from './scenarios.js';
import { softAuthenticator } from '../../test/harness/soft-authenticator.js';
import { percentile, round } from './stats.js';

type Register = (stop: () => Promise<void>) => () => Promise<void>;
type HostKind = 'edge' | 'node';

export interface FarDbConfig {
  /** samples per operation (FAR_DB_SAMPLES) */
  samples: number;
  /** ms between a user's Bearer or cookie requests (FAR_DB_INTERVAL_MS) */
  intervalMs: number;
  /** ms per round trip added by the proxy (FAR_DB_DELAYS) */
  delays: number[];
  /** hosts to measure (FAR_DB_HOSTS) */
  hosts: HostKind[];
  /** AUTH_REVOCATION_CHECK_SEC of the far hosts (FAR_DB_REVOCATION_CHECK_SEC; unset: the default) */
  revocationCheckSec?: number;
}

/** One operation's figures on one host at one delay. */
export interface FarDbRow {
  host: HostKind;
  delayMs: number;
  operation: string;
  samples: number;
  /** mean and largest number of round trips before the answer */
  before: { mean: number; max: number };
  /** after the answer, until the host was quiet (background writes) */
  after: { mean: number; max: number };
  /**
   * background settings refreshes, job leases and API-access batches per sample (before or after the answer;
   * none waits for them)
   */
  settingsReads: number;
  p50Ms: number;
  p90Ms: number;
  /** the start of each round trip's request body before the answer, of the sample that had the most */
  beforeSql: string[];
}

/** The settings refresh (the snapshot re-read in the background), as its libSQL request starts. */
const SETTINGS_REFRESH =
  /^\{"requests":\[\{"type":"execute","stmt":\{"sql":"select \\"name\\", \\"value\\" from \\"settings\\""/;
/** A scheduled job's lease (the Node host's timers, from its start on): no request's work. */
const isLease = (sql: string) =>
  /^[^{]*\{"requests":\[\{"type":"execute","stmt":\{"sql":"(\\n|\s)*insert into \\"job_leases/.test(sql);
/**
 * Work no answer waits for: the settings refresh, a job's lease, a batch of earlier requests' API-access events
 * (written by a timer on Node, after a later answer on the edge: it may finish within another request).
 */
const isBackground = (t: RoundTrip) => SETTINGS_REFRESH.test(t.sql) || isLease(t.sql) || t.apiAccess;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  ms: number;
  before: number;
  after: number;
  settings: number;
  sql?: string[];
}

/** Sends one request once the far host is quiet; its latency and the round trips before and after its answer. */
async function sample(proxy: FarDatabase, send: () => Promise<Response>, expected: number, what: string) {
  await proxy.settle();
  const since = performance.now();
  const res = await send();
  const body = await res.text();
  const answered = performance.now();
  if (res.status !== expected)
    throw new ScenarioError(`${what}: expected ${expected}, got ${res.status}; body: ${body.slice(0, 300)}`);
  await proxy.settle();
  const split = (trips: RoundTrip[]) => {
    const others = trips.filter((t) => !isBackground(t));
    return { settings: trips.length - others.length, others: others.length, sql: others.map((t) => t.sql) };
  };
  const pre = split(proxy.between(since, answered));
  const post = split(proxy.between(answered + 1e-6, performance.now()));
  return {
    ms: answered - since,
    before: pre.others,
    after: post.others,
    settings: pre.settings + post.settings,
    sql: pre.sql,
  };
}

function row(host: HostKind, delayMs: number, operation: string, samples: Sample[]): FarDbRow {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const stat = (k: 'before' | 'after') => ({
    mean: round(samples.reduce((t, s) => t + s[k], 0) / samples.length),
    max: Math.max(...samples.map((s) => s[k])),
  });
  return {
    host,
    delayMs,
    operation,
    samples: samples.length,
    before: stat('before'),
    after: stat('after'),
    settingsReads: round(samples.reduce((t, s) => t + s.settings, 0) / samples.length),
    p50Ms: round(percentile(ms, 50)),
    p90Ms: round(percentile(ms, 90)),
    beforeSql: (samples.reduce((a, b) => (b.before > a.before ? b : a)).sql ?? []).map((q) => q.slice(0, 160)),
  };
}

/** The edge script's upload, gzipped (KiB), as wrangler reports its dry run. */
async function bundleGzipKiB(): Promise<{ totalKiB: number; gzipKiB: number }> {
  const out = mkdtempSync(join(tmpdir(), 'far-db-bundle-'));
  try {
    return await buildEdgeScript(out);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

interface Far {
  base: string;
  origin: string;
  stop(): Promise<void>;
}

/** Starts a far host of `kind` on `libsqlUrl`; ready, but it has not answered any request yet. */
async function startFar(kind: HostKind, env: Record<string, string>, libsqlUrl: string, register: Register) {
  if (kind === 'edge') {
    const host = await startEdgeTestHost(env, { libsqlUrl });
    const stop = register(host.stop);
    return { base: host.url, origin: host.origin, stop };
  }
  const host = await startBenchNodeHost({ ...env, LIBSQL_URL: libsqlUrl }, { noProbe: true });
  const stop = register(host.stop);
  return { base: host.base, origin: new URL(host.base).origin, stop };
}

/**
 * A passkey of `Accounts.passkeyUser` (an account of its own: each sign-in opens a session, and the
 * account's session limit ends the others), registered on the near host: its authenticator and user handle.
 */
interface Passkey {
  key: Awaited<ReturnType<typeof softAuthenticator>>;
  userHandle: string;
}

interface Accounts {
  passkey?: Passkey;
  adminPassword: string;
  password: string;
  user: string;
  token: string;
  cookie: string;
  loginUser: string;
  logoutUser: string;
  passkeyUser: string;
}

/** Registers a passkey (a software authenticator's) through the session `cookie` on the near host. */
async function registerPasskey(near: string, cookie: string): Promise<Passkey> {
  const headers = { cookie, origin: new URL(near).origin, 'content-type': 'application/json' };
  const options = await expectStatus(
    `${near}/v4/users/me/passkeys/registration-options`,
    { method: 'POST', headers, body: '{}' },
    200,
    'POST /v4/users/me/passkeys/registration-options',
  );
  const creation = (await options.json()) as { challenge: string; rp: { id: string }; user: { id: string } };
  const key = await softAuthenticator(creation.rp.id);
  const response = key.create(creation.challenge, new URL(near).origin);
  await expectStatus(
    `${near}/v4/users/me/passkeys`,
    { method: 'POST', headers, body: JSON.stringify({ name: 'far-db', response }) },
    201,
    'POST /v4/users/me/passkeys',
  );
  return { key, userHandle: creation.user.id };
}

async function createUser(near: string, adminPassword: string, login: string, password: string): Promise<void> {
  await expectStatus(
    `${near}/v4/users`,
    {
      method: 'POST',
      headers: { authorization: basic(ADMIN_LOGIN, adminPassword), 'content-type': 'application/json' },
      body: JSON.stringify({ login, password }),
    },
    201,
    `POST /v4/users (${login})`,
  );
}

/** Measures one far host kind at one delay: two fresh hosts (cold start by liveness, then by Bearer). */
async function measureHost(
  kind: HostKind,
  delayMs: number,
  cfg: FarDbConfig,
  env: Record<string, string>,
  dbUrl: string,
  near: string,
  acc: Accounts,
  register: Register,
): Promise<FarDbRow[]> {
  const rows: FarDbRow[] = [];
  const proxy = await farDatabase(dbUrl, delayMs);
  try {
    const bearer = { authorization: `Bearer ${acc.token}` };
    const get =
      (far: Far, path: string, headers: Record<string, string> = {}) =>
      () =>
        fetch(`${far.base}${path}`, { headers });
    // Cold start: liveness first, then Bearer first, each on a fresh host (a fresh isolate on the edge).
    for (const [name, path, headers] of [
      ['liveness', '/health/live', {}],
      ['Bearer', '/v4/users/me', bearer],
    ] as const) {
      const far = await startFar(kind, env, proxy.url, register);
      try {
        // Sent as soon as the host is ready: whatever it still does before answering counts.
        const since = performance.now();
        const res = await get(far, path, headers)();
        const text = await res.text();
        const answered = performance.now();
        if (res.status !== 200) throw new ScenarioError(`first ${name} request: ${res.status} ${text.slice(0, 300)}`);
        await proxy.settle();
        // The settings read is part of a first request's work; a job's lease is not.
        const pre = proxy.between(since, answered).filter((t) => !isLease(t.sql));
        const all = proxy.between(since, performance.now());
        const leases = all.filter((t) => isLease(t.sql)).length;
        rows.push(
          row(kind, delayMs, `first request (${name})`, [
            {
              ms: answered - since,
              before: pre.length,
              after: all.length - pre.length - leases,
              settings: leases,
              sql: pre.map((t) => t.sql),
            },
          ]),
        );
        rows.push(
          row(kind, delayMs, `second request (${name})`, [await sample(proxy, get(far, path, headers), 200, name)]),
        );
        if (name === 'liveness') continue;

        const every = async (operation: string, send: () => Promise<Response>) => {
          await sample(proxy, send, 200, operation); // the first use reads the credential
          const samples: Sample[] = [];
          let next = performance.now() + cfg.intervalMs;
          for (let i = 0; i < cfg.samples; i++) {
            await sleep(Math.max(0, next - performance.now()));
            next += cfg.intervalMs;
            samples.push(await sample(proxy, send, 200, operation));
          }
          rows.push(row(kind, delayMs, operation, samples));
        };
        const seconds = cfg.intervalMs / 1000;
        await every(`Bearer /v4/users/me every ${seconds} s`, get(far, '/v4/users/me', bearer));
        await every(`cookie /v4/users/me every ${seconds} s`, get(far, '/v4/users/me', { cookie: acc.cookie }));

        const repeated = async (operation: string, expected: number, send: () => Promise<Response>) => {
          const samples: Sample[] = [];
          for (let i = 0; i < cfg.samples; i++) samples.push(await sample(proxy, send, expected, operation));
          rows.push(row(kind, delayMs, operation, samples));
        };
        const post = (path: string, headers: Record<string, string>, body?: unknown) => () =>
          fetch(`${far.base}${path}`, {
            method: 'POST',
            headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
        await repeated(
          'Basic login (login_without_session)',
          200,
          post('/v3/login_without_session', { authorization: basic(acc.loginUser, acc.password) }),
        );
        await repeated(
          'session login (/v3/login)',
          200,
          post('/v3/login', {}, { login: acc.loginUser, password: acc.password }),
        );
        // A browser that logged in here before: its device cookie (renewed by each login) with each login.
        const deviceOf = (res: Response) =>
          res.headers
            .getSetCookie()
            .map((c) => c.split(';')[0]!)
            .find((c) => /^(__Host-)?auth_device=/.test(c));
        const sessionLogin = post('/v3/login', {}, { login: acc.loginUser, password: acc.password });
        let device = deviceOf(await sessionLogin());
        if (!device) throw new ScenarioError('a session login set no device cookie');
        await repeated('session login with a device cookie', 200, async () => {
          const res = await post('/v3/login', { cookie: device! }, { login: acc.loginUser, password: acc.password })();
          device = deviceOf(res) ?? device;
          return res;
        });
        // A passwordless sign-in on a new device (no device cookie): the options and the authenticator's
        // answer come first; the sign-in is measured.
        const signIns: Sample[] = [];
        for (let i = 0; acc.passkey && i < cfg.samples; i++) {
          const options = await post('/v3/login/passkey/options', { origin: far.origin }, {})();
          const { challenge } = (await options.json()) as { challenge: string };
          const response = await acc.passkey.key.get(challenge, acc.passkey.userHandle, far.origin);
          // The options made no round trip, but their answer (a POST's) starts the notifications' run: let it
          // begin, so the sample's own wait for quiet covers it.
          await sleep(100);
          const signIn = post('/v3/login/passkey', { origin: far.origin }, { response });
          signIns.push(await sample(proxy, signIn, 200, 'passkey sign-in'));
        }
        rows.push(row(kind, delayMs, 'passkey sign-in (/v3/login/passkey)', signIns));
        // A browser's logout: its session cookie (made on the near host, not yet seen here) and its Origin.
        const logouts: Sample[] = [];
        for (let i = 0; i < cfg.samples; i++) {
          const cookie = await loginCookie(near, acc.logoutUser, acc.password);
          logouts.push(await sample(proxy, post('/v3/logout', { cookie, origin: far.origin }), 204, 'POST /v3/logout'));
        }
        rows.push(row(kind, delayMs, 'POST /v3/logout', logouts));
        // An administrator's console: a warm session, each change another value.
        const adminCookie = await loginCookie(near, ADMIN_LOGIN, acc.adminPassword);
        await sample(proxy, get(far, '/v3/settings', { cookie: adminCookie }), 200, 'GET /v3/settings');
        let value = 0;
        await repeated('PATCH /v3/settings', 200, () =>
          fetch(`${far.base}/v3/settings`, {
            method: 'PATCH',
            headers: { cookie: adminCookie, origin: far.origin, 'content-type': 'application/json' },
            body: JSON.stringify({ values: { AUTH_FAILED_COUNT: 50 + (value++ % 2) } }),
          }),
        );
      } finally {
        await far.stop();
      }
    }
  } finally {
    await proxy.close();
  }
  return rows;
}

/** The targets of issue-level goals at the largest delay (docs/performance.md, "A far database"). */
function targets(rows: readonly FarDbRow[], cfg: FarDbConfig): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  const delay = Math.max(...cfg.delays);
  if (delay < 50) return out;
  const revocationSec = cfg.revocationCheckSec ?? 30;
  for (const r of rows.filter((x) => x.delayMs === delay)) {
    const key = `far-db.${r.host}.`;
    if (/^(Bearer|cookie) .* every/.test(r.operation)) {
      const name = `${key}${r.operation.split(' ')[0]!.toLowerCase()}Every`;
      out[name] = revocationSec * 1000 >= cfg.intervalMs ? r.p50Ms <= 10 : r.before.max <= 1;
    } else if (r.operation.startsWith('first request')) {
      out[`${key}firstRequest${r.operation.includes('Bearer') ? 'Bearer' : 'Liveness'}`] = r.before.max <= 1;
    } else if (r.operation.includes('login') && !r.operation.startsWith('passkey')) {
      const login = r.operation.startsWith('Basic') ? 'basicLogin' : 'sessionLogin';
      out[`${key}${login}${r.operation.includes('device') ? 'Device' : ''}`] = r.before.max <= 2;
    } else if (r.operation === 'POST /v3/logout') {
      out[`${key}logout`] = r.before.max <= 1;
    } else if (r.operation === 'PATCH /v3/settings') {
      out[`${key}settingsPatch`] = r.before.max <= 2;
    }
  }
  return out;
}

/** The markdown table of the far-db scenario (empty when it did not run). */
export function formatFarDb(results: readonly ScenarioResult[]): string {
  const r = results.find((x) => x.scenario === 'far-db');
  const rows = r?.details?.rows as FarDbRow[] | undefined;
  if (!rows) return '';
  const delays = [...new Set(rows.map((x) => x.delayMs))].sort((a, b) => a - b);
  const keys = [...new Set(rows.map((x) => `${x.host}\t${x.operation}`))];
  const trips = (x: FarDbRow | undefined) =>
    x
      ? `${x.before.mean} (max ${x.before.max}) / ${x.after.mean}${x.settingsReads ? ` +${x.settingsReads} bg` : ''}`
      : '-';
  const lat = (x: FarDbRow | undefined) => (x ? `${x.p50Ms} / ${x.p90Ms}` : '-');
  const header = [
    'host',
    'operation',
    'n',
    ...delays.flatMap((d) => [`round trips before / after at +${d} ms`, `p50 / p90 ms at +${d} ms`]),
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const k of keys) {
    const [host, operation] = k.split('\t') as [HostKind, string];
    const at = (d: number) => rows.find((x) => x.host === host && x.operation === operation && x.delayMs === d);
    const n = at(delays[0]!)?.samples ?? at(delays.at(-1)!)?.samples ?? 0;
    lines.push(`| ${[host, operation, n, ...delays.flatMap((d) => [trips(at(d)), lat(at(d))])].join(' | ')} |`);
  }
  const bundle = r!.details!.bundle as { totalKiB: number; gzipKiB: number } | undefined;
  const t = r!.details!.targets as Record<string, boolean>;
  return [
    ...lines,
    '',
    `edge bundle: ${bundle ? `${bundle.totalKiB} KiB, ${bundle.gzipKiB} KiB gzipped (target <= 250)` : 'not measured'}`,
    `targets at +${Math.max(...delays)} ms: ${
      Object.entries(t)
        .map(([name, ok]) => `${name} ${ok ? 'met' : 'MISSED'}`)
        .join(', ') || 'none (no delay of 50 ms or more)'
    }`,
    '(round trips: mean (largest) before the answer / mean after it; ' +
      '+N bg: background settings refreshes, job leases and API-access batches per sample)',
  ].join('\n');
}

/** The far-db scenario. */
export async function farDb(cfg: FarDbConfig, register: Register): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), 'far-db-'));
  let bundle: { totalKiB: number; gzipKiB: number } | undefined;
  let bundleError: string | undefined;
  try {
    bundle = await bundleGzipKiB();
  } catch (err) {
    bundleError = err instanceof Error ? err.message : String(err);
  }
  const database = await remoteDatabase(dir);
  const stopDatabase = register(database.close);
  const adminPassword = policyPassword();
  const env: Record<string, string> = {
    ...BASE_TEST_ENV,
    AUTH_ROOT_PATH: ROOT_PATH,
    AUTH_LOG_LEVEL: 'INFO',
    AUTH_ACCESS_LOG_LEVEL: 'INFO',
    // One key for every host: a session made on the near host is valid on the far ones.
    SESSION_SECRET_KEY: randomBytes(30).toString('base64url'),
    AUTH_BOOTSTRAP_ADMIN_LOGIN: ADMIN_LOGIN,
    AUTH_BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
    AUTH_TEST_CLOCK_CONTROL: 'False',
    ...(cfg.revocationCheckSec === undefined ? {} : { AUTH_REVOCATION_CHECK_SEC: String(cfg.revocationCheckSec) }),
  };
  try {
    // The near host: the database's first request (the bootstrap administrator), then the accounts.
    const nearHost = await startBenchNodeHost({ ...env, LIBSQL_URL: database.url });
    const stopNear = register(nearHost.stop);
    const near = nearHost.base;
    const rows: FarDbRow[] = [];
    try {
      await expectStatus(`${near}/health/ready`, {}, 200, 'near host: GET /health/ready');
      const password = policyPassword();
      const acc: Accounts = {
        adminPassword,
        password,
        user: 'far-db-user',
        loginUser: 'far-db-login',
        logoutUser: 'far-db-logout',
        passkeyUser: 'far-db-passkey',
        token: '',
        cookie: '',
      };
      for (const login of [acc.user, acc.loginUser, acc.logoutUser, acc.passkeyUser])
        await createUser(near, adminPassword, login, password);
      acc.token = await createToken(near, acc.user, password);
      acc.cookie = await loginCookie(near, acc.user, password);
      acc.passkey = await registerPasskey(near, await loginCookie(near, acc.passkeyUser, password));
      for (const kind of cfg.hosts)
        for (const delay of cfg.delays) {
          console.log(`  ${kind} host at +${delay} ms per round trip`);
          rows.push(...(await measureHost(kind, delay, cfg, env, database.url, near, acc, register)));
        }
    } finally {
      await stopNear();
    }
    const met = targets(rows, cfg);
    const missed = Object.entries(met).filter(([, ok]) => !ok);
    return {
      scenario: 'far-db',
      status: 'ok',
      message:
        `${rows.length} rows (${cfg.samples} samples each, ${cfg.intervalMs} ms apart for Bearer and cookie); ` +
        `edge bundle ${bundle ? `${bundle.gzipKiB} KiB gzipped` : `not measured: ${bundleError}`}; ` +
        `targets: ${Object.keys(met).length - missed.length} met` +
        (missed.length ? `, MISSED ${missed.map(([n]) => n).join(', ')}` : ''),
      details: { config: cfg, rows, bundle, targets: met },
    };
  } finally {
    await stopDatabase();
    rmSync(dir, { recursive: true, force: true });
  }
}

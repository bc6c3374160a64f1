/**
 * The scenarios against the Node host. Each one first checks, with one ordinary request, that the
 * endpoint answers as expected (so a missing endpoint or a wrong credential fails with a clear
 * message instead of measuring error responses), then hands the load to the pinned load process.
 */
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { startHashWorker, type RawHashRun } from './raw-hash.js';
import { seededLogin, seedAccounts } from './seed.js';
import { runJob } from './load.js';
import { ADMIN_LOGIN } from './node-host.js';
import { cpuMeter, rssSampler, untilQuiet, type CpuShare } from './processes.js';
import type { LoadJob } from './protocol.js';
import type { ScenarioResult } from './report.js';
import { mean, median, percentDiff, round } from './stats.js';

export interface BenchConfig {
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  /** measured pairs of login-timing (at most MAX_TIMING_PAIRS) */
  timingPairs: number;
  /** sequential logins of edge-cpu */
  edgeLogins: number;
}

export interface NodeScenarioContext {
  base: string;
  /** pid of the Node host, for its CPU usage */
  hostPid: number;
  adminPassword: string;
  config: BenchConfig;
  /** the host's SESSION_SECRET_KEY (to sign cookies of seeded sessions) */
  sessionSecret: string;
  /** the host's database file (to seed accounts into) */
  dbFile: string;
}

/** A scenario cannot run (endpoint missing, unexpected answer): reported as failed, with the reason. */
export class ScenarioError extends Error {}

export const basic = (login: string, password: string): string =>
  `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

/** Makes one request and checks its status; the error names the endpoint and shows the answer. */
export async function expectStatus(url: string, init: RequestInit, expected: number, what: string): Promise<Response> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  if (res.status === expected) return res;
  const body = (await res.text()).slice(0, 300);
  const hint = res.status === 404 ? ' - the endpoint does not exist (yet?)' : '';
  throw new ScenarioError(`${what}: expected ${expected}, got ${res.status}${hint}; body: ${body}`);
}

/** Runs a job, measuring the CPU (and the largest RSS) of `pid` and the machine during its measured part. */
async function measured<T>(
  pid: number,
  run: (onMeasuring: () => void) => Promise<T>,
): Promise<{ result: T; cpu: CpuShare; rssMaxKiB: number | undefined }> {
  const meter = cpuMeter(pid);
  let rss: { stop(): number | undefined } | undefined;
  const result = await run(() => {
    meter.start();
    rss = rssSampler(pid);
  });
  const cpu = meter.stop();
  return { result, cpu, rssMaxKiB: rss?.stop() };
}

const cpuFields = (cpu: CpuShare) => ({
  hostCpuPercent: Math.round(cpu.processCpuPercent),
  machineCpuPercent: Math.round(cpu.machineCpuPercent),
});

/** What a load scenario sends: one request, repeated by every connection. */
export interface LoadRequest {
  url: string;
  method?: LoadJob['method'];
  headers?: Record<string, string>;
  body?: string;
  /** per connection, added to `headers` (LoadJob.perConnection) */
  perConnection?: Array<Record<string, string>>;
}

/**
 * Closed-loop load on any server (ours, the peer, the bare route) with the configured connections
 * and durations, measuring the server process `pid`; any non-2xx answer or connection error flags it.
 */
export async function loadScenario(
  config: BenchConfig,
  pid: number,
  scenario: string,
  r: LoadRequest,
): Promise<ScenarioResult> {
  const { connections, warmupSeconds, durationSeconds } = config;
  const job: LoadJob = {
    kind: 'load',
    url: r.url,
    method: r.method ?? 'GET',
    headers: r.headers ?? {},
    body: r.body,
    perConnection: r.perConnection,
    connections,
    warmupSeconds,
    durationSeconds,
  };
  const { result: res, cpu, rssMaxKiB } = await measured(pid, (onMeasuring) => runJob(job, onMeasuring));
  const bad = res.non2xx > 0 || res.errors > 0 || res.responses === 0;
  return {
    scenario,
    status: bad ? 'flagged' : 'ok',
    message: bad
      ? `MEASUREMENT INVALID: ${res.non2xx} non-2xx responses, ${res.errors} connection errors, ${res.responses} ` +
        `responses; status codes ${JSON.stringify(res.statusCodes)}`
      : undefined,
    requestsPerSec: round(res.requestsPerSec),
    p50Ms: round(res.p50Ms),
    p99Ms: round(res.p99Ms),
    non2xx: res.non2xx,
    ...cpuFields(cpu),
    // server CPU per answered request (its CPU share of one core over the measured run / answers)
    cpuPerRequestUs:
      res.requestsPerSec > 0 ? round((cpu.processCpuPercent / 100 / res.requestsPerSec) * 1e6) : undefined,
    rssMaxKiB,
    details: {
      responses: res.responses,
      errors: res.errors,
      statusCodes: res.statusCodes,
      clientCpuPercent: Math.round(res.clientCpuPercent),
      // of cpuPerRequestUs, the server's main thread's (a Node server's event loop) per answered request
      mainThreadCpuPerRequestUs:
        res.requestsPerSec > 0 ? round((cpu.mainThreadCpuPercent / 100 / res.requestsPerSec) * 1e6) : undefined,
    },
  };
}

/** A load scenario against our host (the context's base URL and pid). */
const ours = (
  ctx: NodeScenarioContext,
  scenario: string,
  path: string,
  method: LoadJob['method'],
  headers: Record<string, string>,
  body?: string,
) => loadScenario(ctx.config, ctx.hostPid, scenario, { url: `${ctx.base}${path}`, method, headers, body });

/** Issues a personal API token with Basic credentials; returns its secret. */
export async function createToken(base: string, login: string, password: string): Promise<string> {
  const created = await expectStatus(
    `${base}/v4/users/me/tokens`,
    {
      method: 'POST',
      headers: { authorization: basic(login, password), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench' }),
    },
    201,
    `POST /v4/users/me/tokens (Basic, ${login})`,
  );
  const { token } = (await created.json()) as { token?: unknown };
  if (typeof token !== 'string' || token === '')
    throw new ScenarioError('POST /v4/users/me/tokens: the answer has no "token" string');
  return token;
}

/** Logs in with /v3/login (JSON); returns the `auth_session=...` cookie pair. */
export async function loginCookie(base: string, login: string, password: string): Promise<string> {
  const res = await expectStatus(
    `${base}/v3/login`,
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login, password }) },
    200,
    `POST /v3/login (JSON, ${login})`,
  );
  const pair = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.includes('auth_session='));
  if (!pair) throw new ScenarioError('POST /v3/login: no auth_session cookie in the answer');
  return pair;
}

/** GET /health/live: no authentication, no database; the framework's baseline. */
export async function liveness(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  await expectStatus(`${ctx.base}/health/live`, {}, 200, 'GET /health/live');
  return ours(ctx, 'liveness', '/health/live', 'GET', {});
}

/** POST /v3/login_without_session with Basic credentials: a password verification per request. */
export async function basicLogin(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  const headers = { authorization: basic(ADMIN_LOGIN, ctx.adminPassword) };
  const res = await expectStatus(
    `${ctx.base}/v3/login_without_session`,
    { method: 'POST', headers },
    200,
    'POST /v3/login_without_session (Basic, bootstrap admin)',
  );
  await res.json(); // must be JSON (the profile)
  return pairedWithHash(ctx, 'basic-login', { url: `${ctx.base}/v3/login_without_session`, method: 'POST', headers });
}

/** The password of the accounts seeded for basic-login-accounts. */
const SEEDED_PASSWORD = 'Bn#7seededPassw0rd';

/**
 * basic-login with one account per connection (seeded into the host's database): the same rate as
 * one account, or a per-account rule costs the logins something.
 */
export async function basicLoginAccounts(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  const n = ctx.config.connections;
  // Numbered past the accounts other scenarios seed (growth, attack use their own hosts).
  const offset = 900_000;
  seedAccounts(ctx.dbFile, n, {
    passwordHash: await createNodeNativeHasher().hash(SEEDED_PASSWORD),
    now: Date.now(),
    offset,
  });
  const perConnection = Array.from({ length: n }, (_, i) => ({
    authorization: basic(seededLogin(offset + i + 1), SEEDED_PASSWORD),
  }));
  const url = `${ctx.base}/v3/login_without_session`;
  await expectStatus(
    url,
    { method: 'POST', headers: perConnection[0] },
    200,
    'POST /v3/login_without_session (seeded)',
  );
  return pairedWithHash(ctx, 'basic-login-accounts', { url, method: 'POST', perConnection });
}

/** Rounds of the login scenarios, each a raw argon2id run and then the logins (LOGIN_ROUNDS). */
export const LOGIN_ROUNDS = 4;
/**
 * The least warm-up of a login scenario's first round, in seconds. A login's code runs about 45 times a
 * second, so the default 2 s warm-up (90 logins) left V8 still optimising it during the first measured
 * round, the lowest of the four in most runs (0.89-0.94 of the raw rate against 0.95-0.99 for the
 * others). After 10 s, V8 still finished about 150 optimisations in the next 20 s, its helper threads
 * taking 0.55 ms of CPU per login; after 30 s, 72 (0.18 ms); after 60 s, 46 (0.15 ms). A server in
 * production has long been warm (docs/performance.md, "Logins and the hot path").
 */
const LOGIN_WARMUP_S = 30;

/**
 * A login scenario measured against the raw argon2id rate under the same conditions: LOGIN_ROUNDS
 * rounds, each a raw run (a hash worker pinned to the host's core, as many verifications in flight
 * as connections) followed by the logins, for a share of the measured time each. Whatever else
 * slows the machine meanwhile slows both alike, where a raw rate measured once before the host
 * started did not (the raw rate drifted by up to 10 % between runs); before each raw run the host
 * must be quiet (the logins still queued when a round's load stopped have finished). Reported: the logins' rate
 * over all rounds (p50: the median of the rounds', p99: the largest), and in `details` the raw
 * rate over the same rounds and the ratio of the two (`ofRawHash`), which the targets use.
 */
async function pairedWithHash(ctx: NodeScenarioContext, scenario: string, r: LoadRequest): Promise<ScenarioResult> {
  const { durationSeconds, warmupSeconds } = ctx.config;
  const seconds = Math.max(1, durationSeconds / LOGIN_ROUNDS);
  const hash = await startHashWorker();
  const rounds: Array<{ raw: RawHashRun; logins: ScenarioResult }> = [];
  try {
    for (let i = 0; i < LOGIN_ROUNDS; i++) {
      const raw = await hash.measure(ctx.config.connections, seconds);
      // The first round warms the host up; the later ones only let the new connections settle.
      const warmup = i === 0 ? Math.max(warmupSeconds, LOGIN_WARMUP_S) : 1;
      const config = { ...ctx.config, durationSeconds: seconds, warmupSeconds: warmup };
      const logins = await loadScenario(config, ctx.hostPid, scenario, r);
      if (logins.status !== 'ok') return logins;
      rounds.push({ raw, logins });
      // The logins still queued when the load stopped must not run during the next raw run.
      await untilQuiet(ctx.hostPid);
    }
  } finally {
    await hash.stop();
  }
  const rates = rounds.map((x) => x.logins.requestsPerSec!);
  const raws = rounds.map((x) => x.raw.perSec);
  const loginsPerSec = mean(rates);
  const rawPerSec = mean(raws);
  const first = rounds[0]!.logins;
  return {
    ...first,
    requestsPerSec: round(loginsPerSec),
    p50Ms: round(median(rounds.map((x) => x.logins.p50Ms!))),
    p99Ms: round(Math.max(...rounds.map((x) => x.logins.p99Ms!))),
    non2xx: rounds.reduce((n, x) => n + (x.logins.non2xx ?? 0), 0),
    hostCpuPercent: Math.round(mean(rounds.map((x) => x.logins.hostCpuPercent!))),
    machineCpuPercent: Math.round(mean(rounds.map((x) => x.logins.machineCpuPercent!))),
    cpuPerRequestUs: round(mean(rounds.map((x) => x.logins.cpuPerRequestUs!))),
    rssMaxKiB: Math.max(...rounds.map((x) => x.logins.rssMaxKiB ?? 0)) || undefined,
    message:
      `${LOGIN_ROUNDS} rounds of ${round(seconds)} s, each after a raw argon2id run on the same core: ` +
      `${round(loginsPerSec)} logins/s against ${round(rawPerSec)} raw verifications/s ` +
      `(${ctx.config.connections} in flight), ${round(loginsPerSec / rawPerSec)} of it; per round ` +
      rounds.map((x) => `${round(x.logins.requestsPerSec!)}/${round(x.raw.perSec)}`).join(', '),
    details: {
      ...first.details,
      responses: rounds.reduce((n, x) => n + ((x.logins.details?.responses as number) ?? 0), 0),
      rounds: rounds.map((x) => ({
        loginsPerSec: x.logins.requestsPerSec,
        rawHashPerSec: round(x.raw.perSec),
        rawHashCpuMs: round(x.raw.cpuMs),
        loginCpuUs: x.logins.cpuPerRequestUs,
        loginMainThreadCpuUs: x.logins.details?.mainThreadCpuPerRequestUs,
      })),
      mainThreadCpuPerRequestUs: round(mean(rounds.map((x) => x.logins.details!.mainThreadCpuPerRequestUs as number))),
      rawHashPerSec: round(rawPerSec),
      rawHashCpuMs: round(mean(rounds.map((x) => x.raw.cpuMs))),
      ofRawHash: round(loginsPerSec / rawPerSec),
    },
  };
}

/**
 * POST /v3/login with a JSON body: a password verification and a new session per request (the
 * user's session limit ends the oldest ones, as it would for a real client logging in repeatedly).
 */
export async function sessionLogin(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  await loginCookie(ctx.base, ADMIN_LOGIN, ctx.adminPassword);
  const body = JSON.stringify({ login: ADMIN_LOGIN, password: ctx.adminPassword });
  const headers = { 'content-type': 'application/json' };
  return pairedWithHash(ctx, 'session-login', { url: `${ctx.base}/v3/login`, method: 'POST', headers, body });
}

/** GET /v4/users/me with a personal API token (created first with Basic credentials). */
export async function bearer(ctx: NodeScenarioContext, scenario = 'bearer'): Promise<ScenarioResult> {
  const headers = { authorization: `Bearer ${await createToken(ctx.base, ADMIN_LOGIN, ctx.adminPassword)}` };
  await expectStatus(`${ctx.base}/v4/users/me`, { headers }, 200, 'GET /v4/users/me (Bearer)');
  return ours(ctx, scenario, '/v4/users/me', 'GET', headers);
}

/** GET /v4/users/me with the session cookie of a /v3/login. */
export async function cookie(ctx: NodeScenarioContext, scenario = 'cookie'): Promise<ScenarioResult> {
  const headers = { cookie: await loginCookie(ctx.base, ADMIN_LOGIN, ctx.adminPassword) };
  await expectStatus(`${ctx.base}/v4/users/me`, { headers }, 200, 'GET /v4/users/me (session cookie)');
  return ours(ctx, scenario, '/v4/users/me', 'GET', headers);
}

/**
 * Every wrong password counts toward the lockout of its login (AUTH_FAILED_COUNT, at most 100),
 * and only one known account exists: warm-up plus measured wrong passwords of bench-admin stay
 * below 100 so the account is never locked (a locked account answers without checking a password,
 * which would make the comparison meaningless).
 */
export const MAX_TIMING_PAIRS = 90;
const TIMING_WARMUP_PAIRS = 4;

/**
 * Sequential Basic logins on one connection: the known login with a wrong password vs an unknown
 * login (a different one each time), interleaved. Both must answer 401, and should take the same
 * time, or the response time tells which logins exist. Run it last: it leaves failed attempts.
 */
export async function loginTiming(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  const pairs = Math.min(ctx.config.timingPairs, MAX_TIMING_PAIRS);
  const total = pairs + TIMING_WARMUP_PAIRS;
  // Same lengths on both sides: the wrong password is the right one with its last character
  // changed, unknown logins have as many characters as "bench-admin".
  const pw = ctx.adminPassword;
  const wrong = pw.slice(0, -1) + (pw.endsWith('x') ? 'y' : 'x');
  const unknown = (i: number) => `bench-u${String(i).padStart(ADMIN_LOGIN.length - 7, '0')}`;
  const url = `${ctx.base}/v3/login_without_session`;
  // Check on an unknown login (it does not count against bench-admin).
  await expectStatus(
    url,
    { method: 'POST', headers: { authorization: basic(unknown(99_999), wrong) } },
    401,
    'POST /v3/login_without_session (unknown login)',
  );

  const { result, cpu } = await measured(ctx.hostPid, (onMeasuring) =>
    runJob(
      {
        kind: 'timing',
        url,
        method: 'POST',
        a: Array.from({ length: total }, () => basic(ADMIN_LOGIN, wrong)),
        b: Array.from({ length: total }, (_, i) => basic(unknown(i), wrong)),
        warmupPairs: TIMING_WARMUP_PAIRS,
      },
      onMeasuring,
    ),
  );
  const known = result.a.map((s) => s.ms);
  const unknownMs = result.b.map((s) => s.ms);
  const unexpected = [...result.a, ...result.b].filter((s) => s.status !== 401);
  const stats = {
    pairs,
    knownWrongPassword: { meanMs: round(mean(known)), medianMs: round(median(known)) },
    unknownLogin: { meanMs: round(mean(unknownMs)), medianMs: round(median(unknownMs)) },
    // positive: the known login with a wrong password is slower than an unknown login
    diffMeanPercent: round(percentDiff(mean(known), mean(unknownMs))),
    diffMedianPercent: round(percentDiff(median(known), median(unknownMs))),
  };
  const statuses = [...new Set(unexpected.map((s) => s.status))].join(', ');
  return {
    scenario: 'login-timing',
    status: unexpected.length > 0 ? 'flagged' : 'ok',
    message:
      unexpected.length > 0
        ? `MEASUREMENT INVALID: ${unexpected.length} of ${2 * pairs} answers were not 401 (got ${statuses})`
        : `known+wrong ${stats.knownWrongPassword.meanMs}/${stats.knownWrongPassword.medianMs} ms vs unknown ` +
          `${stats.unknownLogin.meanMs}/${stats.unknownLogin.medianMs} ms (mean/median): ` +
          `${stats.diffMeanPercent}% / ${stats.diffMedianPercent}%`,
    ...cpuFields(cpu),
    details: { ...stats, unexpectedAnswers: unexpected.length },
  };
}

/**
 * The gate's decision (docs/integration.md) as Caddy or Traefik ask for it: `GET /v4/authz/forward-auth` with
 * the X-Forwarded-* headers of a request to a protected service, from a trusted proxy (the host runs with
 * AUTH_TRUSTED_PROXIES=127.0.0.1), with an API token or a session cookie. Target: at least as fast as Bearer
 * `GET /v4/users/me`: a warm decision makes no database round trip (docs/integration.md, "Credentials").
 */
export async function forwardAuth(ctx: NodeScenarioContext, credential: 'bearer' | 'cookie'): Promise<ScenarioResult> {
  const admin = basic(ADMIN_LOGIN, ctx.adminPassword);
  const host = 'bench-app.example.com';
  const made = await fetch(`${ctx.base}/v4/services`, {
    method: 'POST',
    headers: { authorization: admin, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench-app', hosts: [host], access: { anyAccount: true } }),
    signal: AbortSignal.timeout(10_000),
  });
  // 409: made by the other credential's run on this host.
  if (made.status !== 201 && made.status !== 409)
    throw new ScenarioError(
      `POST /v4/services: expected 201, got ${made.status}: ${(await made.text()).slice(0, 300)}`,
    );
  const auth: Record<string, string> =
    credential === 'bearer'
      ? { authorization: `Bearer ${await createToken(ctx.base, ADMIN_LOGIN, ctx.adminPassword)}` }
      : { cookie: await loginCookie(ctx.base, ADMIN_LOGIN, ctx.adminPassword) };
  const headers = {
    ...auth,
    'x-forwarded-method': 'GET',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': host,
    'x-forwarded-uri': '/dashboard',
  };
  const url = `${ctx.base}/v4/authz/forward-auth`;
  await expectStatus(url, { headers }, 200, `GET /v4/authz/forward-auth (${credential})`);
  return loadScenario(ctx.config, ctx.hostPid, `forward-auth-${credential}`, { url, headers });
}

/**
 * The scenarios against the Node host. Each one first checks, with one ordinary request, that the
 * endpoint answers as expected (so a missing endpoint or a wrong credential fails with a clear
 * message instead of measuring error responses), then hands the load to the pinned load process.
 */
import { runJob } from './load.js';
import { ADMIN_LOGIN } from './node-host.js';
import { cpuMeter, type CpuShare } from './processes.js';
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
}

/** A scenario cannot run (endpoint missing, unexpected answer): reported as failed, with the reason. */
export class ScenarioError extends Error {}

export const basic = (login: string, password: string): string => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

/** Makes one request and checks its status; the error names the endpoint and shows the answer. */
export async function expectStatus(url: string, init: RequestInit, expected: number, what: string): Promise<Response> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  if (res.status === expected) return res;
  const body = (await res.text()).slice(0, 300);
  const hint = res.status === 404 ? ' - the endpoint does not exist (yet?)' : '';
  throw new ScenarioError(`${what}: expected ${expected}, got ${res.status}${hint}; body: ${body}`);
}

/** Runs a job, measuring the host's and the machine's CPU during its measured part. */
async function measured<T>(ctx: NodeScenarioContext, run: (onMeasuring: () => void) => Promise<T>): Promise<{ result: T; cpu: CpuShare }> {
  const meter = cpuMeter(ctx.hostPid);
  const result = await run(meter.start);
  return { result, cpu: meter.stop() };
}

const cpuFields = (cpu: CpuShare) => ({ hostCpuPercent: Math.round(cpu.processCpuPercent), machineCpuPercent: Math.round(cpu.machineCpuPercent) });

/** Runs a load job and turns its result into a row; any non-2xx answer or connection error flags it. */
async function loadScenario(ctx: NodeScenarioContext, scenario: string, path: string, method: LoadJob['method'], headers: Record<string, string>): Promise<ScenarioResult> {
  const { connections, warmupSeconds, durationSeconds } = ctx.config;
  const job: LoadJob = { kind: 'load', url: `${ctx.base}${path}`, method, headers, connections, warmupSeconds, durationSeconds };
  const { result: r, cpu } = await measured(ctx, (onMeasuring) => runJob(job, onMeasuring));
  const bad = r.non2xx > 0 || r.errors > 0 || r.responses === 0;
  return {
    scenario,
    status: bad ? 'flagged' : 'ok',
    message: bad
      ? `MEASUREMENT INVALID: ${r.non2xx} non-2xx responses, ${r.errors} connection errors, ${r.responses} responses; status codes ${JSON.stringify(r.statusCodes)}`
      : undefined,
    requestsPerSec: round(r.requestsPerSec),
    p50Ms: round(r.p50Ms),
    p99Ms: round(r.p99Ms),
    non2xx: r.non2xx,
    ...cpuFields(cpu),
    details: { responses: r.responses, errors: r.errors, statusCodes: r.statusCodes, clientCpuPercent: Math.round(r.clientCpuPercent) },
  };
}

/** GET /health/live: no authentication, no database; the framework's baseline. */
export async function liveness(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  await expectStatus(`${ctx.base}/health/live`, {}, 200, 'GET /health/live');
  return loadScenario(ctx, 'liveness', '/health/live', 'GET', {});
}

/** POST /v3/login_without_session with Basic credentials: a password verification per request. */
export async function basicLogin(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  const headers = { authorization: basic(ADMIN_LOGIN, ctx.adminPassword) };
  const res = await expectStatus(`${ctx.base}/v3/login_without_session`, { method: 'POST', headers }, 200, 'POST /v3/login_without_session (Basic, bootstrap admin)');
  await res.json(); // must be JSON (the profile)
  return loadScenario(ctx, 'basic-login', '/v3/login_without_session', 'POST', headers);
}

/** GET /v4/users/me with a personal API token (created first with Basic credentials). */
export async function bearer(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  const created = await expectStatus(
    `${ctx.base}/v4/users/me/tokens`,
    {
      method: 'POST',
      headers: { authorization: basic(ADMIN_LOGIN, ctx.adminPassword), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench' }),
    },
    201,
    'POST /v4/users/me/tokens (Basic, bootstrap admin)',
  );
  const { token } = (await created.json()) as { token?: unknown };
  if (typeof token !== 'string' || token === '') throw new ScenarioError('POST /v4/users/me/tokens: the answer has no "token" string');
  const headers = { authorization: `Bearer ${token}` };
  await expectStatus(`${ctx.base}/v4/users/me`, { headers }, 200, 'GET /v4/users/me (Bearer)');
  return loadScenario(ctx, 'bearer', '/v4/users/me', 'GET', headers);
}

/** GET /v4/users/me with the session cookie of a /v3/login (one database query per request). */
export async function cookie(ctx: NodeScenarioContext): Promise<ScenarioResult> {
  const res = await expectStatus(
    `${ctx.base}/v3/login`,
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: ADMIN_LOGIN, password: ctx.adminPassword }) },
    200,
    'POST /v3/login (JSON, bootstrap admin)',
  );
  const pair = res.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.includes('auth_session='));
  if (!pair) throw new ScenarioError('POST /v3/login: no auth_session cookie in the answer');
  const headers = { cookie: pair };
  await expectStatus(`${ctx.base}/v4/users/me`, { headers }, 200, 'GET /v4/users/me (session cookie)');
  return loadScenario(ctx, 'cookie', '/v4/users/me', 'GET', headers);
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
  await expectStatus(url, { method: 'POST', headers: { authorization: basic(unknown(99_999), wrong) } }, 401, 'POST /v3/login_without_session (unknown login)');

  const { result, cpu } = await measured(ctx, (onMeasuring) =>
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
        : `known+wrong ${stats.knownWrongPassword.meanMs}/${stats.knownWrongPassword.medianMs} ms vs unknown ${stats.unknownLogin.meanMs}/${stats.unknownLogin.medianMs} ms (mean/median): ${stats.diffMeanPercent}% / ${stats.diffMedianPercent}%`,
    ...cpuFields(cpu),
    details: { ...stats, unexpectedAnswers: unexpected.length },
  };
}

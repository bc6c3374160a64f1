/**
 * `npm run bench`: our Node host side by side with a reference peer (better-auth on SQLite), a bare
 * Hono route (the ceiling) and the raw argon2id rate, all measured by one harness; the edge host's
 * CPU time per login and per Bearer request; what the data costs (memory, growth).
 *
 * Scenarios (in this order):
 *   hash-rate     raw argon2id verifications/s on the host's core: one at a time, and with as many
 *                 in flight as the load has connections (the limit of password logins)
 *   ceiling       GET /ping of a bare Hono route on @hono/node-server
 *   liveness      GET /health/live under load (our framework without authentication)
 *   basic-login   POST /v3/login_without_session with Basic, a local account, under load
 *   basic-login-accounts   the same with one account per connection (seeded)
 *   session-login POST /v3/login (JSON): a password check and a new session per request
 *   bearer        GET /v4/users/me with a personal API token, under load
 *   cookie        GET /v4/users/me with a session cookie, under load
 *   forward-auth  the gate's decision (GET /v4/authz/forward-auth, Caddy's and Traefik's form) for a protected
 *                 service, with an API token and with a session cookie, on a host that trusts 127.0.0.1 as a proxy
 *   forward-auth-nginx  the same behind real nginx (forward-auth-nginx.ts): nginx with the documented
 *                 auth_request configuration in front of a tiny upstream, requests/s and p99 with a session cookie
 *                 and with a Bearer token, against the same nginx serving the upstream without auth_request
 *                 (nginx-alone), and their ratio
 *   login-timing  known login + wrong password vs unknown login, sequential (must not differ)
 *   memory        a fresh host's RSS at idle, under load, and per 10,000 live sessions (seeded,
 *                 each used twice, after 1,000 others used twice)
 *   peer-login, peer-cookie, peer-bearer, peer-cookie-cache
 *                 better-auth: sign-in/email; get-session with the session cookie (database), with
 *                 Bearer (bearer plugin), with the session cached in a signed cookie
 *   edge-cpu      CPU time per login and per Bearer request of the edge host (wrangler dev)
 *   edge-start    an edge isolate's start and first answer (edge-start.ts): the deployed script in workerd
 *                 itself, the main thread's CPU at listening (less an empty worker's) and for the first and
 *                 second GET /health/live; target: start + first answer <= 40 ms
 *   ldap-bridge   LDAP login, sequential: direct ldapts vs the bridge's authenticate() vs
 *                 POST /v1/ldap/authenticate over mutual TLS (test slapd)
 *   ldap-login    LDAP login, sequential: direct ldapts vs the bridge over mTLS vs the HTTP Basic
 *                 login with X-LDAP-Name through the Node host configured with that bridge
 *   attack        abuse resistance (attack.ts): an attacker sends logins at 10 times the raw argon2id
 *                 rate from one address, then from 50 behind a trusted proxy, while legitimate users
 *                 log in at 10 % of it, a browser with a device cookie logs in to an attacked account,
 *                 and Bearer and cookie requests run at a fixed rate (compared with a run without the
 *                 attack); each target met or MISSED
 *   mfa           second factors (mfa.ts), short: the CPU of a TOTP and of a passkey assertion's
 *                 verification, and sequential password + TOTP logins (two requests) against
 *                 password-only ones on a Node host: latency and host CPU per login
 *   webhooks      a burst of 1,000 Basic logins without and with three webhook subscriptions to a receiver on
 *                 loopback (webhooks.ts): login p50/p99 of both, the p99 ratio (target <= 1.1), deliveries/s
 *   far-db        a far database (far-db.ts): the edge host (wrangler dev) and the Node host with a remote
 *                 libSQL URL behind a delaying proxy at 0 and 50 ms per round trip; per operation (Bearer and
 *                 cookie every 2 s, Basic and session login, logout, settings PATCH, a fresh host's first and
 *                 second request) the round trips before and after the answer and p50/p90; the edge bundle's
 *                 gzipped size; a markdown table and each target met or MISSED
 *   growth        10,000 / 100,000 / 1,000,000 seeded accounts (with sessions and tokens): Bearer and
 *                 cookie requests/s, login p50, database size, RSS idle and under load, per size
 *   soak          BENCH_SOAK_SECONDS of mixed traffic (Bearer, cookie, logins, failed logins, refused requests) on
 *                 a fresh Node host without a log store (soak.ts): throughput, p99, RSS, the database's growth
 *                 per hour and per million requests, the API-access audit events' bytes per request
 *
 * Every server under test (our host, the peer, the bare route, the hash worker) runs pinned to
 * core 0 and the load generator (autocannon, in its own process) to core 1, over loopback, with
 * the same connections and durations, the CPUs kept out of their sleep states (BENCH_IDLE_POLL).
 * Our host runs with the production defaults of logging (LOG_LEVEL and ACCESS_LOG_LEVEL INFO,
 * written to a file) unless BENCH_LOG_LEVEL says otherwise.
 * Results: the tables on stdout and bench-results.json in the project root. Exit code 1 when a scenario
 * failed or its numbers are not to be trusted.
 *
 * Environment (all optional):
 *   BENCH_DURATION=10      measured seconds per load scenario
 *   BENCH_WARMUP=2         warm-up seconds before each load scenario
 *   BENCH_CONNECTIONS=10   concurrent connections of the load scenarios (and argon2id in flight)
 *   BENCH_TIMING_PAIRS=90  measured pairs of login-timing (at most 90: account lockout)
 *   BENCH_EDGE_LOGINS=100  sequential logins of edge-cpu (ten times as many Bearer requests)
 *   EDGE_START_RUNS=5      starts of edge-start's workers (the service's and an empty one), alternating
 *   BENCH_LDAP_LOGINS=300  sequential logins per series of ldap-bridge and ldap-login
 *   BENCH_LDAP_VIA=ldaps   directory transport of ldap-bridge and ldap-login: ldap, starttls or ldaps
 *   BENCH_GROWTH_SIZES=10000,100000,1000000   account counts of growth
 *   BENCH_SOAK_SECONDS=180 seconds of mixed traffic of soak
 *   BENCH_SOAK_MIX=mixed   the soak's traffic: mixed, or bearer (Bearer GET /v4/users/me only)
 *   BENCH_API_AUDIT=on     API-access audit events of our host (AUTH_AUDIT_API_ACCESS): on (the
 *                          default, as in production), off, or both (bearer and cookie again on a
 *                          second host with them off: bearer-no-audit, cookie-no-audit)
 *   BENCH_HOST=dist        how our Node host runs: dist (compiled by scripts/build-node.mjs, as `npm start`
 *                          runs it) or tsx (the TypeScript sources under tsx, as before)
 *   BENCH_ATTACK_SETTINGS=AUTH_ADDRESS_FAILED_COUNT=60,...   throttle settings of attack's host
 *                          (AUTH_PASSWORD_ADDRESS_*, AUTH_ADDRESS_FAILED_*, AUTH_FAILED_*; default: theirs)
 *   FAR_DB_SAMPLES=10      samples per operation of far-db
 *   FAR_DB_INTERVAL_MS=2000   ms between a user's Bearer or cookie requests in far-db (shorter: quicker runs)
 *   FAR_DB_DELAYS=0,50     ms added per round trip by far-db's proxy, one run per value
 *   FAR_DB_HOSTS=edge,node hosts of far-db
 *   FAR_DB_REVOCATION_CHECK_SEC   AUTH_REVOCATION_CHECK_SEC of far-db's hosts (default: the service's)
 *   BENCH_SCENARIOS=a,b    run only these (default all; names above)
 *   BENCH_OUTPUT=path      where to write the JSON (default bench-results.json)
 *   BENCH_LOG_LEVEL=INFO   LOG_LEVEL and ACCESS_LOG_LEVEL of the hosts (ERROR: no access log line)
 *   BENCH_IDLE_POLL=on     keep the CPUs out of their sleep states while measuring (processes.ts
 *                          holdCpusAwake; needs root, else noted); off: let them sleep, as before
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { attack } from './attack.js';
import { mfa } from './mfa.js';
import { webhooks } from './webhooks.js';
import { farDb, formatFarDb, type FarDbConfig } from './far-db.js';
import { edgeCpu } from './edge-cpu.js';
import { edgeStart } from './edge-start.js';
import { ldapBridge } from './ldap-bridge.js';
import { ldapLogin } from './ldap-login.js';
import { formatComparison, formatGrowth } from './compare.js';
import { nginxScenarios } from './forward-auth-nginx.js';
import { growth, memoryPerSessions } from './growth.js';
import { hashRate } from './hash-rate.js';
import { soak } from './soak.js';
import {
  benchServiceEnv,
  ONE_ADDRESS_ENV,
  policyPassword,
  ROOT,
  startBenchNodeHost,
  type BenchHost,
} from './node-host.js';
import { ceiling, peerScenarios } from './peer.js';
import { canPin, cpuMeter, holdCpusAwake, killAll, ownDescendants } from './processes.js';
import { formatTable, warnLoudly, writeReport, type ScenarioResult } from './report.js';
import {
  basicLogin,
  basicLoginAccounts,
  bearer,
  cookie,
  forwardAuth,
  liveness,
  loginTiming,
  MAX_TIMING_PAIRS,
  ScenarioError,
  sessionLogin,
  type BenchConfig,
  type NodeScenarioContext,
} from './scenarios.js';

/** A positive number from the environment, or the default. */
function envNumber(name: string, fallback: number, integer = false): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!(n > 0) || (integer && !Number.isInteger(n)))
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, not "${raw}"`);
  return n;
}

const config: BenchConfig = {
  durationSeconds: envNumber('BENCH_DURATION', 10),
  warmupSeconds: envNumber('BENCH_WARMUP', 2),
  connections: envNumber('BENCH_CONNECTIONS', 10, true),
  timingPairs: Math.min(envNumber('BENCH_TIMING_PAIRS', MAX_TIMING_PAIRS, true), MAX_TIMING_PAIRS),
  edgeLogins: envNumber('BENCH_EDGE_LOGINS', 100, true),
};
/** A comma-separated list from the environment, or the default. */
function envList(name: string, fallback: string[]): string[] {
  const raw = process.env[name];
  return raw ? raw.split(',').map((s) => s.trim()) : fallback;
}

/** The far-db scenario's knobs (FAR_DB_*). */
function farDbConfig(): FarDbConfig {
  const delays = envList('FAR_DB_DELAYS', ['0', '50']).map(Number);
  if (delays.some((d) => !(d >= 0))) throw new Error('FAR_DB_DELAYS must be numbers of ms (>= 0), e.g. 0,50');
  const hosts = envList('FAR_DB_HOSTS', ['edge', 'node']);
  const bad = hosts.filter((h) => h !== 'edge' && h !== 'node');
  if (bad.length > 0) throw new Error(`FAR_DB_HOSTS: edge and/or node, not ${bad.join(', ')}`);
  const revocation = process.env.FAR_DB_REVOCATION_CHECK_SEC;
  if (revocation !== undefined && revocation !== '' && !(Number(revocation) >= 0))
    throw new Error(`FAR_DB_REVOCATION_CHECK_SEC must be a number of seconds (>= 0), not "${revocation}"`);
  return {
    samples: envNumber('FAR_DB_SAMPLES', 10, true),
    intervalMs: envNumber('FAR_DB_INTERVAL_MS', 2000),
    delays,
    hosts: hosts as FarDbConfig['hosts'],
    revocationCheckSec: revocation ? Number(revocation) : undefined,
  };
}

const output = resolve(ROOT, process.env.BENCH_OUTPUT ?? 'bench-results.json');

/** BENCH_LDAP_VIA: the directory transport of the LDAP scenarios. */
function ldapVia(): 'ldap' | 'starttls' | 'ldaps' {
  const via = process.env.BENCH_LDAP_VIA ?? 'ldaps';
  if (via !== 'ldap' && via !== 'starttls' && via !== 'ldaps')
    throw new Error(`BENCH_LDAP_VIA must be ldap, starttls or ldaps, not "${via}"`);
  return via;
}

/** BENCH_API_AUDIT: whether to measure with API-access audit events on (the default), off, or both. */
function apiAudit(): { mode: 'off' | 'on' | 'both'; off: Record<string, string> } {
  const mode = process.env.BENCH_API_AUDIT ?? 'on';
  if (mode !== 'off' && mode !== 'on' && mode !== 'both')
    throw new Error(`BENCH_API_AUDIT must be on, off or both, not "${mode}"`);
  return { mode, off: { AUTH_AUDIT_API_ACCESS: 'False' } };
}
const audit = apiAudit();

// Order matters: login-timing leaves failed attempts of bench-admin behind, so it runs last.
type NodeScenario = (ctx: NodeScenarioContext) => Promise<ScenarioResult>;
const NODE_SCENARIOS: Record<string, NodeScenario> = {
  liveness,
  'basic-login': basicLogin,
  'basic-login-accounts': basicLoginAccounts,
  'session-login': sessionLogin,
  bearer: (ctx) => bearer(ctx),
  cookie: (ctx) => cookie(ctx),
  'login-timing': loginTiming,
};
const PEER_SCENARIOS = ['peer-login', 'peer-cookie', 'peer-bearer', 'peer-cookie-cache'];
const ALL = [
  'hash-rate',
  'ceiling',
  ...Object.keys(NODE_SCENARIOS),
  'forward-auth',
  'forward-auth-nginx',
  'memory',
  ...PEER_SCENARIOS,
  'edge-cpu',
  'edge-start',
  'ldap-bridge',
  'ldap-login',
  'attack',
  'mfa',
  'webhooks',
  'far-db',
  'growth',
  'soak',
];
const selected = process.env.BENCH_SCENARIOS ? process.env.BENCH_SCENARIOS.split(',').map((s) => s.trim()) : ALL;
const unknown = selected.filter((s) => !ALL.includes(s));
if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${ALL.join(', ')}`);

// ---- cleanup, also on Ctrl+C ------------------------------------------------------------------

// Every temporary folder (databases of both hosts, wrangler's files) goes below one folder of this
// run, removed at the end whatever happens: os.tmpdir() follows TMPDIR, which children inherit.
const scratch = mkdtempSync(join(tmpdir(), 'auth-bench-run-'));
process.env.TMPDIR = scratch;
const removeScratch = () => rmSync(scratch, { recursive: true, force: true });

const stoppers = new Set<() => Promise<void>>();
/** Registers a stop function (made idempotent); returns it. */
function register(stop: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  const once = () => (done ??= stop().finally(() => stoppers.delete(once)));
  stoppers.add(once);
  return once;
}
async function stopAll(): Promise<void> {
  await Promise.allSettled([...stoppers].map((stop) => stop()));
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping everything the benchmark started...`);
    // Kill the whole tree at once (also a host still starting, not registered yet), then let the
    // stop functions remove temporary folders and close the libSQL dev server.
    killAll(ownDescendants());
    const timeout = new Promise((r) => setTimeout(r, 10_000).unref());
    void Promise.race([stopAll(), timeout]).finally(() => {
      removeScratch();
      process.exit(130);
    });
  });
}

// ---- scenarios --------------------------------------------------------------------------------

const failed = (scenario: string, err: unknown): ScenarioResult => ({
  scenario,
  status: 'failed',
  message: err instanceof ScenarioError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err),
});

/** ERROR/CRITICAL lines the host printed. */
const errorLines = (text: string) => text.split('\n').filter((l) => /"level":"(ERROR|CRITICAL)"/.test(l));

function report(r: ScenarioResult, results: ScenarioResult[]): void {
  results.push(r);
  const numbers =
    r.requestsPerSec === undefined
      ? ''
      : ` ${r.requestsPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, non-2xx ${r.non2xx}`;
  console.log(`  ${r.status}${numbers}${r.message && r.status === 'ok' ? ` - ${r.message}` : ''}`);
  warnLoudly(r);
}

async function runNodeScenarios(
  scenarios: Record<string, NodeScenario>,
  adminPassword: string,
  results: ScenarioResult[],
  extraEnv: Record<string, string> = {},
): Promise<void> {
  const names = Object.keys(scenarios);
  // The login scenarios (the peer comparison's) send every login from 127.0.0.1, 10 at once.
  const env = { ...benchServiceEnv(adminPassword), ...ONE_ADDRESS_ENV, ...extraEnv };
  let host: BenchHost;
  try {
    host = await startBenchNodeHost(env);
  } catch (err) {
    for (const name of names) report(failed(name, err), results);
    return;
  }
  const stop = register(host.stop);
  try {
    console.log(
      `Node host ${host.base} (pid ${host.child.pid}${host.pinned ? ', core 0' : ', NOT pinned'}; log ${host.logFile})`,
    );
    for (const name of names) {
      console.log(`> ${name}`);
      const before = host.logSize();
      let r: ScenarioResult;
      try {
        r = await scenarios[name]!({
          base: host.base,
          hostPid: host.child.pid!,
          adminPassword,
          config,
          sessionSecret: env.SESSION_SECRET_KEY!,
          dbFile: host.dbFile,
        });
      } catch (err) {
        r = failed(name, err);
      }
      if (r.hostCpuPercent !== undefined && r.hostCpuPercent < 85 && r.requestsPerSec !== undefined) {
        const client = r.details?.clientCpuPercent;
        r.message =
          `${r.message ?? ''}${r.message ? '; ' : ''}the host used only ${r.hostCpuPercent}% of its core ` +
          `(load generator ${client ?? '?'}%, machine ${r.machineCpuPercent}%): something else limited this ` +
          `run`;
      }
      const errors = errorLines(host.output(before));
      if (errors.length > 0)
        r.message =
          `${r.message ?? ''}${r.message ? '; ' : ''}the host logged ${errors.length} error line(s), first: ` +
          `${errors[0]!.slice(0, 300)}`;
      report(r, results);
    }
  } finally {
    await stop();
  }
}

/** The attack scenario's targets, per attack run (`attack-1addr.legitSuccess`, ...), for bench-results.json. */
function attackTargets(results: readonly ScenarioResult[]): Record<string, boolean> {
  const figures = results.find((r) => r.scenario === 'attack')?.details?.figures as
    | Record<string, { targets: Record<string, boolean> }>
    | undefined;
  return Object.fromEntries(
    Object.entries(figures ?? {}).flatMap(([run, f]) =>
      Object.entries(f.targets).map(([name, ok]) => [`attack.${run}.${name}`, ok]),
    ),
  );
}

async function main(): Promise<number> {
  const pinned = canPin();
  const awake = holdCpusAwake();
  console.log(
    `bench: ${config.connections} connections, ${config.warmupSeconds} s warm-up + ${config.durationSeconds} s ` +
      `measured; Node ${process.version}; ` +
      (pinned
        ? 'host on core 0, load on core 1'
        : 'NOT pinned (no taskset, or fewer than 2 CPUs): host and load share the CPUs') +
      (awake.held ? '; CPUs kept out of sleep states' : `; CPUs may sleep (${awake.reason})`),
  );
  // Pinning keeps our processes apart, not other people's processes off our cores.
  const idle = cpuMeter(process.pid);
  await new Promise((r) => setTimeout(r, 1_000));
  const machineBusyBefore = Math.round(idle.stop().machineCpuPercent);
  if (machineBusyBefore > 10)
    console.error(
      `WARNING: the machine was ${machineBusyBefore}% busy before the benchmark started (other processes): ` +
        `expect noisy numbers.`,
    );
  const adminPassword = policyPassword();
  const results: ScenarioResult[] = [];
  try {
    const push = (r: ScenarioResult) => report(r, results);
    if (selected.includes('hash-rate')) {
      console.log('> hash-rate');
      push(await hashRate(config).catch((err: unknown) => failed('hash-rate', err)));
    }
    if (selected.includes('ceiling')) {
      console.log('> ceiling (bare Hono)');
      push(await ceiling(config, register).catch((err: unknown) => failed('ceiling', err)));
    }
    const pick = (names: string[]) =>
      Object.fromEntries(Object.entries(NODE_SCENARIOS).filter(([n]) => names.includes(n)));
    const nodeNames = Object.keys(NODE_SCENARIOS).filter((n) => selected.includes(n));
    if (nodeNames.length > 0) {
      await runNodeScenarios(pick(nodeNames), adminPassword, results, audit.mode === 'off' ? audit.off : {});
    }
    if (audit.mode === 'both' && (selected.includes('bearer') || selected.includes('cookie'))) {
      console.log('Node host with API-access audit events off');
      const withoutAudit: Record<string, NodeScenario> = {};
      if (selected.includes('bearer')) withoutAudit['bearer-no-audit'] = (ctx) => bearer(ctx, 'bearer-no-audit');
      if (selected.includes('cookie')) withoutAudit['cookie-no-audit'] = (ctx) => cookie(ctx, 'cookie-no-audit');
      await runNodeScenarios(withoutAudit, adminPassword, results, audit.off);
    }
    if (selected.includes('forward-auth')) {
      console.log('Node host with AUTH_TRUSTED_PROXIES=127.0.0.1 (the gate answers trusted proxies only)');
      await runNodeScenarios(
        {
          'forward-auth-bearer': (ctx) => forwardAuth(ctx, 'bearer'),
          'forward-auth-cookie': (ctx) => forwardAuth(ctx, 'cookie'),
        },
        adminPassword,
        results,
        { AUTH_TRUSTED_PROXIES: '127.0.0.1' },
      );
    }
    if (selected.includes('forward-auth-nginx')) {
      console.log('nginx (auth_request) in front of a tiny upstream, asking a Node host that trusts 127.0.0.1');
      const rig = nginxScenarios();
      try {
        await runNodeScenarios(rig.scenarios, adminPassword, results, { AUTH_TRUSTED_PROXIES: '127.0.0.1' });
      } finally {
        await rig.stop();
      }
    }
    if (selected.includes('memory')) {
      console.log('> memory (a fresh Node host; 10,000 seeded sessions)');
      push(await memoryPerSessions(config, adminPassword, register).catch((err: unknown) => failed('memory', err)));
    }
    const peerNames = PEER_SCENARIOS.filter((n) => selected.includes(n));
    if (peerNames.length > 0) {
      console.log('Reference peer: better-auth (SQLite, better-sqlite3)');
      await peerScenarios(config, peerNames, register, push).catch((err: unknown) => {
        for (const name of peerNames.filter((n) => !results.some((r) => r.scenario === n))) push(failed(name, err));
      });
    }
    if (selected.includes('edge-cpu')) {
      console.log(`> edge-cpu (starting wrangler dev; ${config.edgeLogins} logins)`);
      let r: ScenarioResult;
      try {
        r = await edgeCpu(adminPassword, config.edgeLogins, register);
      } catch (err) {
        r = failed('edge-cpu', err);
      }
      report(r, results);
    }
    if (selected.includes('edge-start')) {
      const runs = envNumber('EDGE_START_RUNS', 5, true);
      console.log(`> edge-start (the deployed script in workerd; ${runs} starts, and as many of an empty worker)`);
      report(await edgeStart(runs).catch((err: unknown) => failed('edge-start', err)), results);
    }
    if (selected.includes('ldap-bridge')) {
      const via = ldapVia();
      console.log(`> ldap-bridge (slapd + the bridge over mTLS; ${via})`);
      report(
        await ldapBridge(envNumber('BENCH_LDAP_LOGINS', 300, true), via, register).catch((err: unknown) =>
          failed('ldap-bridge', err),
        ),
        results,
      );
    }
    if (selected.includes('ldap-login')) {
      const via = ldapVia();
      console.log(`> ldap-login (slapd + the bridge over mTLS + a Node host using it; ${via})`);
      report(
        await ldapLogin(envNumber('BENCH_LDAP_LOGINS', 300, true), via, adminPassword, register).catch((err: unknown) =>
          failed('ldap-login', err),
        ),
        results,
      );
    }
    if (selected.includes('attack')) {
      console.log(
        '> attack (a Node host behind a trusted proxy; 4 runs: without and with an attack, direct and proxied)',
      );
      push(await attack(config, adminPassword, register).catch((err: unknown) => failed('attack', err)));
    }
    if (selected.includes('mfa')) {
      console.log('> mfa (TOTP and passkey verification CPU; password + TOTP logins against password-only)');
      push(await mfa(config, adminPassword, register).catch((err: unknown) => failed('mfa', err)));
    }
    if (selected.includes('webhooks')) {
      console.log('> webhooks (1,000 logins without and with 3 subscriptions; deliveries/s to a local receiver)');
      push(await webhooks(config, adminPassword, register).catch((err: unknown) => failed('webhooks', err)));
    }
    if (selected.includes('far-db')) {
      const far = farDbConfig();
      console.log(
        `> far-db (${far.hosts.join(' and ')} host(s) behind a delaying proxy at ${far.delays.join(', ')} ms; ` +
          `${far.samples} samples per operation)`,
      );
      push(await farDb(far, register).catch((err: unknown) => failed('far-db', err)));
    }
    if (selected.includes('growth'))
      await growth(config, adminPassword, register, push).catch((err: unknown) => push(failed('growth', err)));
    if (selected.includes('soak')) {
      const seconds = envNumber('BENCH_SOAK_SECONDS', 180);
      console.log(`> soak (${seconds} s of mixed traffic on a fresh Node host, no log store)`);
      push(await soak(config, seconds, adminPassword, register).catch((err: unknown) => failed('soak', err)));
    }
  } finally {
    await stopAll();
    // Belt and braces: nothing we started may outlive the benchmark.
    const left = ownDescendants();
    if (left.length > 0) {
      console.error(
        `WARNING: killing ${left.length} leftover process(es): ${left.map((p) => `${p.pid} ${p.comm}`).join(', ')}`,
      );
      killAll(left);
    }
    removeScratch();
  }

  console.log(`\n${formatTable(results)}`);
  const comparison = formatComparison(results);
  if (comparison.text)
    console.log(
      `\nSide by side (same harness: servers on core 0, load on core 1, ${config.connections} connections):\n` +
        `${comparison.text}`,
    );
  const growthTable = formatGrowth(results);
  const farDbTable = formatFarDb(results);
  if (farDbTable) console.log(`\nA far database (round trips before / after the answer, latency):\n${farDbTable}`);
  if (growthTable) console.log(`\nGrowth (cost per request must not grow with the accounts):\n${growthTable}`);
  if (machineBusyBefore > 10)
    console.log(
      `\nNOTE: the machine was ${machineBusyBefore}% busy before the run: these numbers are only indicative.`,
    );
  writeReport(output, {
    time: new Date().toISOString(),
    node: process.version,
    pinned,
    machineBusyBefore,
    config: {
      ...config,
      apiAudit: audit.mode,
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'INFO',
      cpusAwake: awake.held,
    },
    targets: {
      ...comparison.targets,
      ...attackTargets(results),
      ...((results.find((r) => r.scenario === 'far-db')?.details?.targets as Record<string, boolean>) ?? {}),
      ...((results.find((r) => r.scenario === 'edge-start')?.details?.targets as Record<string, boolean>) ?? {}),
    },
    results,
  });
  console.log(`\nwrote ${output}`);
  const bad = results.filter((r) => r.status !== 'ok');
  if (bad.length > 0)
    console.error(
      `\n${bad.length} scenario(s) ${bad.map((r) => `${r.scenario} ${r.status.toUpperCase()}`).join(', ')}: see above.`,
    );
  return bad.length > 0 ? 1 : 0;
}

process.exitCode = await main();

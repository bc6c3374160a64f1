/**
 * attack: abuse resistance under load (docs/performance.md). Our Node host on the host core with
 * AUTH_TRUSTED_PROXIES=127.0.0.1 and the production defaults of every throttle (AUTH_FAILED_COUNT
 * too, which the other scenarios raise), seeded accounts; the load (attack-worker.ts) on the load
 * core, open loop at fixed rates. The capacity is the raw argon2id rate on the host core (the hash
 * worker, as many in flight as connections), measured first. Four runs on one host, in order:
 *
 *   direct         legitimate users log in (POST /v3/login, as browsers: each keeps its device
 *                  cookie) at 10 % of the capacity, each from its own address (127.0.1.x), a
 *                  browser holding a device cookie of an attacked account logs in once a second
 *                  (127.0.0.5), and Bearer and cookie requests of another user (GET /v4/users/me)
 *                  run at a fixed rate (127.0.0.6): the baseline, no attack
 *   attack-1addr   the same, while an attacker from one address (127.0.0.9) sends logins at 10
 *                  times the capacity: wrong passwords of known logins (the browser's among them)
 *                  alternating with unknown logins
 *   proxied        the baseline again, every client through the trusted proxy (the socket from
 *                  127.0.0.1, the client in X-Forwarded-For)
 *   attack-50addr  the same, while the attacker comes through the proxy from 50 addresses
 *
 * Targets (docs/performance.md), per attack run: legitimate logins succeed >= 99 % with p99 <= 1 s, and
 * neither they nor the device-cookie browser ever get a 503 (docs/security-admission.md); every
 * attacker address gets 429 (with Retry-After) once its budget is spent (answers other than 429 per
 * address at most AUTH_PASSWORD_ADDRESS_BURST + the rate's refill over the run +
 * AUTH_PASSWORD_ADDRESS_IN_FLIGHT); the browser with the device cookie logs in every time (>= 99 %);
 * Bearer and cookie requests keep >= 90 % of their rate without the attack. Alternative throttle
 * settings can be measured with BENCH_ATTACK_SETTINGS=AUTH_ADDRESS_FAILED_COUNT=60,...
 */
import { resolve } from 'node:path';
import { Agent, request } from 'undici';
import { REGISTRY } from '../../worker/src/config/registry.js';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import type { AttackJob, AttackLane, AttackStream, StreamResult } from './attack-worker.js';
import { benchServiceEnv, LOAD_CORE, ROOT, startBenchNodeHost } from './node-host.js';
import { captureOutput, cpuMeter, spawnPinned, stopProcess, tail, untilQuiet } from './processes.js';
import { MEASURING } from './protocol.js';
import { startHashWorker } from './raw-hash.js';
import type { ScenarioResult } from './report.js';
import { ScenarioError, type BenchConfig } from './scenarios.js';
import { seededLogin, seedAccounts, sessionCookie } from './seed.js';
import { round } from './stats.js';

type Register = (stop: () => Promise<void>) => () => Promise<void>;

const WORKER = resolve(ROOT, 'scripts/bench/attack-worker.ts');
const PASSWORD = 'Bn#7seededPassw0rd';
/** Known logins the attacker guesses; the first one's owner holds a device cookie. */
const VICTIMS = 5;
/** The attacker's addresses behind the proxy. */
const PROXIED_ATTACKERS = 50;
/**
 * A legitimate address logs in this often (12 a minute: far below AUTH_PASSWORD_ADDRESS_RATE's default
 * of 60, and within the tighter rates BENCH_ATTACK_SETTINGS may try).
 */
const LEGIT_PER_ADDRESS_PER_SEC = 0.2;
/** The browser holding a device cookie logs in this often. */
const DEVICE_PER_SEC = 1;
/** Bearer and cookie requests per second each: a modest fixed rate, far below the host's capacity. */
const API_PER_SEC = 200;

/** The effective value of a throttle setting: BENCH_ATTACK_SETTINGS, else its default. */
function setting(overrides: Record<string, string>, name: keyof typeof REGISTRY): number {
  const def = REGISTRY[name];
  const raw = overrides[def.env];
  return raw === undefined ? (def.default as number) : Number(raw);
}

/** BENCH_ATTACK_SETTINGS=NAME=value,...: throttle settings of the host, to measure alternatives. */
function settingOverrides(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (process.env.BENCH_ATTACK_SETTINGS ?? '').split(',').filter(Boolean)) {
    const [k, v] = pair.split('=');
    if (!k || v === undefined || !/^AUTH_(PASSWORD_ADDRESS|ADDRESS_FAILED|FAILED|PASSWORD_HASH)_/.test(k.trim()))
      throw new Error(`BENCH_ATTACK_SETTINGS: "${pair}" is not AUTH_<throttle setting>=value`);
    out[k.trim()] = v.trim();
  }
  return out;
}

/** Runs one job in the pinned attack load process; `onMeasuring` when its warm-up is over. */
async function runAttackJob(job: AttackJob, onMeasuring: () => void): Promise<StreamResult[]> {
  const child = spawnPinned(LOAD_CORE, process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: { ...process.env, BENCH_ATTACK_JOB: JSON.stringify(job) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  let stdout = '';
  let measuring = false;
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (!measuring && stdout.includes(`${MEASURING}\n`)) {
      measuring = true;
      onMeasuring();
    }
  });
  try {
    const code = await new Promise<number | null>((res, rej) => {
      child.once('error', rej);
      child.once('close', res);
    });
    const last = stdout.trim().split('\n').pop() ?? '';
    if (code !== 0 || !last.startsWith('['))
      throw new Error(`the attack load generator failed (exit ${code}):\n${tail(output())}`);
    return JSON.parse(last) as StreamResult[];
  } finally {
    await stopProcess(child);
  }
}

/** POST /v3/login from `localAddress`; returns the device cookie's value (the account must log in). */
async function primeDeviceCookie(base: string, login: string, localAddress: string): Promise<string> {
  const agent = new Agent({ localAddress });
  try {
    const res = await request(`${base}/v3/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login, password: PASSWORD }),
      dispatcher: agent,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new ScenarioError(
        `POST /v3/login (${login} from ${localAddress}): ${res.statusCode} ${text.slice(0, 300)}`,
      );
    const set = res.headers['set-cookie'];
    const cookie = (Array.isArray(set) ? set : set ? [set] : [])
      .map((c) => /^(?:__Host-)?auth_device=([^;]*)/.exec(c)?.[1])
      .find(Boolean);
    if (!cookie) throw new ScenarioError('POST /v3/login: no auth_device cookie in the answer');
    return cookie;
  } finally {
    await agent.close();
  }
}

interface RunSpec {
  name: string;
  attack: boolean;
  proxied: boolean;
}

/** Figures and targets of one attack run against its baseline. */
interface AttackFigures {
  legitSuccess: number;
  legitP99Ms: number;
  legitPerSec: number;
  attackerStatuses: Record<string, number>;
  attackerAddressesOverBudget: number;
  attackerMaxNot429: number;
  attackerBudget: number;
  attackerMissingRetryAfter: number;
  deviceSuccess: number;
  deviceLogins: number;
  /** 503 answers to the legitimate and device-cookie logins (admission never blames the service) */
  legit503: number;
  bearerRatio: number;
  cookieRatio: number;
  bearerP99Ms: number;
  cookieP99Ms: number;
  hostCpuPercent: number;
  /** the host's CPU per attacker answer (its CPU beyond the run without the attack), microseconds */
  cpuPerAttackerAnswerUs: number;
  targets: Record<string, boolean>;
}

const ratio = (n: number, d: number) => (d > 0 ? n / d : Number.NaN);

export async function attack(config: BenchConfig, adminPassword: string, register: Register): Promise<ScenarioResult> {
  const { warmupSeconds, durationSeconds } = config;
  const overrides = settingOverrides();
  // The capacity: raw argon2id verifications/s on the host core, before the host starts.
  const hash = await startHashWorker();
  let capacity: number;
  try {
    capacity = (await hash.measure(config.connections, Math.min(Math.max(2, durationSeconds), 5))).perSec;
  } finally {
    await hash.stop();
  }
  const env: Record<string, string> = {
    ...benchServiceEnv(adminPassword),
    AUTH_TRUSTED_PROXIES: '127.0.0.1',
    ...overrides,
  };
  // The lock of a login is part of what is measured: its production default, not the bench's 100.
  if (!overrides.AUTH_FAILED_COUNT) delete env.AUTH_FAILED_COUNT;
  const host = await startBenchNodeHost(env);
  const stop = register(host.stop);
  try {
    const legitPerSec = 0.1 * capacity;
    const legitCount = Math.max(10, Math.ceil(legitPerSec / LEGIT_PER_ADDRESS_PER_SEC));
    const used = VICTIMS + legitCount;
    const now = Date.now();
    // The probe (the account in the middle, with a known token and session) lies past the used ones.
    const seeded = seedAccounts(host.dbFile, 2 * used + 1, {
      passwordHash: await createNodeNativeHasher().hash(PASSWORD),
      now,
    });
    const victims = Array.from({ length: VICTIMS }, (_, i) => seededLogin(i + 1));
    const legit = Array.from({ length: legitCount }, (_, i) => seededLogin(VICTIMS + i + 1));
    const sessionHeader = await sessionCookie(
      env.SESSION_SECRET_KEY!,
      seeded.probe.sessionId,
      seeded.probe.userId,
      now + 86_400_000,
    );
    // The browser of the first victim logs in once before anything else: it holds a device cookie.
    let deviceCookie: string;
    try {
      deviceCookie = await primeDeviceCookie(host.base, victims[0]!, '127.0.0.5');
    } catch (err) {
      if (err instanceof ScenarioError) throw err;
      throw new ScenarioError(`cannot connect from 127.0.0.5 (loopback addresses other than 127.0.0.1): ${err}`);
    }
    const url = (path: string) => `${host.base}${path}`;
    const streamsOf = (spec: RunSpec): AttackStream[] => {
      const from = (local: string, xff: string): Pick<AttackLane, 'localAddress' | 'xff'> =>
        spec.proxied ? { xff } : { localAddress: local };
      const streams: AttackStream[] = [
        {
          name: 'legit',
          url: url('/v3/login'),
          method: 'POST',
          perSec: legitPerSec,
          maxInFlight: 256,
          lanes: legit.map((login, i) => ({
            ...from(`127.0.1.${i + 1}`, `10.77.${i >> 8}.${(i & 255) + 1}`),
            login,
            password: PASSWORD,
            browser: true,
          })),
        },
        {
          name: 'device',
          url: url('/v3/login'),
          method: 'POST',
          perSec: DEVICE_PER_SEC,
          maxInFlight: 16,
          lanes: [{ ...from('127.0.0.5', '10.88.0.1'), login: victims[0], password: PASSWORD, deviceCookie }],
        },
        {
          name: 'bearer',
          url: url('/v4/users/me'),
          method: 'GET',
          perSec: API_PER_SEC,
          maxInFlight: 64,
          lanes: [{ ...from('127.0.0.6', '10.99.0.1'), headers: { authorization: `Bearer ${seeded.probe.token}` } }],
        },
        {
          name: 'cookie',
          url: url('/v4/users/me'),
          method: 'GET',
          perSec: API_PER_SEC,
          maxInFlight: 64,
          lanes: [{ ...from('127.0.0.6', '10.99.0.1'), headers: { cookie: sessionHeader } }],
        },
      ];
      if (spec.attack)
        streams.push({
          name: 'attacker',
          url: url('/v3/login'),
          method: 'POST',
          perSec: 10 * capacity,
          maxInFlight: 512,
          lanes: spec.proxied
            ? Array.from({ length: PROXIED_ATTACKERS }, (_, i) => ({ xff: `10.66.0.${i + 1}`, victims }))
            : [{ localAddress: '127.0.0.9', victims }],
        });
      return streams;
    };

    const runs: Array<{ spec: RunSpec; streams: Record<string, StreamResult>; hostCpuPercent: number }> = [];
    const specs: RunSpec[] = [
      { name: 'direct', attack: false, proxied: false },
      { name: 'attack-1addr', attack: true, proxied: false },
      { name: 'proxied', attack: false, proxied: true },
      { name: 'attack-50addr', attack: true, proxied: true },
    ];
    for (const spec of specs) {
      await untilQuiet(host.child.pid!);
      console.log(`  ${spec.name}...`);
      const meter = cpuMeter(host.child.pid!);
      const job: AttackJob = { streams: streamsOf(spec), warmupSeconds, durationSeconds };
      const results = await runAttackJob(job, () => meter.start());
      const cpu = meter.stop();
      runs.push({
        spec,
        streams: Object.fromEntries(results.map((r) => [r.name, r])),
        hostCpuPercent: Math.round(cpu.processCpuPercent),
      });
    }

    const burst = setting(overrides, 'PASSWORD_ADDRESS_BURST');
    const perMinute = setting(overrides, 'PASSWORD_ADDRESS_RATE');
    const inFlight = setting(overrides, 'PASSWORD_ADDRESS_IN_FLIGHT');
    // The bucket refills while the host still works through the load: over the run's whole span.
    const budget = (seconds: number) => Math.ceil(burst + (perMinute * seconds) / 60 + inFlight);
    const figures: Record<string, AttackFigures> = {};
    for (const [i, run] of runs.entries()) {
      if (!run.spec.attack) continue;
      const base = runs[i - 1]!.streams;
      const s = run.streams;
      const legitS = s.legit!;
      const attacker = s.attacker!;
      const device = s.device!;
      const legitSuccess = ratio(legitS.ok, legitS.due);
      const count503 = (r: StreamResult) =>
        Object.entries(r.statusCodes).reduce((n, [k, v]) => (k.startsWith('503') ? n + v : n), 0);
      const legit503 = count503(legitS) + count503(device);
      const deviceSuccess = ratio(device.ok, device.due);
      const bearerRatio = ratio(s.bearer!.requestsPerSec, base.bearer!.requestsPerSec);
      const cookieRatio = ratio(s.cookie!.requestsPerSec, base.cookie!.requestsPerSec);
      const attackerBudget = budget(attacker.runSeconds);
      const maxNot429 = Math.max(...attacker.lanes.map((l) => l.not429));
      const over = attacker.lanes.filter((l) => l.not429 > attackerBudget).length;
      const got429 = attacker.lanes.every((l) => l.answers > l.not429);
      figures[run.spec.name] = {
        legitSuccess: round(legitSuccess),
        legitP99Ms: round(legitS.p99Ms),
        legitPerSec: round(legitS.requestsPerSec),
        attackerStatuses: attacker.statusCodes,
        attackerAddressesOverBudget: over,
        attackerMaxNot429: maxNot429,
        attackerBudget,
        attackerMissingRetryAfter: attacker.missingRetryAfter,
        deviceSuccess: round(deviceSuccess),
        deviceLogins: device.due,
        legit503,
        bearerRatio: round(bearerRatio),
        cookieRatio: round(cookieRatio),
        bearerP99Ms: round(s.bearer!.p99Ms),
        cookieP99Ms: round(s.cookie!.p99Ms),
        hostCpuPercent: run.hostCpuPercent,
        // Negative when other processes took more of the core during the attack run than before.
        cpuPerAttackerAnswerUs: Math.round(
          ((run.hostCpuPercent - runs[i - 1]!.hostCpuPercent) * 1e4) / Math.max(1, attacker.requestsPerSec),
        ),
        targets: {
          legitSuccess: legitSuccess >= 0.99,
          legitP99: legitS.p99Ms <= 1000,
          legitNo503: legit503 === 0,
          attacker429: over === 0 && got429 && attacker.missingRetryAfter === 0,
          deviceCookieOwner: deviceSuccess >= 0.99,
          bearerRate: bearerRatio >= 0.9,
          cookieRate: cookieRatio >= 0.9,
        },
      };
    }

    const mark = (ok: boolean | undefined) => (ok ? 'met' : 'MISSED');
    const pct = (x: number) => `${round(x * 100)} %`;
    const lines = [
      `capacity ${round(capacity)} raw argon2id verifications/s (${config.connections} in flight); attacker ` +
        `${round(10 * capacity)}/s, legitimate logins ${round(legitPerSec)}/s from ${legitCount} addresses, ` +
        `Bearer and cookie ${API_PER_SEC}/s each; throttles: AUTH_PASSWORD_ADDRESS_IN_FLIGHT ${inFlight}, _RATE ` +
        `${perMinute}/min, _BURST ${burst}, AUTH_ADDRESS_FAILED_COUNT ${setting(overrides, 'ADDRESS_FAILED_COUNT')}` +
        ` per ${setting(overrides, 'ADDRESS_FAILED_WINDOW_MIN')} min, AUTH_FAILED_COUNT ` +
        `${overrides.AUTH_FAILED_COUNT ?? REGISTRY.AUTH_FAILED_COUNT.default}`,
    ];
    for (const [name, f] of Object.entries(figures)) {
      const t = f.targets;
      lines.push(
        `${name}: legitimate logins ${pct(f.legitSuccess)} ok (>= 99 %: ${mark(t.legitSuccess)}), p99 ` +
          `${f.legitP99Ms} ms (<= 1000: ${mark(t.legitP99)}), ${f.legit503} answered 503 (none: ` +
          `${mark(t.legitNo503)}); attacker ${JSON.stringify(f.attackerStatuses)}, ` +
          `at most ${f.attackerMaxNot429} non-429 answers per address (budget ${f.attackerBudget}; ` +
          `${f.attackerMissingRetryAfter} 429 without Retry-After: ${mark(t.attacker429)}); device-cookie ` +
          `browser ${pct(f.deviceSuccess)} of ${f.deviceLogins} (${mark(t.deviceCookieOwner)}); Bearer ` +
          `${pct(f.bearerRatio)} of its unattacked rate, p99 ${f.bearerP99Ms} ms (>= 90 %: ${mark(t.bearerRate)}), ` +
          `cookie ${pct(f.cookieRatio)}, p99 ${f.cookieP99Ms} ms (${mark(t.cookieRate)}); ` +
          `host CPU ${f.hostCpuPercent}% (${f.cpuPerAttackerAnswerUs} us per attacker answer)`,
      );
    }
    const all = Object.values(figures).flatMap((f) => Object.values(f.targets));
    const worst = Object.values(figures).reduce((w, f) => (f.legitSuccess < w.legitSuccess ? f : w));
    return {
      scenario: 'attack',
      status: 'ok',
      message: lines.join('\n     '),
      requestsPerSec: worst.legitPerSec,
      p99Ms: Math.max(...Object.values(figures).map((f) => f.legitP99Ms)),
      hostCpuPercent: Math.max(...runs.map((r) => r.hostCpuPercent)),
      details: {
        capacityPerSec: round(capacity),
        attackerPerSec: round(10 * capacity),
        legitPerSec: round(legitPerSec),
        legitAddresses: legitCount,
        apiPerSec: API_PER_SEC,
        settings: overrides,
        allTargetsMet: all.every(Boolean),
        runs: Object.fromEntries(runs.map((r) => [r.spec.name, { hostCpuPercent: r.hostCpuPercent, ...r.streams }])),
        figures,
      },
    };
  } finally {
    await stop();
  }
}

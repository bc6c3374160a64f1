/**
 * The load process of the `attack` scenario (started by attack.ts, pinned to the load core): several
 * open-loop streams at fixed rates at once (the attacker, legitimate users, a browser holding a device
 * cookie, Bearer and cookie requests), each request from its lane's own local address (127.x.y.z:
 * undici's `localAddress`, which autocannon cannot set) or through the "proxy" (the socket from
 * 127.0.0.1, the client in X-Forwarded-For). Reads the job from BENCH_ATTACK_JOB, prints MEASURING when
 * the warm-up is over, then the result as one JSON line. Imports nothing of the service.
 */
import { Agent, request } from 'undici';
import { MEASURING } from './protocol.js';
import { percentile } from './stats.js';

/** One client of a stream: where it comes from and what it sends. */
export interface AttackLane {
  /** local address to connect from (127.0.0.0/8); absent: the default (127.0.0.1, the proxy) */
  localAddress?: string;
  /** X-Forwarded-For, for a client behind the trusted proxy */
  xff?: string;
  /** fixed headers (Authorization, Cookie) */
  headers?: Record<string, string>;
  /** a password login (JSON body of POST /v3/login) with these credentials */
  login?: string;
  password?: string;
  /** the attacker: wrong passwords for these known logins, alternating with unknown logins */
  victims?: string[];
  /** a browser: sends the device cookie it holds and keeps the one each answer sets */
  deviceCookie?: string;
  browser?: boolean;
}

export interface AttackStream {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  /** requests per second over all lanes (open loop: sent on time whatever the answers) */
  perSec: number;
  /** requests of the stream in flight at most; a request due beyond it is not sent (counted as skipped) */
  maxInFlight: number;
  lanes: AttackLane[];
}

export interface AttackJob {
  streams: AttackStream[];
  warmupSeconds: number;
  durationSeconds: number;
}

export interface LaneResult {
  /** answers over the whole run (warm-up included): a client's budget starts with its first request */
  answers: number;
  /** answers that were not 429 over the whole run */
  not429: number;
}

export interface StreamResult {
  name: string;
  /** requests due in the measured part (sent or skipped) */
  due: number;
  skipped: number;
  /** answers to requests sent in the measured part */
  responses: number;
  ok: number;
  errors: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** "status CODE/reason" (problem code and reason when there are) -> count, measured part */
  statusCodes: Record<string, number>;
  /** 429 answers without Retry-After (whole run) */
  missingRetryAfter: number;
  /** seconds from the first request to the last answer (a slow host answers after the load's end) */
  runSeconds: number;
  lanes: LaneResult[];
}

const DEVICE_COOKIE = 'auth_device';

function runAttack(job: AttackJob): Promise<StreamResult[]> {
  const agents = new Map<string, Agent>();
  const agentFor = (localAddress: string | undefined) => {
    const key = localAddress ?? '';
    let agent = agents.get(key);
    if (!agent) {
      agent = new Agent({
        connections: 512,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
        ...(localAddress ? { localAddress } : {}),
      });
      agents.set(key, agent);
    }
    return agent;
  };
  const total = job.warmupSeconds + job.durationSeconds;
  const start = performance.now();
  let measuringAt = Number.POSITIVE_INFINITY;
  const pending = new Set<Promise<void>>();
  let unknownLogins = 0;

  const streams = job.streams.map((s) => ({
    s,
    sent: 0,
    inFlight: 0,
    latencies: [] as number[],
    r: {
      name: s.name,
      due: 0,
      skipped: 0,
      responses: 0,
      ok: 0,
      errors: 0,
      requestsPerSec: 0,
      p50Ms: 0,
      p99Ms: 0,
      statusCodes: {},
      missingRetryAfter: 0,
      runSeconds: 0,
      lanes: s.lanes.map(() => ({ answers: 0, not429: 0 })),
    } as StreamResult,
  }));

  const fire = (st: (typeof streams)[number], laneIndex: number, measured: boolean) => {
    const lane = st.s.lanes[laneIndex]!;
    const headers: Record<string, string> = { ...lane.headers };
    if (lane.xff) headers['x-forwarded-for'] = lane.xff;
    if (lane.deviceCookie) headers.cookie = `${DEVICE_COOKIE}=${lane.deviceCookie}`;
    let body: string | undefined;
    if (lane.victims) {
      const n = st.sent;
      const login =
        n % 2 === 0 ? lane.victims[(n / 2) % lane.victims.length]! : `ghost${String(++unknownLogins).padStart(7, '0')}`;
      body = JSON.stringify({ login, password: `Wr0ng#guess${n}` });
    } else if (lane.login !== undefined) {
      body = JSON.stringify({ login: lane.login, password: lane.password });
    }
    if (body !== undefined) headers['content-type'] = 'application/json';
    const t0 = performance.now();
    st.inFlight++;
    const done = (async () => {
      try {
        const res = await request(st.s.url, {
          method: st.s.method,
          headers,
          body,
          dispatcher: agentFor(lane.localAddress),
        });
        const text = await res.body.text();
        const ms = performance.now() - t0;
        const laneResult = st.r.lanes[laneIndex]!;
        laneResult.answers++;
        if (res.statusCode === 429) {
          if (res.headers['retry-after'] === undefined) st.r.missingRetryAfter++;
        } else laneResult.not429++;
        if (lane.browser) {
          const set = res.headers['set-cookie'];
          for (const c of Array.isArray(set) ? set : set ? [set] : []) {
            const m = new RegExp(`^(?:__Host-)?${DEVICE_COOKIE}=([^;]*)`).exec(c);
            if (m?.[1]) lane.deviceCookie = m[1];
          }
        }
        if (!measured) return;
        let code = '';
        if (res.statusCode >= 400) {
          try {
            const problem = JSON.parse(text) as { code?: unknown; reason?: unknown };
            code = `${String(problem.code ?? '')}${typeof problem.reason === 'string' ? `/${problem.reason}` : ''}`;
          } catch {
            // not a problem document
          }
        }
        const key = code ? `${res.statusCode} ${code}` : String(res.statusCode);
        st.r.statusCodes[key] = (st.r.statusCodes[key] ?? 0) + 1;
        st.r.responses++;
        if (res.statusCode >= 200 && res.statusCode <= 299) st.r.ok++;
        st.latencies.push(ms);
      } catch {
        if (measured) st.r.errors++;
      } finally {
        st.inFlight--;
      }
    })();
    pending.add(done);
    void done.finally(() => pending.delete(done));
  };

  return new Promise((resolve) => {
    const tick = () => {
      const elapsed = (performance.now() - start) / 1000;
      if (elapsed >= job.warmupSeconds && measuringAt === Number.POSITIVE_INFINITY) {
        measuringAt = elapsed;
        process.stdout.write(`${MEASURING}\n`);
      }
      const now = Math.min(elapsed, total);
      for (const st of streams) {
        const due = Math.floor(now * st.s.perSec);
        while (st.sent < due) {
          const measured = st.sent / st.s.perSec >= job.warmupSeconds;
          if (measured) st.r.due++;
          const laneIndex = st.sent % st.s.lanes.length;
          if (st.inFlight >= st.s.maxInFlight) {
            if (measured) st.r.skipped++;
          } else fire(st, laneIndex, measured);
          st.sent++;
        }
      }
      if (elapsed < total) {
        setTimeout(tick, 2);
        return;
      }
      void (async () => {
        while (pending.size > 0) await Promise.allSettled([...pending]);
        const runSeconds = (performance.now() - start) / 1000;
        await Promise.allSettled([...agents.values()].map((a) => a.close()));
        resolve(
          streams.map((st) => {
            st.latencies.sort((x, y) => x - y);
            return {
              ...st.r,
              requestsPerSec: st.r.responses / job.durationSeconds,
              p50Ms: percentile(st.latencies, 50),
              p99Ms: percentile(st.latencies, 99),
              runSeconds,
            };
          }),
        );
      })();
    };
    tick();
  });
}

const job = JSON.parse(process.env.BENCH_ATTACK_JOB ?? 'null') as AttackJob | null;
if (!job) throw new Error('BENCH_ATTACK_JOB is not set: this script is started by scripts/bench/attack.ts');
process.stdout.write(`${JSON.stringify(await runAttack(job))}\n`);

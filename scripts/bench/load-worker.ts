/**
 * The load generator process (started by load.ts, pinned to its own core). Reads a job from
 * BENCH_JOB, runs it against the host, prints the result as one JSON line on stdout.
 *
 * Latency percentiles are computed here from every response time (fractional milliseconds, from
 * autocannon's `response` event) rather than from autocannon's histogram, which rounds to whole
 * milliseconds: too coarse for sub-millisecond endpoints such as the liveness probe.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import autocannon from 'autocannon';
import {
  MEASURING,
  type Job,
  type LoadJob,
  type LoadResult,
  type SweepJob,
  type SweepResult,
  type TimingJob,
  type TimingResult,
  type TimingSample,
} from './protocol.js';
import { percentile } from './stats.js';

/** autocannon's setupClient: the next connection's own headers. */
function perConnection(job: LoadJob): (client: { setHeaders(h: Record<string, string>): void }) => void {
  const each = job.perConnection!;
  let next = 0;
  return (client) => client.setHeaders({ ...job.headers, ...each[next++ % each.length] });
}

/**
 * One autocannon run of the warm-up and the measured part together: the closed loop never stops in
 * between, and only what is answered after the warm-up counts. (Two runs, one after the other, let
 * the first one's last requests, abandoned when it stopped, still run at the server during the
 * measured part: ten queued logins are a quarter of a second of hashing not counted.)
 */
function runLoad(job: LoadJob): Promise<LoadResult> {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let non2xx = 0;
  let errors = 0;
  let measuring = false;
  let started = 0;
  let cpu0: NodeJS.CpuUsage; // set when the measured part starts
  const startMeasuring = () => {
    measuring = true;
    started = performance.now();
    cpu0 = process.cpuUsage();
    process.stdout.write(`${MEASURING}\n`);
  };
  let warmup: ReturnType<typeof setTimeout> | undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        method: job.method,
        headers: job.headers,
        body: job.body,
        ...(job.requests ? { requests: job.requests } : {}),
        ...(job.perConnection ? { setupClient: perConnection(job) } : {}),
        connections: job.connections,
        duration: job.warmupSeconds + job.durationSeconds,
      },
      (err) => {
        clearTimeout(warmup);
        if (err) return reject(err);
        if (!measuring) return reject(new Error('the load ended before its warm-up did'));
        const elapsed = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpu0);
        latencies.sort((x, y) => x - y);
        resolve({
          requestsPerSec: latencies.length / elapsed,
          responses: latencies.length,
          p50Ms: percentile(latencies, 50),
          p99Ms: percentile(latencies, 99),
          non2xx,
          errors,
          statusCodes,
          clientCpuPercent: (cpu.user + cpu.system) / 1e4 / elapsed, // microseconds -> % of one core
        });
      },
    );
    warmup = setTimeout(startMeasuring, job.warmupSeconds * 1000);
    instance.on('response', (_client, status, _bytes, ms) => {
      if (!measuring) return;
      latencies.push(ms);
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
      if (status < 200 || status > 299) non2xx++;
    });
    instance.on('reqError', () => {
      if (measuring) errors++;
    });
  });
}

/** One request on the keep-alive agent; the time runs from sending to the end of the body. */
function timed(agent: http.Agent, job: TimingJob, authorization: string): Promise<TimingSample> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(job.url, { method: job.method, agent, headers: { authorization } }, (res) => {
      res.resume(); // read and discard the body
      res.once('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

async function runTiming(job: TimingJob): Promise<TimingResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const result: TimingResult = { a: [], b: [] };
  try {
    for (let i = 0; i < job.a.length; i++) {
      if (i === job.warmupPairs) process.stdout.write(`${MEASURING}\n`);
      // A B, then B A: whatever one position gains (a warm cache, a GC pause) both sides get.
      const first = i % 2 === 0 ? 'a' : 'b';
      const second = first === 'a' ? 'b' : 'a';
      const s1 = await timed(agent, job, job[first][i]!);
      const s2 = await timed(agent, job, job[second][i]!);
      if (i < job.warmupPairs) continue;
      result[first].push(s1);
      result[second].push(s2);
    }
  } finally {
    agent.destroy();
  }
  return result;
}

/** One GET with the given headers on the keep-alive agent; resolves with the status. */
function get(agent: http.Agent, url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'GET', agent, headers }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

async function runSweep(job: SweepJob): Promise<SweepResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency });
  const result: SweepResult = { responses: 0, non2xx: 0, statusCodes: {}, seconds: 0 };
  const start = performance.now();
  process.stdout.write(`${MEASURING}\n`);
  try {
    for (let round = 0; round < job.rounds; round++) {
      let next = 0;
      const lane = async () => {
        while (next < job.headers.length) {
          const status = await get(agent, job.url, job.headers[next++]!);
          result.responses++;
          result.statusCodes[status] = (result.statusCodes[status] ?? 0) + 1;
          if (status < 200 || status > 299) result.non2xx++;
        }
      };
      await Promise.all(Array.from({ length: job.concurrency }, lane));
    }
  } finally {
    agent.destroy();
  }
  result.seconds = (performance.now() - start) / 1000;
  return result;
}

const file = process.env.BENCH_JOB_FILE;
const job = JSON.parse(file ? readFileSync(file, 'utf8') : (process.env.BENCH_JOB ?? 'null')) as Job | null;
if (!job) throw new Error('BENCH_JOB is not set: this script is started by scripts/bench/run.ts');
const result =
  job.kind === 'load' ? await runLoad(job) : job.kind === 'timing' ? await runTiming(job) : await runSweep(job);
process.stdout.write(`${JSON.stringify(result)}\n`);

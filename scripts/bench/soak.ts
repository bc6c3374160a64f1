/**
 * soak: what a long run of mixed traffic costs on disk (docs/performance.md, "Soak"). One Node host as
 * `npm start` runs it (no log store: the embedded audit log), a fresh database, and BENCH_SOAK_SECONDS
 * (default 180) of closed-loop traffic on BENCH_CONNECTIONS connections, each sending in turn
 * (per 100 requests): 76 Bearer GET /v4/users/me, 20 cookie GET /v4/users/me, 2 Bearer requests
 * refused (404), 1 password login (POST /v3/login_without_session, Basic) and 1 failed login (an
 * unknown login); with BENCH_SOAK_MIX=bearer, Bearer GET /v4/users/me only. Reported: throughput,
 * p50/p99, the host's RSS, the database's growth (its pages after the host stopped, less its pages
 * before the traffic) per hour at that rate and per million requests, and the audit trail's share:
 * the bytes of the `api_access` rows per API request they record, in the database and as the
 * documents the shipper would send to the log store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { outboxEvents } from '../../worker/src/audit/api-access.js';
import type { OutboxRow } from '../../worker/src/audit/events.js';
import { toLogDocument } from '../../worker/src/logs/document.js';
import { runJob } from './load.js';
import { ADMIN_LOGIN, benchServiceEnv, startBenchNodeHost } from './node-host.js';
import { cpuMeter, rssKiB, rssSampler } from './processes.js';
import type { LoadJob } from './protocol.js';
import type { ScenarioResult } from './report.js';
import { basic, createToken, expectStatus, loginCookie, type BenchConfig } from './scenarios.js';
import { round } from './stats.js';

type Register = (stop: () => Promise<void>) => () => Promise<void>;

/**
 * The database's logical size: its pages as a reader sees them (the WAL included, checkpointed or
 * not), so that the size before the traffic (a WAL not yet checkpointed) and after (the host stopped,
 * the WAL checkpointed into the file) compare.
 */
function dbBytes(dbFile: string): number {
  const db = new Database(dbFile, { readonly: true });
  try {
    const pragma = (name: string) => Number(Object.values(db.prepare(`pragma ${name}`).get() as object)[0]);
    return pragma('page_count') * pragma('page_size');
  } finally {
    db.close();
  }
}

/** The host's password throttles off: the soak measures disk use, not the login throttle. */
const SOAK_ENV = {
  AUTH_ADDRESS_FAILED_COUNT: '1000000',
  AUTH_PASSWORD_ADDRESS_IN_FLIGHT: '1000',
  AUTH_PASSWORD_ADDRESS_RATE: '100000',
  AUTH_PASSWORD_ADDRESS_BURST: '100000',
};

/** One cycle of a connection's requests (100); BENCH_SOAK_MIX=bearer: Bearer GET /v4/users/me only. */
function mix(path: string, bearer: string, cookie: string, password: string): NonNullable<LoadJob['requests']> {
  const me = { method: 'GET' as const, path: `${path}/v4/users/me` };
  if (process.env.BENCH_SOAK_MIX === 'bearer') return [{ ...me, headers: { authorization: bearer } }];
  const cycle: NonNullable<LoadJob['requests']> = [];
  for (let i = 0; i < 100; i++) {
    if (i === 49 || i === 99)
      cycle.push({
        method: 'GET',
        path: `${path}/v4/users/00000000-0000-4000-8000-00000000dead`,
        headers: { authorization: bearer },
      });
    else if (i === 24)
      cycle.push({
        method: 'POST',
        path: `${path}/v3/login_without_session`,
        headers: { authorization: basic(ADMIN_LOGIN, password) },
      });
    else if (i === 74)
      cycle.push({
        method: 'POST',
        path: `${path}/v3/login_without_session`,
        headers: { authorization: basic('soak-nobody', 'Wrong#pass1') },
      });
    else if (i % 5 === 2) cycle.push({ ...me, headers: { cookie } });
    else cycle.push({ ...me, headers: { authorization: bearer } });
  }
  return cycle;
}

/** The api_access rows of the database: bytes stored, requests recorded, bytes of their documents. */
function auditShare(dbFile: string) {
  const db = new Database(dbFile, { readonly: true });
  try {
    const row = db
      .prepare(
        `select count(*) as rows, coalesce(sum(events), 0) as events,
                coalesce(sum(length(data) + length(id) + length(type) + length(stream) + coalesce(length(host), 0)
                  + coalesce(length(actor_login), 0) + coalesce(length(actor_id), 0) + coalesce(length(source_ip), 0)
                  + coalesce(length(user_agent), 0) + coalesce(length(request_id), 0)), 0) as bytes
         from audit_outbox where stream = 'api_access'`,
      )
      .get() as { rows: number; events: number; bytes: number };
    let requests = 0;
    let documentBytes = 0;
    const all = db.prepare(`select * from audit_outbox where stream = 'api_access'`).all() as Record<string, unknown>[];
    for (const raw of all) {
      const r = {
        id: raw.id,
        at: raw.at,
        stream: raw.stream,
        type: raw.type,
        actorId: raw.actor_id,
        actorLogin: raw.actor_login,
        subjectId: raw.subject_id,
        subjectLogin: raw.subject_login,
        requestId: raw.request_id,
        data: raw.data ? JSON.parse(String(raw.data)) : null,
        outcome: raw.outcome,
        sourceIp: raw.source_ip,
        userAgent: raw.user_agent,
        host: raw.host,
        events: raw.events,
      } as OutboxRow;
      for (const e of outboxEvents(r)) {
        const count = typeof e.data?.count === 'number' ? e.data.count : 1;
        requests += count;
        documentBytes += JSON.stringify(toLogDocument(e)).length;
      }
    }
    const pragma = (name: string) => Object.values(db.prepare(`pragma ${name}`).get() as object)[0] as number;
    const pages = pragma('page_count');
    const free = pragma('freelist_count');
    const pageSize = pragma('page_size');
    return { ...row, requests, documentBytes, pages, free, pageSize };
  } finally {
    db.close();
  }
}

/** soak: BENCH_SOAK_SECONDS of mixed traffic on a fresh Node host; the database's growth. */
export async function soak(config: BenchConfig, seconds: number, adminPassword: string, register: Register) {
  const dir = mkdtempSync(join(tmpdir(), 'auth-bench-soak-'));
  const dbFile = join(dir, 'auth.db');
  const env = { ...benchServiceEnv(adminPassword), ...SOAK_ENV };
  const host = await startBenchNodeHost(env, { dbFile });
  const stop = register(host.stop);
  try {
    const pid = host.child.pid!;
    const bearer = `Bearer ${await createToken(host.base, ADMIN_LOGIN, adminPassword)}`;
    const cookie = await loginCookie(host.base, ADMIN_LOGIN, adminPassword);
    await expectStatus(`${host.base}/v4/users/me`, { headers: { authorization: bearer } }, 200, 'GET /v4/users/me');
    const path = new URL(host.base).pathname;
    const before = dbBytes(dbFile);
    const meter = cpuMeter(pid);
    let rss: { stop(): number | undefined } | undefined;
    const res = await runJob(
      {
        kind: 'load',
        url: host.base,
        method: 'GET',
        headers: {},
        requests: mix(path, bearer, cookie, adminPassword),
        connections: config.connections,
        warmupSeconds: 0.001,
        durationSeconds: seconds,
      },
      () => {
        meter.start();
        rss = rssSampler(pid);
      },
    );
    const cpu = meter.stop();
    const rssPeak = rss?.stop();
    const rssEnd = rssKiB(pid);
    // Stopping the host flushes what waits in memory and checkpoints the WAL into the file.
    await stop();
    const after = dbBytes(dbFile);
    const audit = auditShare(dbFile);
    const growth = after - before;
    const elapsed = res.responses / res.requestsPerSec;
    const perHourMiB = round(((growth / elapsed) * 3600) / 1024 / 1024);
    const perMillionMiB = round(((growth / res.responses) * 1e6) / 1024 / 1024);
    const perRequest = audit.requests > 0 ? round(audit.bytes / audit.requests) : undefined;
    const docPerRequest = audit.requests > 0 ? round(audit.documentBytes / audit.requests) : undefined;
    const expected = new Set(['200', '401', '404']);
    const odd = Object.keys(res.statusCodes).filter((s) => !expected.has(s));
    return {
      scenario: 'soak',
      status: odd.length > 0 || res.errors > 0 ? 'flagged' : 'ok',
      message:
        (odd.length > 0 || res.errors > 0
          ? `UNEXPECTED: statuses ${JSON.stringify(res.statusCodes)}, ${res.errors} errors; `
          : '') +
        `${res.responses} requests in ${round(elapsed)} s; database +${round(growth / 1024 / 1024)} MiB ` +
        `(${perHourMiB} MiB/hour at this rate, ${perMillionMiB} MiB per million requests); api_access: ` +
        `${audit.rows} rows, ${audit.events} events for ${audit.requests} requests, ${perRequest} bytes per request ` +
        `stored, ${docPerRequest} bytes per request as log-store documents`,
      requestsPerSec: round(res.requestsPerSec),
      p50Ms: round(res.p50Ms),
      p99Ms: round(res.p99Ms),
      non2xx: res.non2xx,
      hostCpuPercent: Math.round(cpu.processCpuPercent),
      machineCpuPercent: Math.round(cpu.machineCpuPercent),
      rssMaxKiB: rssPeak,
      details: {
        seconds: round(elapsed),
        responses: res.responses,
        statusCodes: res.statusCodes,
        rssEndMiB: rssEnd === undefined ? undefined : round(rssEnd / 1024),
        dbBeforeBytes: before,
        dbAfterBytes: after,
        dbGrowthMiBPerHour: perHourMiB,
        dbGrowthMiBPerMillionRequests: perMillionMiB,
        freePages: audit.free,
        pageSize: audit.pageSize,
        apiAccessRows: audit.rows,
        apiAccessEvents: audit.events,
        apiAccessRequests: audit.requests,
        apiAccessBytes: audit.bytes,
        apiAccessBytesPerRequest: perRequest,
        apiAccessDocumentBytesPerRequest: docPerRequest,
      },
    } satisfies ScenarioResult;
  } finally {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

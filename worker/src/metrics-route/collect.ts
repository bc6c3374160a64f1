/**
 * The metrics read at scrape time (architecture.md §7): from the database, so they are the same
 * whichever process or isolate answers the scrape (active sessions, the audit outbox per stream and its
 * size against its bound, the database's pages, job runs and failures), and the health of the
 * database and the bridge as this instance sees them.
 */
import { and, gt, isNull, sql } from 'drizzle-orm';
import { jobLeases, sessions } from '../../../schema/index.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Logger } from '../http/logger.js';
import type { Scope } from '../http/scope.js';
import { streamPipelines } from '../logs/pipeline.js';
import { auditStoreState, type AuditStoreState } from '../logs/size-bound.js';
import { sessionPolicy } from '../accounts/sessions.js';
import type { Db } from '../store/index.js';
import { Registry } from '../metrics/registry.js';
import { queueFigures } from '../webhooks/store.js';

/** Live sessions by kind: not revoked, before their absolute end, used within the idle time. */
async function activeSessions(db: Db, config: ConfigSnapshot, now: number) {
  const p = sessionPolicy(config);
  return db
    .select({ kind: sessions.kind, n: sql<number>`count(*)` })
    .from(sessions)
    .where(and(isNull(sessions.revokedAt), gt(sessions.expiresAt, now), gt(sessions.lastSeenAt, now - p.idleMs)))
    .groupBy(sessions.kind);
}

async function databaseUp(db: Db, logger: Logger): Promise<boolean> {
  try {
    await db.run(sql`select 1`);
    return true;
  } catch (err) {
    logger.error('metrics: database check failed', { err });
    return false;
  }
}

/** Reads the global metrics into a fresh registry (the database ones only while it answers). */
export async function collectScrapeMetrics(o: Scope): Promise<Registry> {
  const now = o.now();
  const r = new Registry();
  const [dbUp, bridgeState] = await Promise.all([
    databaseUp(o.db, o.logger),
    o.bridge ? o.bridge.status() : Promise.resolve('not-configured' as const),
  ]);
  r.gauge('auth_database_up', 'whether the database answered this scrape (1) or not (0)').set([], dbUp ? 1 : 0);
  r.gauge('auth_bridge_configured', 'whether a bridge is configured (AUTH_BRIDGE_URL)').set([], o.bridge ? 1 : 0);
  const bridgeUp = r.gauge(
    'auth_bridge_up',
    "whether the bridge's /health answered ok to this instance (absent without a bridge)",
  );
  if (bridgeState !== 'not-configured') bridgeUp.set([], bridgeState === 'ok' ? 1 : 0);
  if (!dbUp) return r;

  const sessionsActive = r.gauge('auth_sessions_active', 'live sessions (database), by kind: cookie or oauth', [
    'kind',
  ]);
  const depth = r.gauge('auth_outbox_depth', 'audit events waiting for the log store (database), by stream', [
    'stream',
  ]);
  const age = r.gauge(
    'auth_outbox_oldest_age_seconds',
    'age of the oldest audit event waiting for the log store (database), by stream; 0 when none waits',
    ['stream'],
  );
  const dead = r.gauge(
    'auth_outbox_dead_letters',
    'audit events the log store refused for good (database), by stream',
    ['stream'],
  );
  const runs = r.counter('auth_job_runs_total', 'completed runs of each periodic job, on any instance (database)', [
    'job',
  ]);
  const failures = r.counter(
    'auth_job_failures_total',
    'runs of each periodic job that failed, on any instance (database)',
    ['job'],
  );
  const lastRun = r.gauge('auth_job_last_run_timestamp_seconds', 'end of the last leased run of each job (database)', [
    'job',
  ]);
  const lastDuration = r.gauge(
    'auth_job_last_duration_seconds',
    'duration of the last leased run of each job (database)',
    ['job'],
  );
  const storeBytes = r.gauge(
    'auth_audit_store_bytes',
    'estimated bytes of the audit events under the size bound (database, as its job last measured them), by ' +
      'store: local (no log store) or delivered',
    ['store'],
  );
  const storeMax = r.gauge(
    'auth_audit_store_max_bytes',
    'the size bound: AUDIT_LOCAL_MAX_MB or OUTBOX_DELIVERED_MAX_MB',
    ['store'],
  );
  const storeNear = r.gauge(
    'auth_audit_store_near_limit',
    'whether the audit events under the bound reached 80 % of it (1) or not (0): the oldest go at 100 %',
    ['store'],
  );
  const outboxBytes = r.gauge('auth_outbox_bytes', 'estimated bytes of the whole audit outbox (database)');
  const hookDepth = r.gauge('auth_webhook_queue_depth', 'webhook deliveries not yet delivered nor given up (database)');
  const hookAge = r.gauge(
    'auth_webhook_oldest_age_seconds',
    'age of the event of the oldest webhook delivery not yet delivered nor given up (database); 0 when none waits',
  );
  try {
    const [bySession, streams, jobs, store, hooks] = await Promise.all([
      activeSessions(o.db, o.config, now),
      streamPipelines(o.db, now),
      o.db.select().from(jobLeases),
      auditStoreState(o.db, o.config),
      queueFigures(o.db),
    ]);
    setStore(store, storeBytes, storeMax, storeNear, outboxBytes);
    const queues = [...hooks.values()];
    const oldest = Math.min(...queues.map((q) => q.oldestAt ?? now));
    hookDepth.set(
      [],
      queues.reduce((n, q) => n + q.depth, 0),
    );
    hookAge.set([], queues.length ? Math.max(0, Math.round((now - oldest) / 1000)) : 0);
    for (const kind of ['cookie', 'oauth'] as const) {
      sessionsActive.set([kind], Number(bySession.find((s) => s.kind === kind)?.n ?? 0));
    }
    for (const s of streams) {
      depth.set([s.stream], s.depth);
      age.set([s.stream], s.oldestUndeliveredAgeSeconds ?? 0);
      dead.set([s.stream], s.deadLetters);
    }
    for (const j of jobs) {
      runs.setTotal([j.name], j.runCount);
      failures.setTotal([j.name], j.failureCount);
      if (j.lastRunAt !== null && j.lastDurationMs !== null) {
        lastRun.set([j.name], (j.lastRunAt + j.lastDurationMs) / 1000);
        lastDuration.set([j.name], j.lastDurationMs / 1000);
      }
    }
  } catch (err) {
    // A failed read leaves those families empty; the process's own counters are still served.
    o.logger.error('metrics: database metrics unreadable', { err });
  }
  await databasePages(o.db, r);
  return r;
}

type Gauge = ReturnType<Registry['gauge']>;

function setStore(s: AuditStoreState | null, bytes: Gauge, max: Gauge, near: Gauge, outbox: Gauge): void {
  if (!s) return;
  bytes.set([s.store], s.bytes);
  max.set([s.store], s.maxBytes);
  near.set([s.store], s.warning ? 1 : 0);
  outbox.set([], s.outboxBytes);
}

/**
 * The database file's size and its free pages (pages freed by deletes, reused before the file grows;
 * docs/audit-logs-embedded.md, "Size bound"). A remote libSQL may refuse the pragmas: then absent.
 */
async function databasePages(db: Db, r: Registry): Promise<void> {
  try {
    const one = async (name: string) => {
      const [row] = await db.all<Record<string, number>>(sql.raw(`PRAGMA ${name}`));
      return Number(Object.values(row ?? {})[0]);
    };
    const [pages, free, size] = [await one('page_count'), await one('freelist_count'), await one('page_size')];
    if (![pages, free, size].every(Number.isFinite)) return;
    r.gauge('auth_database_bytes', "the database's size: its pages (the file, less a WAL not yet checkpointed)").set(
      [],
      pages * size,
    );
    r.gauge('auth_database_free_bytes', "the database's free pages: freed by deletes, reused before it grows").set(
      [],
      free * size,
    );
  } catch {
    // not readable here (a remote libSQL): the families stay absent
  }
}

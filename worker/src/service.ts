/**
 * The one assembly of the service (architecture.md §1.1): configuration service, logger, bridge
 * client, password verifier, API-access recorder and the app, from what a host hands over. Each host
 * (worker/src/index.ts, worker/node/host.ts, test/harness/app.ts) adapts only what differs: the
 * environment, the database client, scheduling, background work, the bridge transport and the
 * client's address.
 */
import { createApp } from './app.js';
import { createApiAccessRecorder, type ApiAccessRecorder } from './audit/api-access.js';
import type { PasswordHasher } from './passwords/hash/index.js';
import { createPasswordVerifier } from './passwords/verifier.js';
import { createBridgeClient, type BridgeClient, type BridgeFetch } from './bridge/client.js';
import { ConfigService, type ConfigSnapshot } from './config/index.js';
import type { App, AppDeps, MailOutbox, StaticFiles } from './http/context.js';
import type { WebhookFetch } from './webhooks/transport.js';
import { createLogger, toLevel, type Logger } from './http/logger.js';
import { scopeWithoutRequest } from './http/scope.js';
import { runJob } from './jobs/index.js';
import { runScheduledJobs } from './schedule/index.js';
import { loadSavedSettings, type Db } from './store/index.js';
import { bootstrapAdmin, type BootstrapResult } from './users/bootstrap.js';
import { skeletonJob, skeletonsComplete } from './users/login-skeletons.js';

/** What a host provides. */
export interface HostParts {
  /** The parsed environment (Node: process environment and .env; edge: vars and secrets). */
  env: ConfigSnapshot;
  /** The database handle of a request (edge: a client per request). */
  openDb: () => Db;
  /**
   * The handle of writes that need not wait for the disk (API-access events, login-attempt
   * reservations; Node: a connection committing without fsync); default openDb.
   */
  openLazyDb?: () => Db;
  hasher: PasswordHasher;
  /** The host's default of PASSWORD_HASH_CONCURRENCY (AppDeps.hashConcurrency). */
  hashConcurrency?: number;
  /** AppDeps.crossRequestWaits (Node host). */
  crossRequestWaits?: boolean;
  /** AppDeps.hmacSha256 (Node host). */
  hmacSha256?: AppDeps['hmacSha256'];
  staticFiles: StaticFiles;
  /** The instance's name in audit events (Node: os.hostname(); edge: "edge"). */
  hostName: string;
  /** How the bridge is reached (absent while none is configured). */
  bridgeTransport?: BridgeFetch;
  /** The development outbox (Node host): where mail goes while no mail server is configured. */
  mailOutbox?: MailOutbox;
  /** How webhooks leave (Node host: to checked addresses only); absent: `fetch`. */
  webhookFetch?: WebhookFetch;
  /** A ready bridge client instead of a transport (tests). */
  bridge?: BridgeClient;
  clock?: () => number;
  /** Where JSON log lines go (default console.log). */
  writeLog?: (line: string) => void;
  clientAddress?: AppDeps['clientAddress'];
  clientAddressHeader?: AppDeps['clientAddressHeader'];
  peerAddress?: AppDeps['peerAddress'];
  nodeMessages?: AppDeps['nodeMessages'];
  /** How long saved settings are served without a refresh and at most (default 2 s and 5 s; tests: 0). */
  settingsTtlMs?: number;
}

/** The assembled service: the app and what the host runs around it. */
export interface Service {
  app: App;
  config: ConfigService;
  logger: Logger;
  bridge?: BridgeClient;
  /** API-access events waiting in memory: the host flushes them (Node: a timer and at shutdown). */
  apiAccess: ApiAccessRecorder;
  /** Creates the first administrator from the bootstrap variables while none exists. */
  bootstrap(): Promise<BootstrapResult>;
  /** Runs the periodic jobs once (each under its lease); returns the names of those that failed. */
  runJobs(now?: number): Promise<string[]>;
  /**
   * Runs the backfill of the login skeletons (users/login-skeletons.ts) under its lease, run after run, until it
   * is done (waiting while another run holds the lease), a run fails, or `stopped` says so (between batches).
   */
  fillLoginSkeletons(stopped: () => boolean): Promise<void>;
}

/** Assembles the service from a host's parts. */
export function assembleService(parts: HostParts): Service {
  const { env, openDb } = parts;
  const clock = parts.clock ?? Date.now;
  const logger = createLogger({ threshold: () => toLevel(env.get('LOG_LEVEL')), write: parts.writeLog, now: clock });
  const config = new ConfigService({
    env,
    load: () => loadSavedSettings(openDb()),
    ...(parts.settingsTtlMs !== undefined ? { ttlMs: parts.settingsTtlMs, staleMs: parts.settingsTtlMs } : {}),
    onIssue: (issue) => logger.warning('ignoring a bad saved setting', { setting: issue.name, problem: issue.message }),
  });
  const bridge =
    parts.bridge ??
    (parts.bridgeTransport ? createBridgeClient(parts.bridgeTransport, env.get('BRIDGE_URL')) : undefined);
  const apiAccess = createApiAccessRecorder({
    db: parts.openLazyDb ?? openDb,
    host: parts.hostName,
    clock,
    onError: (err, lost) => logger.error('api-access events not written', { lost, err }),
  });
  const app = createApp({
    db: openDb,
    config,
    clock,
    hostName: parts.hostName,
    verifier: createPasswordVerifier(parts.hasher),
    staticFiles: parts.staticFiles,
    apiAccess,
    ...(parts.openLazyDb ? { lazyDb: parts.openLazyDb } : {}),
    ...(parts.hashConcurrency ? { hashConcurrency: parts.hashConcurrency } : {}),
    ...(parts.crossRequestWaits ? { crossRequestWaits: true } : {}),
    ...(parts.hmacSha256 ? { hmacSha256: parts.hmacSha256 } : {}),
    ...(parts.writeLog ? { writeLog: parts.writeLog } : {}),
    ...(parts.clientAddress ? { clientAddress: parts.clientAddress } : {}),
    ...(parts.clientAddressHeader ? { clientAddressHeader: parts.clientAddressHeader } : {}),
    ...(parts.peerAddress ? { peerAddress: parts.peerAddress } : {}),
    ...(parts.nodeMessages ? { nodeMessages: parts.nodeMessages } : {}),
    ...(bridge ? { bridge } : {}),
    ...(parts.mailOutbox ? { mailOutbox: parts.mailOutbox } : {}),
    ...(parts.webhookFetch ? { webhookFetch: parts.webhookFetch } : {}),
  });
  return {
    app,
    config,
    logger,
    ...(bridge ? { bridge } : {}),
    apiAccess,
    bootstrap: () => bootstrapAdmin(openDb(), env, parts.hasher, clock()),
    async runJobs(now = clock()) {
      const db = openDb();
      const current = await config.current(() => loadSavedSettings(db));
      // One instant for the whole run (the edge: the Cron Trigger's scheduled time).
      const { mailOutbox, webhookFetch } = parts;
      return runScheduledJobs(
        scopeWithoutRequest({ db, config: current, now: () => now, logger, bridge, mailOutbox, webhookFetch }),
      );
    },
    async fillLoginSkeletons(stopped) {
      const job = skeletonJob({ stopped });
      const db = openDb();
      const current = await config.current(() => loadSavedSettings(db));
      while (!stopped()) {
        const scope = scopeWithoutRequest({ db, config: current, now: clock, logger, bridge });
        const outcome = await runJob(scope, job, { ignorePace: true });
        if (outcome === 'failed' || (outcome === 'ran' && skeletonsComplete())) return;
        // Another run holds the lease (the scheduler's, another instance's): look again once it may be done.
        if (outcome === 'skipped') await new Promise((r) => setTimeout(r, 1_000));
      }
    },
  };
}

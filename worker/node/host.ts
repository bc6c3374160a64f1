/** The Node host: embedded libSQL (or a remote one), migrations, the app on @hono/node-server. */
import { createHmac, createSecretKey } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, hostname, networkInterfaces } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from '@libsql/client';
import { sql } from 'drizzle-orm';
import { serve, type ServerType } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { NodeMessages } from '../src/http/context.js';
import type { Logger } from '../src/http/logger.js';
import { createNodeNativeHasher, nativeHashConcurrency } from './native-hasher.js';
import { loadOperatorBlocklist } from './blocklist.js';
import { describeBlocklist } from '../src/passwords/blocklist/index.js';
import { bootstrapNotice, FIRST_RUN_PATH, type BootstrapResult } from '../src/users/bootstrap.js';
import { issueFirstRunCode } from '../src/first-run/code.js';
import { parseEnvironment, type ConfigSnapshot, type EnvSource } from '../src/config/index.js';
import { assembleService } from '../src/service.js';
import type { HmacSha256 } from '../src/accounts/session-keys.js';
import {
  createDb,
  databaseFetch,
  loadSavedSettings,
  readMeta,
  SCHEMA_STAMP_KEY,
  SchemaMismatchError,
  type Db,
} from '../src/store/index.js';
import { migrateDatabase } from './migrate.js';
import { nodeBridgeTransport } from './bridge-transport.js';
import { nodeStaticFiles } from './static-files.js';
import { createEmbeddedClient } from './sqlite-client.js';
import { createBatchedLogWriter } from './log-writer.js';
import { describeListenError } from './console.js';
import {
  auditLogState,
  humanLogLine,
  mailLinksState,
  mailState,
  sealingKeyState,
  startBanner,
  type KeptKeyFacts,
} from './start-banner.js';
import { createFileOutbox, mailOutboxFolder } from './mail-outbox.js';
import { createWebhookTransport } from './webhook-transport.js';

export interface NodeHostOptions {
  env: EnvSource;
  /** Migrate the database before serving (default: for embedded file: databases). */
  migrate?: boolean;
  clock?: () => number;
  writeLog?: (line: string) => void;
  /** Say what became of the first administrator (default true; WORKERS > 1: the first worker only). */
  announce?: boolean;
  /** The sealing key kept in the data folder, to name at start (main.ts, sealing-key.ts). */
  sealingKey?: KeptKeyFacts;
}

export interface NodeHost {
  /** The base URL of the API (host, port and ROOT_PATH). */
  url: string;
  port: number;
  db: Db;
  /** Stops accepting connections, lets in-flight requests finish, closes the database. */
  close(): Promise<void>;
}

/** An opened database: the handle of everything, and that of writes that need not wait for the disk. */
export interface OpenedDatabase {
  db: Db;
  /**
   * The handle of writes that need not wait for the disk: API-access events and the reservation of a
   * login attempt (architecture.md §6). Embedded file: a second connection, opened at its first use
   * (after prepareEmbedded), that commits without fsync (sqlite-client.ts `lazyDurability`), so these
   * commits no longer hold the event loop on the disk (architecture.md §6). Otherwise `db`.
   */
  lazyDb(): Db;
  close(): void;
  embedded: boolean;
}

export interface OpenDatabaseOptions {
  /** A failed flush of the lazy connection's commits to the disk (sqlite-client.ts `onFlushError`). */
  onLazyFlushError?: (err: unknown) => void;
}

/** Opens the libSQL database named by LIBSQL_URL (creating the folder of a file: database). */
export function openDatabase(config: ConfigSnapshot, o: OpenDatabaseOptions = {}): OpenedDatabase {
  const url = config.get('LIBSQL_URL');
  const embedded = url.startsWith('file:');
  if (embedded) {
    const path = url.slice('file:'.length).split('?')[0]!;
    if (path !== '' && path !== ':memory:')
      mkdirSync(dirname(path.startsWith('//') ? fileURLToPath(url) : path), { recursive: true });
  }
  const authToken = config.get('LIBSQL_AUTH_TOKEN') || undefined;
  // Embedded: statements prepared once and reused (sqlite-client.ts); remote: libSQL over HTTP.
  const client = embedded
    ? createEmbeddedClient(embeddedPath(url), { busyTimeoutMs: BUSY_TIMEOUT_MS })
    : createClient({ url, authToken, fetch: databaseFetch });
  const db = createDb(client);
  // ':memory:' is one database per connection: everything goes through the main one there.
  const separate = embedded && !['', ':memory:'].includes(embeddedPath(url));
  let append: { client: Client; db: Db } | undefined;
  const lazyDb = () => {
    if (!separate) return db;
    if (!append) {
      const c = createEmbeddedClient(embeddedPath(url), {
        busyTimeoutMs: BUSY_TIMEOUT_MS,
        lazyDurability: true,
        onFlushError: o.onLazyFlushError,
      });
      append = { client: c, db: createDb(c) };
    }
    return append.db;
  };
  const close = () => {
    append?.client.close();
    client.close();
  };
  return { db, lazyDb, close, embedded };
}

/** The file of a file: URL (file:relative/path, file:/abs, file:///abs; query parameters dropped). */
function embeddedPath(url: string): string {
  const bare = url.split('?')[0]!;
  const path = bare.slice('file:'.length);
  return path.startsWith('//') ? fileURLToPath(bare) : decodeURIComponent(path);
}

/**
 * ms a call waits for another connection's lock (WORKERS, a second host on the same file) before
 * it fails with SQLITE_BUSY, which the app answers 503 with Retry-After. The client waits between
 * tries without blocking the event loop (sqlite-client.ts), so the process keeps answering meanwhile.
 */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Embedded databases shared by several processes (WORKERS, a second host on the same file): WAL lets
 * readers and a writer proceed together (and a new file is made with incremental auto-vacuum); the
 * client's busy wait (BUSY_TIMEOUT_MS) makes a writer wait for another's transaction instead of failing
 * at once.
 */
export async function prepareEmbedded(db: Db): Promise<void> {
  // A new file gives the pages freed by the audit trail's trims back to the file system
  // (docs/audit-logs-embedded.md, "Size bound"); an existing one keeps its mode until a VACUUM.
  const [pages] = await db.all<{ page_count: number }>(sql`PRAGMA page_count`);
  if (Number(pages?.page_count ?? 1) === 0) await db.run(sql`PRAGMA auto_vacuum = INCREMENTAL`);
  await db.run(sql`PRAGMA journal_mode = WAL`);
}

/** The address to listen on: BIND_HOST, else all interfaces (container IP) or loopback only. */
export function bindAddress(config: ConfigSnapshot): string | undefined {
  const host = config.get('BIND_HOST');
  if (host !== '') return host;
  // USE_CONTAINER_IP_FOR_BIND: listen on every interface, which includes the container's IP and
  // loopback, so the out-of-the-box start answers on http://127.0.0.1:8001 as well.
  return config.get('USE_CONTAINER_IP_FOR_BIND') ? undefined : '127.0.0.1';
}

/**
 * Slow and partial requests (slowloris): a client must send its headers within 10 s and its whole
 * request within 30 s, or Node closes the connection (408), checked every second. Node's defaults
 * (60 s, 300 s, checked every 30 s) let a few thousand dripping connections hold sockets and file
 * descriptors for minutes. Bodies are at most AUTH_MAX_BODY_SIZE (64 KiB), which 30 s leaves ample time for.
 */
export const SLOW_CLIENT_LIMITS = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  connectionsCheckingInterval: 1_000,
} as const;

/** URLs to print for a listening address. */
function servedUrls(address: string | undefined, port: number, root: string): string[] {
  if (address !== undefined && address !== '0.0.0.0' && address !== '::') {
    const h = address.includes(':') ? `[${address}]` : address;
    return [`http://${h}:${port}${root}`];
  }
  const ips = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && i.family === 'IPv4' && !i.internal)
    .map((i) => `http://${i!.address}:${port}${root}`);
  return [`http://127.0.0.1:${port}${root}`, ...ips];
}

/**
 * The environment with AUTH_PUBLIC_URL, when unset, made the host's own address (the first the start
 * names; a wildcard bind is reached on 127.0.0.1): the links in mails then open its console on this
 * machine (docs/mail.md, "Links"). Left unset on AUTH_BIND_PORT 0 (the port is not known yet).
 */
function withOwnPublicUrl(raw: EnvSource): EnvSource {
  const parsed = parseEnvironment(raw);
  const port = parsed.get('BIND_PORT');
  if (parsed.get('PUBLIC_URL') !== '' || port === 0) return raw;
  const origin = new URL(servedUrls(bindAddress(parsed), port, '')[0]!).origin;
  return { ...raw, AUTH_PUBLIC_URL: origin };
}

/** The Node host's synchronous HMAC-SHA256 (AppDeps.hmacSha256): node:crypto, the key imported once. */
export const nodeHmacSha256: HmacSha256 = (key) => {
  const secret = createSecretKey(key);
  return (data) => createHmac('sha256', secret).update(data).digest();
};

/** Starts the Node host. Throws ConfigError on a bad environment. */
export async function startNodeHost(o: NodeHostOptions): Promise<NodeHost> {
  const env = parseEnvironment(withOwnPublicUrl(o.env));
  const blocklist = loadOperatorBlocklist(env);
  const clock = o.clock ?? Date.now;
  // The service's logger, once it exists (the lazy connection opens after it).
  let flushLog: Logger | undefined;
  const database = openDatabase(env, {
    onLazyFlushError: (err) => flushLog?.error('lazy commits could not be flushed to the disk', { err }),
  });
  const { db } = database;
  const transport = nodeBridgeTransport(env);
  // Where mail goes while no mail server is configured (docs/mail.md, "Development outbox").
  const mailOutbox = createFileOutbox(mailOutboxFolder(env));
  // On a terminal, log lines a person reads, after a start banner; JSON lines otherwise (start-banner.ts).
  const tty = o.writeLog === undefined && process.stdout.isTTY === true;
  const writer = o.writeLog ? undefined : createBatchedLogWriter();
  const service = assembleService({
    env,
    openDb: () => db,
    openLazyDb: database.lazyDb,
    hasher: createNodeNativeHasher(),
    // WORKERS processes share the cores.
    hashConcurrency: nativeHashConcurrency(Math.max(1, Math.floor(availableParallelism() / env.get('WORKERS')))),
    crossRequestWaits: true,
    // Tokens signed at once, not as thread-pool jobs beside the password hashes (session-keys.ts).
    hmacSha256: nodeHmacSha256,
    hostName: hostname(),
    staticFiles: nodeStaticFiles(env.get('STATIC_DIR')),
    clock,
    // Default: JSON lines on stdout, batched per turn of the event loop (log-writer.ts).
    writeLog: o.writeLog ?? (tty ? (line) => writer!.write(humanLogLine(line)) : writer!.write),
    ...(transport ? { bridgeTransport: transport } : {}),
    mailOutbox,
    // Webhooks connect only to the addresses their rules checked (webhook-transport.ts).
    webhookFetch: createWebhookTransport(),
    // @hono/node-server hands the Node request over as env.incoming: its socket's peer is the client.
    clientAddress: (_request, bindings) => {
      const incoming = (bindings as { incoming?: IncomingMessage } | undefined)?.incoming;
      return incoming?.socket.remoteAddress;
    },
    // The socket's peer: forwarded headers are believed only from AUTH_TRUSTED_PROXIES.
    peerAddress: (c) => getConnInfo(c).remote.address,
    // ...and the Node response as env.outgoing: the hot path's headers are read and set on them.
    nodeMessages: (c) => ((c.env as Partial<NodeMessages> | undefined)?.incoming ? (c.env as NodeMessages) : undefined),
  });
  const { app, logger } = service;
  flushLog = logger;
  let bootstrap: BootstrapResult;
  try {
    if (database.embedded) await prepareEmbedded(db);
    if (o.migrate ?? database.embedded) {
      await migrateDatabase(db, env.get('DB_SCHEMA'), logger);
    } else {
      const stamp = await readMeta(db, SCHEMA_STAMP_KEY).catch(() => undefined);
      if (stamp === undefined) throw new Error(`the database at LIBSQL_URL is not migrated: run "npm run db:migrate"`);
      if (stamp !== env.get('DB_SCHEMA')) throw new SchemaMismatchError(env.get('DB_SCHEMA'), stamp);
    }
    bootstrap = await service.bootstrap();
  } catch (err) {
    database.close();
    throw err;
  }

  const address = bindAddress(env);
  const root = env.get('ROOT_PATH');
  const server = await new Promise<ServerType>((resolveListening, reject) => {
    const options = {
      fetch: app.fetch,
      port: env.get('BIND_PORT'),
      hostname: address,
      serverOptions: SLOW_CLIENT_LIMITS,
    };
    const s = serve(options, () => resolveListening(s));
    s.once('error', (err) => reject(describeListenError(err, env.get('BIND_PORT'), 'AUTH_BIND_PORT', 'the service')));
  });
  const port = (server.address() as AddressInfo).port;
  const urls = servedUrls(address, port, root);
  // The bridge is named at start (without credentials), so an operator sees which one this instance uses.
  const bridge = service.bridge?.url ?? null;
  const effective = await service.config.current(() => loadSavedSettings(db)).catch(() => env);
  if (!tty) {
    logger.info(`serving ${urls[0]} (docs: ${urls[0]}${env.get('DOCS_PREFIX')}; bridge: ${bridge ?? 'none'})`, {
      urls,
      bridge,
    });
    // Said once: where the audit events go (without a log store, a configuration state, not a failure).
    logger.info(`audit log: ${auditLogState(effective)}`);
    // ...and where mail goes (the development outbox's folder while no mail server is configured).
    logger.info(`mail: ${mailState(effective, bridge, mailOutbox.folder)}; links: ${mailLinksState(effective)}`);
    if (o.sealingKey && (o.announce ?? true)) logger.info(`secrets key: ${sealingKeyState(o.sealingKey)}`);
  }
  const blocklistNote = describeBlocklist(blocklist, env.get('PASSWORD_BLOCKLIST_FILE'));
  if (blocklistNote) logger.info(blocklistNote);
  // Said once, after the URL is known; the first-run page answers loopback clients only.
  const onLoopback = /^http:\/\/(127\.|\[::1\]|localhost)/.test(urls[0]!);
  // A new one-time code at each start while no administrator exists (first-run/code.ts); in a
  // cluster, the announcing process issues it for all.
  const firstRun =
    bootstrap === 'not-configured' && onLoopback && (o.announce ?? true)
      ? { url: `${urls[0]}${FIRST_RUN_PATH}`, code: await issueFirstRunCode(db) }
      : undefined;
  if (tty && (o.announce ?? true)) {
    const adminExists = bootstrap !== 'not-configured';
    writer!.flush();
    const outbox = mailOutbox.folder;
    const sealingKey = o.sealingKey;
    const facts = { url: urls[0]!, config: effective, firstRun, adminExists, bridge, outbox };
    process.stdout.write(startBanner({ ...facts, ...(sealingKey ? { sealingKey } : {}) }));
  }
  const notice = bootstrapNotice(bootstrap, env, firstRun);
  // On a terminal the banner says how to get the first administrator.
  if (notice && (o.announce ?? true) && !(tty && bootstrap === 'not-configured')) logger.log(notice.level, notice.msg);
  // The start's messages out now, not with the next batch of request lines (log-writer.ts): an operator's tail,
  // or a supervisor waiting for them, sees the whole start at once.
  writer?.flush();

  // The in-app scheduler (edge: Cron Triggers): the periodic jobs at start and every 30 seconds; each
  // job keeps its own pace through its lease (shipping the audit outbox every 30 s, the others every
  // few minutes), whichever instance fires.
  const runJobs = () => service.runJobs().catch((err) => logger.error('jobs failed', { err }));
  const scheduler = env.get('IN_APP_SCHEDULER_ENABLED') ? setInterval(() => void runJobs(), 30_000) : undefined;
  if (scheduler) {
    scheduler.unref();
    void runJobs();
  }
  // Per-request API-access events wait in memory for at most a second, aggregates until their window ends
  // (audit/api-access.ts); everything is written at close.
  const flusher = setInterval(() => void service.apiAccess.flushDue(), 1_000);
  flusher.unref();
  // The login skeletons left to fill after an upgrade, in batches while the host answers (docs/architecture.md
  // §6, "Backfills after an upgrade"); stopped between two batches at close.
  let closed = false;
  const backfill = service
    .fillLoginSkeletons(() => closed)
    .catch((err: unknown) => logger.error('login skeletons: backfill failed', { err }));

  let closing: Promise<void> | undefined;
  return {
    url: urls[0]!,
    port,
    db,
    close() {
      closing ??= new Promise<void>((done) => {
        closed = true;
        clearInterval(scheduler);
        clearInterval(flusher);
        // close() stops accepting and resolves once in-flight requests have completed.
        server.close(() => {
          void Promise.all([service.apiAccess.flush(), backfill]).finally(() => {
            database.close();
            logger.info('stopped');
            done();
          });
        });
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      });
      return closing;
    },
  };
}

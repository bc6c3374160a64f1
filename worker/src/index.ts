/**
 * The edge host (Cloudflare Workers / workerd): libSQL over HTTP (sqld or Turso), static files from
 * the Workers assets binding, the same app as the Node host. The app is built once per isolate,
 * lazily from the bindings of the first request (never at import time).
 */
import argon2Wasm from '@phi-ag/argon2/argon2.wasm';
import { createClient } from '@libsql/client/web';
import { edgeBridgeTransport } from './bridge/edge-transport.js';
import { createEdgeHasher } from './passwords/hash/index.js';
import {
  assetPathOf,
  BUNDLED_ASSET,
  bundledBlocklistMissing,
  describeBlocklist,
  useBundledBlocklist,
  useOperatorBlocklist,
} from './passwords/blocklist/index.js';
import { bootstrapNotice } from './users/bootstrap.js';
import { CONFUSABLES_ASSET, confusablesMissing, useConfusables } from './users/confusables.js';
import { parseEnvironment } from './config/index.js';
import type { StaticFiles } from './http/context.js';
import { ProblemError, problemResponse } from './http/problem.js';
import { assembleService, type Service } from './service.js';
import {
  createDb,
  databaseFetch,
  metaQuery,
  readMeta,
  savedSettingsQuery,
  savedValues,
  SCHEMA_STAMP_KEY,
  SchemaMismatchError,
} from './store/index.js';
import { adminExistsQuery } from './accounts/lookup.js';
import { tokenLookupInBatch } from './accounts/tokens.js';
import { sessionLookupInBatch } from './accounts/sessions.js';
import { SESSION_COOKIE } from './http/cookies.js';
import { splitAuthorization } from './auth/credentials.js';
import { parse as parseCookies } from 'hono/utils/cookie';

/** Bindings: the static-assets fetcher plus every configuration variable as a var or a secret. */
export interface Env {
  ASSETS?: Fetcher;
  /** The `mtls_certificates` binding that presents the worker's client certificate to the bridge. */
  BRIDGE_MTLS?: Fetcher;
  [variable: string]: unknown;
}

interface Instance {
  service: Service;
  /**
   * What a request needs before the app, until it has completed once in this isolate: the DB_SCHEMA
   * check, the operator's password filter, the first-admin bootstrap and the saved settings, with
   * one database round trip (one batch, with the request's token or session lookup) when an administrator
   * exists. The refusal, if any.
   */
  ready: (request: Request) => Promise<ProblemError | undefined>;
  /** The DB_SCHEMA check alone (the scheduled jobs): the refusal, if any. */
  refusal: () => Promise<ProblemError | undefined>;
  /** The static data a request loads first (the password filters, the confusables table): the refusal, if any. */
  loadStaticData: () => Promise<ProblemError | undefined>;
  isLiveness: (request: Request) => boolean;
}

let instance: Instance | undefined;

function assetFiles(assets: Fetcher | undefined): StaticFiles {
  return async (rel) => {
    if (!assets) return null;
    const res = await assets.fetch(new Request(`https://assets.invalid/${rel}`));
    return res.ok ? new Response(res.body, res) : null;
  };
}

function build(env: Env): Instance {
  const config = parseEnvironment(env);
  const url = config.get('LIBSQL_URL');
  if (url.startsWith('file:')) {
    throw new Error('LIBSQL_URL: the edge host needs an http(s):// or libsql:// URL (sqld or Turso), not a file: URL');
  }
  const authToken = config.get('LIBSQL_AUTH_TOKEN') || undefined;
  // A client per request: its HTTP streams are I/O objects that must not cross requests.
  // databaseFetch: a database out of reach is a 503, not a 500 (docs/operations.md, "Fault drills").
  const openDb = () => createDb(createClient({ url, authToken, fetch: databaseFetch }));
  // WebAssembly argon2, imported as a module at build time (workerd refuses to compile at run time).
  let wasmError: unknown;
  const hasher = createEdgeHasher(argon2Wasm, { onWasmUnavailable: (err) => (wasmError = err) });
  const transport = edgeBridgeTransport(config.get('BRIDGE_URL'), env.BRIDGE_MTLS);
  const service = assembleService({
    env: config,
    openDb,
    hasher,
    hostName: 'edge',
    staticFiles: assetFiles(env.ASSETS),
    // Cloudflare sets CF-Connecting-IP to the real client (never loopback); `wrangler dev` sets it
    // from its socket (keeping one a client sent, which is why dev:edge listens on loopback only).
    clientAddress: (request) => request.headers.get('CF-Connecting-IP') ?? undefined,
    clientAddressHeader: 'CF-Connecting-IP',
    ...(transport ? { bridgeTransport: transport } : {}),
  });
  const logger = service.logger;
  if (wasmError !== undefined) {
    logger.warning('argon2 WebAssembly unavailable; using the portable hasher', { err: wasmError });
  }
  // Each request awaits only its own work (Workers cancel a request waiting on another's I/O), so
  // concurrent first requests may each try; the unique login index lets only one create the admin.
  let bootstrapped = false;
  const bootstrap = async (adminExists: boolean) => {
    if (bootstrapped) return;
    try {
      const result = adminExists ? 'admin-exists' : await service.bootstrap();
      // Once per isolate: the edge host has no start of its own. The first-run page is offered
      // only under `wrangler dev` on loopback, so production is pointed to the other ways.
      const notice = bootstrapNotice(result, config);
      if (notice) logger.log(notice.level, notice.msg);
    } catch (err) {
      logger.error('first administrator not created', { err: err instanceof Error ? err.message : String(err) });
    }
    bootstrapped = true;
  };
  // DB_SCHEMA (architecture.md §4): the Node host refuses to start on a database stamped with another
  // DB_SCHEMA; the edge has no start, so each request is refused with a 503, and the cause logged once.
  let stamp: { refusal: ProblemError | undefined } | undefined;
  const checkStamp = (found: string | undefined) => {
    if (found === undefined || found === config.get('DB_SCHEMA')) {
      stamp = { refusal: undefined };
    } else {
      const mismatch = new SchemaMismatchError(config.get('DB_SCHEMA'), found);
      logger.error(`refusing the database: ${mismatch.message}`);
      const detail = 'the database belongs to another DB_SCHEMA: this service refuses it (see its log)';
      stamp = { refusal: new ProblemError('SERVICE_UNAVAILABLE', { detail }) };
    }
    return stamp.refusal;
  };
  const refusal = async () => {
    if (stamp) return stamp.refusal;
    try {
      return checkStamp(await readMeta(openDb(), SCHEMA_STAMP_KEY));
    } catch {
      return undefined; // not migrated yet, or unreachable: the request meets that by itself
    }
  };
  // The bundled data the script does not carry (docs/performance.md, "The edge bundle"): the password
  // filter of common passwords and the confusables table, static assets fetched once per isolate. And
  // AUTH_PASSWORD_BLOCKLIST_FILE (docs/security.md, "Password blocklist"): workerd reads no files, so the
  // operator's filter is a static asset deployed with the worker. Where the Node host would refuse to
  // start, every request is refused.
  const asset = async (path: string, hint: string) => {
    const res = await env.ASSETS?.fetch(new Request(`https://assets.invalid/${path}`));
    if (!res?.ok) throw new Error(`no static asset ${path}: ${hint}`);
    return res;
  };
  const built = 'run `npm run build:console` (scripts/build-console.mjs) before deploying';
  const loads: Array<[what: string, load: () => Promise<void>]> = [
    [
      'bundled password filter',
      async () => {
        if (bundledBlocklistMissing())
          useBundledBlocklist(new Uint8Array(await (await asset(BUNDLED_ASSET, built)).arrayBuffer()));
      },
    ],
    [
      'confusables table',
      async () => {
        if (confusablesMissing()) useConfusables(await (await asset(CONFUSABLES_ASSET, built)).text());
      },
    ],
    [
      `password blocklist (AUTH_PASSWORD_BLOCKLIST_FILE ${config.get('PASSWORD_BLOCKLIST_FILE')})`,
      async () => {
        const file = config.get('PASSWORD_BLOCKLIST_FILE');
        if (file === '') return;
        const res = await asset(
          assetPathOf(file, config.get('STATIC_DIR')),
          'compile it into STATIC_DIR before deploying',
        );
        const note = describeBlocklist(useOperatorBlocklist(new Uint8Array(await res.arrayBuffer())), file);
        if (note) logger.info(note);
      },
    ],
  ];
  let staticData: { refusal: ProblemError | undefined } | undefined;
  const loadStaticData = async () => {
    if (staticData) return staticData.refusal;
    const results = await Promise.allSettled(loads.map(([, load]) => load()));
    const errors = results.flatMap((r, i) =>
      r.status === 'rejected' ? [`${loads[i]![0]}: ${(r.reason as Error).message}`] : [],
    );
    if (errors.length === 0) {
      staticData = { refusal: undefined };
    } else {
      logger.error(`refusing requests: ${errors.join('; ')}`);
      const detail = 'data this service checks requests against could not be loaded: it refuses requests (see its log)';
      staticData = { refusal: new ProblemError('SERVICE_UNAVAILABLE', { detail }) };
    }
    return staticData.refusal;
  };
  // The first request's reads in one batch (one round trip, architecture.md §6): the stamp, whether an
  // administrator exists, the saved settings (handed to the configuration, so the frame does not read
  // them again), and the lookup of the request's API token or session, if it has one, kept for the app
  // only once the stamp is right (on another DB_SCHEMA's database it is read but never used). Unreadable (not
  // migrated yet, or unreachable): each step reads for itself as before.
  const firstReads = async (request: Request) => {
    const db = openDb();
    const credential = credentialOf(request);
    // The edge service runs on Date.now (no other clock is given to it): the credential caches' clock.
    const now = Date.now();
    const lookup = credential?.token
      ? tokenLookupInBatch(db, credential.token, now)
      : credential?.sessionId
        ? sessionLookupInBatch(db, credential.sessionId, now)
        : undefined;
    try {
      const [meta, admin, saved, found] = await db.batch([
        metaQuery(db, SCHEMA_STAMP_KEY),
        adminExistsQuery(db),
        savedSettingsQuery(db),
        ...(lookup ? [lookup.query] : []),
      ]);
      const keepCredential = () => lookup?.keep(found);
      return { stamp: meta[0]?.value, adminExists: admin.length > 0, saved: savedValues(saved), keepCredential };
    } catch {
      return undefined;
    }
  };
  let readyDone = false;
  const ready = async (request: Request) => {
    if (readyDone) return undefined;
    if (stamp?.refusal) return stamp.refusal;
    const [reads, listRefusal] = await Promise.all([stamp ? undefined : firstReads(request), loadStaticData()]);
    const refused = (reads ? checkStamp(reads.stamp) : await refusal()) ?? listRefusal;
    if (refused) return refused;
    reads?.keepCredential();
    if (reads) await service.config.current(async () => reads.saved);
    await bootstrap(reads?.adminExists ?? false);
    readyDone = stamp !== undefined && bootstrapped;
    return undefined;
  };
  // Liveness says that the isolate answers: it waits for none of that, and reads nothing.
  const livePath = `${config.get('ROOT_PATH')}/health/live`;
  return {
    service,
    ready,
    refusal,
    loadStaticData,
    isLiveness: (request) => new URL(request.url).pathname === livePath,
  };
}

/**
 * The credential of a request whose lookup an isolate's first request reads with its start-up reads:
 * an API token (`Authorization: Bearer`), or the session id of a session token (a JWT as Bearer, or the
 * session cookie), read from its payload before its signature is checked: the app checks the
 * signature (and the form) before it asks the session cache.
 */
function credentialOf(request: Request): { token?: string; sessionId?: string } | undefined {
  const parts = splitAuthorization(request.headers.get('Authorization') ?? undefined);
  if (parts) {
    if (parts.scheme.toLowerCase() !== 'bearer' || parts.value === '') return undefined;
    return parts.value.includes('.') ? sessionIdOf(parts.value) : { token: parts.value };
  }
  const cookies = request.headers.get('Cookie');
  if (!cookies) return undefined;
  const jar = parseCookies(cookies);
  const cookie = jar[`__Secure-${SESSION_COOKIE}`] ?? jar[SESSION_COOKIE];
  return cookie ? sessionIdOf(cookie) : undefined;
}

function sessionIdOf(jwt: string): { sessionId: string } | undefined {
  try {
    const payload = jwt.split('.')[1] ?? '';
    const json = atob(payload.replaceAll('-', '+').replaceAll('_', '/'));
    const sid = (JSON.parse(json) as { sid?: unknown }).sid;
    return typeof sid === 'string' && sid.length <= 100 ? { sessionId: sid } : undefined;
  } catch {
    return undefined;
  }
}

function instanceFor(env: Env): Instance {
  instance ??= build(env);
  return instance;
}

export default {
  async fetch(request, env, ctx) {
    const { service, ready, isLiveness } = instanceFor(env);
    const refused = isLiveness(request) ? undefined : await ready(request);
    if (refused) return problemResponse(refused, new URL(request.url).pathname, undefined);
    return service.app.fetch(request, env, ctx);
  },
  async scheduled(controller, env) {
    const { service, refusal, loadStaticData } = instanceFor(env);
    if (await refusal()) return;
    // The backfill of login skeletons computes them with the confusables table, a static asset an isolate loads
    // with its first request (docs/performance.md, "The edge bundle"), which a cron-only isolate never had. The
    // other jobs run whether it loads or not (a failure is logged; that job then fails, and is run again).
    await loadStaticData();
    // The handler's own promise: the runtime keeps the invocation alive until the jobs are done.
    await service.runJobs(controller.scheduledTime);
  },
} satisfies ExportedHandler<Env>;

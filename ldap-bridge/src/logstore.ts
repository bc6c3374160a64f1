/**
 * The log-store capability of the bridge (architecture.md §1): POST /v1/logstore/bulk ships audit
 * events with `_bulk` `create` actions, POST /v1/logstore/query runs one `_search` or `_field_caps`
 * on one index pattern. It uses `@opensearch-project/opensearch`, which speaks to OpenSearch and to
 * Elasticsearch alike (the official Elasticsearch client refuses other servers by its product check,
 * and its current major needs Node 22).
 *
 * - Every node of LOGSTORE_URLS is used, with failover: a node that refuses the connection, times out
 *   or answers 502/503/504 is marked dead and the request goes to the next one (the client's own
 *   retry strategy; a 500 is the cluster's answer to the query, the same from any node, so it is not
 *   retried). Only when every node failed is the call a 502/504 problem.
 * - The store's credentials (Basic or an API key) and CA come from the bridge's own environment
 *   (`LogstoreCredentials`), never from the worker. LOGSTORE_URLS is the worker's (UI-editable), so
 *   the bridge itself checks every node against its own LOGSTORE_ALLOWED_URLS before any request:
 *   an administrator can choose among the operator's stores, never send the credentials elsewhere
 *   (docs/audit-logs.md). With credentials, no allow-list means no store, and http:// is refused.
 * - Only the service's own indices (AUDIT_INDEX_PREFIX, checked by the request schemas).
 * - The caller's query string never reaches the store: the bridge builds each request itself.
 */
import { Client, errors } from '@opensearch-project/opensearch';
import type { FastifyInstance } from 'fastify';
import { createPoolCache } from './pool-cache.js';
import { invalidBody, sendProblem } from './problem.js';
import {
  LogstoreBulkRequestSchema,
  LogstoreQueryRequestSchema,
  type LogstoreBulkResponse,
  type LogstoreQueryResponse,
  type LogstoreTarget,
} from '../../schema/bridge/index.js';

/** What the bridge's environment says about the store (LOGSTORE_CA_FILE, LOGSTORE_USERNAME, ...). */
export interface LogstoreCredentials {
  /** PEM of the CA that signs the store's certificates (else the system's roots). */
  ca?: string;
  username?: string;
  password?: string;
  /** An API key (sent as `Authorization: ApiKey <key>`); wins over username and password. */
  apiKey?: string;
  /**
   * LOGSTORE_ALLOWED_URLS: the only store nodes (origins) the bridge talks to. Required when it holds
   * credentials; without credentials and without the list, any node (the bridge then sends nothing
   * of its own).
   */
  allowedUrls?: string[];
}

/** The origin of a store URL (`https://host:port`, lower case, default port dropped), or null. */
function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : null;
  } catch {
    return null;
  }
}

/** Whether the bridge holds credentials of its own for the store. */
const hasCredentials = (c: LogstoreCredentials) => Boolean(c.apiKey || c.username);

/**
 * Why the bridge refuses to send a request to the nodes `urls`, or null when they may be used:
 * with credentials, every node must be https:// and in LOGSTORE_ALLOWED_URLS; without, in the list
 * when there is one.
 */
export function refusedNodes(creds: LogstoreCredentials, urls: readonly string[]): string | null {
  const withCreds = hasCredentials(creds);
  if (withCreds && urls.some((u) => !u.toLowerCase().startsWith('https://')))
    return 'the bridge sends its log-store credentials over https:// only: LOGSTORE_URLS names an http:// node';
  if (!creds.allowedUrls) {
    return withCreds
      ? "LOGSTORE_ALLOWED_URLS is not set in the bridge's environment: it sends its log-store credentials to no node"
      : null;
  }
  const allowed = new Set(creds.allowedUrls.map(originOf));
  const outside = urls.filter((u) => {
    const origin = originOf(u);
    return origin === null || !allowed.has(origin);
  });
  return outside.length > 0
    ? `LOGSTORE_URLS names ${outside.length} node(s) outside the bridge's LOGSTORE_ALLOWED_URLS`
    : null;
}

/** Reads the store's credentials from the bridge's environment. */
export function logstoreCredentialsFromEnv(
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string,
): LogstoreCredentials {
  const allowed = env.LOGSTORE_ALLOWED_URLS?.split(';')
    .map((u) => u.trim())
    .filter(Boolean);
  const creds: LogstoreCredentials = {
    ca: env.LOGSTORE_CA_FILE ? readFile(env.LOGSTORE_CA_FILE) : undefined,
    username: env.LOGSTORE_USERNAME || undefined,
    password: env.LOGSTORE_PASSWORD || undefined,
    apiKey: env.LOGSTORE_API_KEY || undefined,
    allowedUrls: allowed && allowed.length > 0 ? allowed : undefined,
  };
  // A contradictory environment stops the start rather than failing every call later.
  for (const u of creds.allowedUrls ?? []) {
    if (originOf(u) === null) throw new Error(`LOGSTORE_ALLOWED_URLS: ${JSON.stringify(u)} is not an http(s) URL`);
    if (hasCredentials(creds) && !u.toLowerCase().startsWith('https://'))
      throw new Error(
        'LOGSTORE_ALLOWED_URLS: http:// nodes are refused while LOGSTORE_USERNAME or LOGSTORE_API_KEY is set',
      );
  }
  return creds;
}

/** Large enough for a batch of 5,000 events of a few KiB each. */
const BULK_BODY_LIMIT = 64 * 1024 * 1024;
/** How many distinct targets (URL lists, timeouts, verification) keep a client. */
const MAX_CLIENTS = 8;

type StoreProblem = { status: 502 | 504; code: 'STORE_UNAVAILABLE' | 'STORE_TIMEOUT' | 'STORE_TLS'; detail: string };

/** Classifies a failure to get any answer from the store. */
export function classifyStoreError(err: unknown): StoreProblem {
  const chain: unknown[] = [];
  for (let e: unknown = err; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  const text = chain
    .map((e) => `${(e as Error).name ?? ''} ${(e as { code?: string }).code ?? ''} ${(e as Error).message ?? ''}`)
    .join(' ');
  if (err instanceof errors.TimeoutError || /TimeoutError|timed? ?out/i.test(text)) {
    return { status: 504, code: 'STORE_TIMEOUT', detail: 'the log store did not answer within LOGSTORE_TIMEOUT' };
  }
  if (/certificate|self.signed|CERT_|UNABLE_TO_(GET|VERIFY)|ERR_SSL|ERR_TLS|altname|hostname/i.test(text)) {
    return {
      status: 502,
      code: 'STORE_TLS',
      detail: 'the TLS certificate of the log store was not verified (LOGSTORE_VERIFY_CERTS, LOGSTORE_CA_FILE)',
    };
  }
  return { status: 502, code: 'STORE_UNAVAILABLE', detail: 'no node of LOGSTORE_URLS answered' };
}

/** The log store as a Fastify plugin; closes its clients on close. */
export async function logstorePlugin(
  app: FastifyInstance,
  o: { credentials?: LogstoreCredentials } = {},
): Promise<void> {
  const creds = o.credentials ?? {};
  const clients = createPoolCache<Client>(MAX_CLIENTS);
  const clientFor = (t: LogstoreTarget): Client =>
    clients.get(
      JSON.stringify([t.urls, t.timeoutMs, t.verifyCerts]),
      () =>
        new Client({
          nodes: t.urls,
          requestTimeout: t.timeoutMs,
          // Each node once: a failed node is marked dead and the next one tried.
          maxRetries: Math.max(0, t.urls.length - 1),
          ssl: { ...(creds.ca ? { ca: creds.ca } : {}), rejectUnauthorized: t.verifyCerts },
          ...(creds.apiKey
            ? { headers: { authorization: `ApiKey ${creds.apiKey}` } }
            : creds.username
              ? { auth: { username: creds.username, password: creds.password ?? '' } }
              : {}),
        }),
    );
  app.addHook('onClose', async () => {
    await clients.closeAll();
  });

  /** Runs `send`; an HTTP answer of the store is an outcome, no answer at all a problem. */
  const outcome = async <T>(send: () => Promise<{ statusCode: number | null; body: T }>) => {
    try {
      return await send();
    } catch (err) {
      if (err instanceof errors.ResponseError) return { statusCode: err.meta.statusCode, body: err.meta.body as T };
      throw err;
    }
  };

  app.post('/v1/logstore/bulk', { bodyLimit: BULK_BODY_LIMIT }, async (req, reply) => {
    const parsed = LogstoreBulkRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const refused = refusedNodes(creds, parsed.data.urls);
    if (refused) return sendProblem(reply, 503, 'LOGSTORE_URL_NOT_ALLOWED', refused);
    const { items } = parsed.data;
    const body = items.flatMap((i) => [{ create: { _index: i.index, _id: i.id } }, i.document]);
    try {
      const res = await outcome(() => clientFor(parsed.data).bulk({ body }));
      const answer = res.body as {
        items?: Array<Record<string, { status: number; error?: { type?: string; reason?: string } }>>;
      };
      // A whole-request failure (401, 413, 429, 5xx after every node): every item gets its status.
      const out: LogstoreBulkResponse = {
        items: items.map((item, n) => {
          const result = answer.items?.[n] ? Object.values(answer.items[n]!)[0] : undefined;
          const status = result?.status ?? res.statusCode ?? 502;
          const error =
            result?.error ??
            (status >= 300 ? { type: 'request_failed', reason: `the store answered ${res.statusCode}` } : undefined);
          return {
            id: item.id,
            status,
            error: error ? { type: String(error.type ?? 'unknown'), reason: String(error.reason ?? '') } : null,
          };
        }),
      };
      return reply.code(200).send(out);
    } catch (err) {
      const c = classifyStoreError(err);
      req.log.warn({ code: c.code, err: (err as Error).message }, 'log store bulk failed');
      return sendProblem(reply, c.status, c.code, c.detail);
    }
  });

  app.post('/v1/logstore/query', { bodyLimit: 1024 * 1024 }, async (req, reply) => {
    const parsed = LogstoreQueryRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const q = parsed.data;
    const refused = refusedNodes(creds, q.urls);
    if (refused) return sendProblem(reply, 503, 'LOGSTORE_URL_NOT_ALLOWED', refused);
    // OpenSearch Security proxy authentication: the store maps these to roles and document-level
    // security (the bridge's address must be among its internalProxies).
    const headers: Record<string, string> = {};
    if (q.proxyUser !== null) {
      headers['x-proxy-user'] = q.proxyUser;
      headers['x-proxy-roles'] = q.proxyRoles.join(',');
    }
    try {
      const client = clientFor(q);
      const res =
        q.operation === 'search'
          ? await outcome(() => client.search({ index: q.index, body: q.body }, { headers }))
          : await outcome(() =>
              client.fieldCaps({ index: q.index, fields: q.fields ?? '*', body: q.body }, { headers }),
            );
      const out: LogstoreQueryResponse = { status: res.statusCode ?? 502, body: res.body };
      return reply.code(200).send(out);
    } catch (err) {
      const c = classifyStoreError(err);
      req.log.warn({ code: c.code, err: (err as Error).message }, 'log store query failed');
      return sendProblem(reply, c.status, c.code, c.detail);
    }
  });
}

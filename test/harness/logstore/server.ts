/**
 * A TEST LOG STORE, not a real one. No OpenSearch or Elasticsearch server can be installed on these
 * machines (neither is in Debian, and npm packages that "simulate" one download it at run time), so
 * the tests use this protocol-level stand-in for the store's REST API, written from its documented
 * behaviour. It is faithful enough for what the service uses, and no more:
 *
 * - HTTPS with a certificate from its own test CA (for LOGSTORE_VERIFY_CERTS and the store's CA);
 * - any number of nodes, each its own port, sharing one in-memory set of indices (a cluster);
 * - each node can fail on command: refuse connections, answer a status (5xx, 429), answer slowly;
 * - every request is recorded (node, method, path, query, headers, body);
 * - `GET /` (cluster info), `_bulk` (create and index actions; per-item 201/200, 409 for a `create`
 *   of an existing id, and 400 or 429 items chosen by a hook), `_search` and `_field_caps` over
 *   comma-separated, wildcard index patterns (the query DSL subset in query.ts);
 * - optional credentials: Basic or ApiKey, else 401 `security_exception`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCert, makeCa } from '../../../scripts/dev-certs.js';
import { fieldCaps, search, StoreError, type Doc, type StoredDoc } from './query.js';

export interface RecordedRequest {
  node: number;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

/** How a node behaves: `up`; `refuse` (its port is closed); `status` (answers `status`); `slow`. */
export type NodeMode = 'up' | 'refuse' | 'status' | 'slow';

export interface StoreNode {
  url: string;
  mode: NodeMode;
  /** The status answered in mode `status` (default 503). */
  status: number;
  /** The delay in mode `slow` (default 30 s). */
  delayMs: number;
  set(mode: NodeMode, o?: { status?: number; delayMs?: number }): Promise<void>;
}

export interface TestLogStore {
  /** The nodes' URLs, in order (LOGSTORE_URLS joins them with `;`). */
  urls: string[];
  nodes: StoreNode[];
  /** PEM of the CA that signs every node's certificate. */
  caPem: string;
  requests: RecordedRequest[];
  /** Documents of the indices matching `pattern` (wildcards, commas), in insertion order. */
  documents(pattern?: string): StoredDoc[];
  /** Names of the existing indices, sorted. */
  indexNames(): string[];
  /** Decides the status of a bulk item before it is stored: 400 (refused), 429, or undefined. */
  itemStatus?: (item: { index: string; id: string; source: Doc }) => 400 | 429 | undefined;
  /** Adds documents directly (fixtures for search tests). */
  seed(index: string, docs: Array<Doc & { _id?: string }>): void;
  reset(): void;
  stop(): Promise<void>;
}

export interface LogStoreOptions {
  nodes?: number;
  /** Credentials the store requires (none by default). */
  basic?: { username: string; password: string };
  apiKey?: string;
}

const INDEX_NAME = /^[a-z0-9][a-z0-9._+-]*$/;

/** Whether index `name` is matched by a target (comma-separated names with `*` wildcards). */
export function indexMatches(target: string, name: string): boolean {
  return target.split(',').some((p) => {
    if (p === '_all') return true;
    const re = new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    return re.test(name);
  });
}

/** Starts a test log store of `nodes` nodes on loopback. */
export async function startTestLogStore(o: LogStoreOptions = {}): Promise<TestLogStore> {
  const dir = mkdtempSync(join(tmpdir(), 'logstore-'));
  const ca = makeCa(dir, 'logstore-ca');
  const cert = issueCert(dir, ca, 'logstore', { cn: 'logstore', usage: 'server' });
  const tls = { key: readFileSync(cert.key, 'utf8'), cert: readFileSync(cert.cert, 'utf8') };
  const indices = new Map<string, Map<string, StoredDoc>>();
  let seq = 0;

  const put = (index: string, id: string, source: Doc): StoredDoc => {
    if (!indices.has(index)) indices.set(index, new Map());
    const doc = { index, id, source, seq: seq++ };
    indices.get(index)!.set(id, doc);
    return doc;
  };
  const documents = (pattern = '*'): StoredDoc[] =>
    [...indices.entries()]
      .filter(([name]) => indexMatches(pattern, name))
      .flatMap(([, docs]) => [...docs.values()])
      .sort((a, b) => a.seq - b.seq);

  const send = (res: ServerResponse, status: number, body: unknown) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };
  const storeError = (res: ServerResponse, e: StoreError) =>
    send(res, e.status, {
      error: { root_cause: [{ type: e.type, reason: e.message }], type: e.type, reason: e.message },
      status: e.status,
    });

  const authorized = (req: IncomingMessage): boolean => {
    if (!o.basic && !o.apiKey) return true;
    const header = req.headers.authorization ?? '';
    if (o.apiKey && header === `ApiKey ${o.apiKey}`) return true;
    if (o.basic) {
      const expected = `Basic ${Buffer.from(`${o.basic.username}:${o.basic.password}`).toString('base64')}`;
      if (header === expected) return true;
    }
    return false;
  };

  function bulk(body: string, defaultIndex: string | undefined) {
    const lines = body.split('\n').filter((l) => l.trim() !== '');
    const items: unknown[] = [];
    let errors = false;
    for (let i = 0; i < lines.length; i += 2) {
      const action = JSON.parse(lines[i]!) as Record<string, { _index?: string; _id?: string }>;
      const [op, meta] = Object.entries(action)[0] ?? [];
      if ((op !== 'create' && op !== 'index') || !meta)
        throw new StoreError(400, 'illegal_argument_exception', `Malformed action/metadata line [${i + 1}]`);
      const index = meta._index ?? defaultIndex;
      const id = meta._id ?? crypto.randomUUID();
      const raw = lines[i + 1];
      const item = (status: number, extra: Record<string, unknown>) => {
        if (status >= 300) errors = true;
        items.push({ [op]: { _index: index, _id: id, status, ...extra } });
      };
      if (!index || !INDEX_NAME.test(index)) {
        item(400, { error: { type: 'invalid_index_name_exception', reason: `Invalid index name [${index}]` } });
        continue;
      }
      let source: Doc;
      try {
        source = JSON.parse(raw ?? '') as Doc;
      } catch {
        item(400, { error: { type: 'mapper_parsing_exception', reason: 'failed to parse' } });
        continue;
      }
      const forced = store.itemStatus?.({ index, id, source });
      if (forced === 400) {
        item(400, {
          error: { type: 'mapper_parsing_exception', reason: 'failed to parse field (refused by the test store)' },
        });
        continue;
      }
      if (forced === 429) {
        item(429, { error: { type: 'es_rejected_execution_exception', reason: 'rejected execution (test store)' } });
        continue;
      }
      const existing = indices.get(index)?.get(id);
      if (op === 'create' && existing) {
        item(409, {
          error: {
            type: 'version_conflict_engine_exception',
            reason: `[${id}]: version conflict, document already exists`,
          },
        });
        continue;
      }
      put(index, id, source);
      item(existing ? 200 : 201, { result: existing ? 'updated' : 'created', _version: 1 });
    }
    return { took: 1, errors, items };
  }

  function route(req: IncomingMessage, body: string, url: URL): [number, unknown] {
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? 'GET';
    const json = () => (body.trim() === '' ? {} : (JSON.parse(body) as Record<string, unknown>));
    if (parts.length === 0 && (method === 'GET' || method === 'HEAD')) {
      return [
        200,
        {
          name: 'test-node',
          cluster_name: 'test-logstore',
          version: { distribution: 'opensearch', number: '2.19.0' },
          tagline: 'The OpenSearch Project: https://opensearch.org/',
        },
      ];
    }
    const action = parts.at(-1);
    const target = parts.length === 2 ? parts[0]! : undefined;
    if (action === '_bulk' && (method === 'POST' || method === 'PUT') && parts.length <= 2)
      return [200, bulk(body, target)];
    if (
      (action === '_search' || action === '_field_caps') &&
      (method === 'GET' || method === 'POST') &&
      parts.length <= 2
    ) {
      const pattern = target ?? '_all';
      const concrete = pattern.split(',').filter((p) => !p.includes('*') && p !== '_all');
      const missing = concrete.find((p) => !indices.has(p));
      if (missing) throw new StoreError(404, 'index_not_found_exception', `no such index [${missing}]`);
      const docs = documents(pattern);
      if (action === '_search') return [200, search(docs, json())];
      const fields = url.searchParams.get('fields') ?? (json().fields as string[] | undefined)?.join(',') ?? '*';
      return [200, fieldCaps(docs, [...new Set(docs.map((d) => d.index))].sort(), fields)];
    }
    throw new StoreError(
      400,
      'illegal_argument_exception',
      `no handler found for uri [${url.pathname}] and method [${method}]`,
    );
  }

  const requests: RecordedRequest[] = [];
  const servers: Server[] = [];
  const nodes: StoreNode[] = [];
  const sockets = new Set<Socket>();

  const handler = (n: number) => (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://store.invalid');
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({
        node: n,
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      });
      const node = nodes[n]!;
      const answer = () => {
        if (node.mode === 'status')
          return storeError(
            res,
            new StoreError(
              node.status,
              node.status === 429 ? 'es_rejected_execution_exception' : 'test_store_failure',
              `failure injected on node ${n}`,
            ),
          );
        if (!authorized(req))
          return storeError(
            res,
            new StoreError(401, 'security_exception', 'missing or wrong authentication credentials'),
          );
        try {
          const [status, out] = route(req, body, url);
          send(res, status, out);
        } catch (e) {
          if (e instanceof StoreError) storeError(res, e);
          else if (e instanceof SyntaxError)
            storeError(res, new StoreError(400, 'parse_exception', `failed to parse the request body: ${e.message}`));
          else storeError(res, new StoreError(500, 'exception', String(e)));
        }
      };
      if (node.mode === 'slow') setTimeout(answer, node.delayMs);
      else answer();
    });
  };

  const listen = (server: Server, port = 0) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const close = (server: Server) =>
    new Promise<void>((resolve) => {
      for (const s of sockets) if ((s as Socket & { server?: Server }).server === server) s.destroy();
      server.close(() => resolve());
      server.closeAllConnections?.();
    });

  for (let n = 0; n < (o.nodes ?? 1); n++) {
    const make = () => {
      const s = createServer(tls, handler(n));
      s.on('connection', (sock: Socket) => {
        (sock as Socket & { server?: Server }).server = s;
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
      });
      return s;
    };
    servers[n] = make();
    const port = await listen(servers[n]!);
    const node: StoreNode = {
      url: `https://127.0.0.1:${port}`,
      mode: 'up',
      status: 503,
      delayMs: 30_000,
      async set(mode, opts = {}) {
        const wasRefusing = node.mode === 'refuse';
        node.mode = mode;
        if (opts.status !== undefined) node.status = opts.status;
        if (opts.delayMs !== undefined) node.delayMs = opts.delayMs;
        if (mode === 'refuse' && !wasRefusing) await close(servers[n]!);
        if (mode !== 'refuse' && wasRefusing) {
          servers[n] = make();
          await listen(servers[n]!, port);
        }
      },
    };
    nodes.push(node);
  }

  const store: TestLogStore = {
    urls: nodes.map((x) => x.url),
    nodes,
    caPem: readFileSync(ca.cert, 'utf8'),
    requests,
    documents,
    indexNames: () => [...indices.keys()].sort(),
    seed(index, docs) {
      for (const { _id, ...source } of docs) put(index, _id ?? crypto.randomUUID(), source);
    },
    reset() {
      indices.clear();
      requests.length = 0;
      store.itemStatus = undefined;
      for (const n of nodes) void n.set('up', { status: 503, delayMs: 30_000 });
    },
    async stop() {
      await Promise.all(servers.map((s, i) => (nodes[i]!.mode === 'refuse' ? Promise.resolve() : close(s))));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return store;
}

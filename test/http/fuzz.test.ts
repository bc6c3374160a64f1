/**
 * Schema-driven fuzz of every operation of the served OpenAPI description (docs/testing.md, "The fuzz suite"), on a
 * host of its own (its settings, lockouts and deleted accounts stay here). For each operation, FUZZ_RUNS
 * (default 1000 on the Node host, 100 on the edge host: the first 100 of the same cases, as the seed
 * is the same; the edge shares the app, its schemas and its judge with Node, so its run checks every
 * operation on workerd rather than more inputs; docs/architecture.md §9) requests from
 * fast-check with a fixed seed (FUZZ_SEED), valid per the schemas
 * or not (test/harness/fuzz-cases.ts), as anonymous, user, auditor and admin, sent concurrently in
 * batches. Checked: no 500 (and a 502/503/504 only where documented, from a dependency); every
 * status documented for the operation; every error a problem+json (the OAuth shape where the
 * operation documents it) valid per its schema; every success body valid per its schema; and a
 * database fingerprint (fuzz-run.ts, minus what a refusal may write) unchanged by each batch of
 * refused requests. A failure prints the case as a curl command.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { createClient, type Client } from '@libsql/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, call, uniqueLogin, type Call } from '../harness/client.js';
import {
  casesOf,
  cookieHeaders,
  type FuzzCase,
  type FuzzContext,
  type IdentityCredentials,
} from '../harness/fuzz-cases.js';
import { eventually } from '../harness/eventually.js';
import { changedTables, curlOf, fingerprint, sendFuzzRequest, type FuzzAnswer } from '../harness/fuzz-run.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestLogStore, type TestLogStore } from '../harness/logstore/server.js';
import {
  createSchemaValidator,
  operationsOf,
  responseOf,
  type JsonObject,
  type Operation,
} from '../harness/openapi-doc.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? (inject('hostKind') === 'edge' ? 100 : 1000));
const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
/** Requests in flight at once (the host's password-hash queue, AUTH_PASSWORD_HASH_QUEUE, holds them all). */
const BATCH = 64;
const PASSWORD = 'Fuzz$pa55word';

let host: RunningHost;
let bridge: TestBridge;
let store: TestLogStore;
let db: Client;
let doc: JsonObject;
let origin: string;
const agent = new Agent({ keepAlive: true, maxSockets: BATCH });
/** The bootstrap administrator's API token: sets up the fixtures (the fuzz never runs as it). */
let root: string;
/** A fixture call (the root token, an identity); an answer that is not JSON fails naming the request. */
async function api<T = JsonObject>(path: string, o: Call = {}): Promise<{ status: number; body: T }> {
  const res = await call(path, { base: host.url, ...o });
  const text = await res.text();
  try {
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  } catch {
    throw new Error(`${o.method ?? 'GET'} ${path}: ${res.status} ${text.slice(0, 500)}`);
  }
}

beforeAll(async () => {
  store = await startTestLogStore({ nodes: 1 });
  bridge = await startTestBridge({ logstore: { ca: store.caPem } });
  host = await startTestHost(
    inject('hostKind'),
    {
      ...bridge.env,
      LOGSTORE_URLS: store.urls.join(';'),
      LOGSTORE_TIMEOUT: '5',
      // Up to BATCH requests may wait for a password hash at once: a longer queue than the default
      // 32, so that the fuzz's own load is not shed with 503s.
      AUTH_PASSWORD_HASH_QUEUE: '1000',
    },
    // The worker's log lines too (edge): a 500's "unhandled error" line says why.
    { workerLogs: true },
  );
  origin = host.origin;
  db = createClient({ url: host.libsqlUrl });
  const r = await api<JsonObject>('/openapi.json');
  expect(r.status).toBe(200);
  // The requests go to the origin: each path with its server, the mount (ROOT_PATH), in front.
  const server = ((r.body.servers as JsonObject[])[0]!.url as string).replace(/\/$/, '');
  const paths = Object.entries(r.body.paths as JsonObject).map(([path, item]) => [`${server}${path}`, item]);
  doc = { ...r.body, paths: Object.fromEntries(paths) };
  const token = await api<{ token: string }>('/v4/users/me/tokens', {
    method: 'POST',
    auth: basic(ADMIN.login, ADMIN.password),
    json: { name: 'fuzz-fixtures', expiresInDays: 1 },
  });
  expect(token.status).toBe(201);
  root = `Bearer ${token.body.token}`;
  console.log(`fuzz: seed ${SEED} (FUZZ_SEED), ${RUNS} cases per operation (FUZZ_RUNS), host ${host.kind}`);
}, 180_000);

afterAll(async () => {
  agent.destroy();
  db?.close();
  await host?.stop();
  await Promise.all([bridge?.stop(), store?.stop()]);
});

/** Creates an account of `role` and an API token of its own; returns its credentials and id. */
async function createIdentity(role: 'user' | 'auditor' | 'admin'): Promise<IdentityCredentials & { id: string }> {
  const login = uniqueLogin(`fz${role}`);
  const created = await api<{ id: string }>('/v4/users', {
    method: 'POST',
    auth: root,
    json: { login, password: PASSWORD, role },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const auth = basic(login, PASSWORD);
  const token = await api<{ token: string }>('/v4/users/me/tokens', {
    method: 'POST',
    auth,
    json: { name: 'fuzz', expiresInDays: 1 },
  });
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  const session = await call('/v3/login', { base: host.url, method: 'POST', json: { login, password: PASSWORD } });
  expect(session.status, await session.text()).toBe(200);
  const cookie = session.headers
    .getSetCookie()
    .find((c) => c.includes('auth_session='))
    ?.split(';')[0];
  if (!cookie) throw new Error(`no session cookie: ${session.headers.getSetCookie().join(' | ')}`);
  return { id: created.body.id, basic: auth, bearer: `Bearer ${token.body.token}`, cookie };
}

async function createIdentities(): Promise<FuzzContext['identities']> {
  const [user, auditor, admin] = await Promise.all([
    createIdentity('user'),
    createIdentity('auditor'),
    createIdentity('admin'),
  ]);
  return { user, auditor, admin };
}

/** Whether an identity still works (a fuzzed request may have changed its password, role or tokens). */
async function works(ids: FuzzContext['identities']): Promise<boolean> {
  const answers = await Promise.all(Object.values(ids).map((c) => api('/v4/users/me', { auth: c.bearer })));
  return answers.every((a) => a.status === 200);
}

/**
 * Operations that, valid, act on the caller's own credentials or account (a logout, a password or
 * token change): they get identities of their own, so the fuzz does not end the ones it runs as.
 */
const actsOnSelf = (o: Operation) => o.method !== 'get' && (/\/me(\/|$)/.test(o.path) || /logout/.test(o.path));

/** The names or ids of the records a path parameter can name: a listing of the path above it. */
async function recordsAbove(o: Operation, param: string): Promise<string[]> {
  const rootPath = new URL(host.url).pathname;
  const above = o.path.slice(rootPath.length, o.path.indexOf(`/{${param}}`));
  if (above.includes('{')) return [];
  const r = await api<JsonObject>(above, { auth: root });
  const items = (r.status === 200 && Array.isArray(r.body.items) ? r.body.items : []) as JsonObject[];
  return items.map((i) => String(i.name ?? i.id ?? '')).filter((v) => v !== '');
}

/** Settings back to the environment's values after an operation (PATCH /v3/settings may change any). */
async function resetSettings(): Promise<void> {
  const list = await api<{ items: { name: string; source: string }[] }>('/v3/settings', { auth: root });
  if (list.status !== 200) throw new Error(`cannot list the settings: ${list.status} ${JSON.stringify(list.body)}`);
  for (const s of list.body.items.filter((x) => x.source === 'ui'))
    await api(`/v3/settings/${s.name}`, { method: 'DELETE', auth: root });
}

/** The content of an error answer that no operation documents: a problem. */
const PROBLEM = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

/** Sends a fuzz request; on the edge host an unanswered one is sent again after 15 s (fuzz-run.ts, SendOptions). */
const send = (r: FuzzCase['request']) =>
  sendFuzzRequest(origin, agent, r, host.kind === 'edge' ? { firstWaitMs: 15_000 } : {});

/**
 * The database fingerprint. On the edge host it is read over HTTP from the libSQL dev server, whose
 * kept-alive connection now and then fails as it is reused on a loaded machine ("fetch failed"): a
 * read, made once more like a fixture call.
 */
const dbPrint = () => fixture(() => fingerprint(db));

/** The essence of a Content-Type header. */
const essence = (type: string | string[] | undefined) =>
  String(type ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();

/**
 * An answer of `wrangler dev`'s local proxy, not of the worker (Cloudflare has no such proxy): its
 * text/plain 503 when the worker cut an upload off or was reset ("restarted mid-request"), and its
 * 500 when it then cannot retry a GET whose body was read. Counted, not judged (edge host only).
 */
function fromDevProxy(answer: FuzzAnswer): boolean {
  if (host.kind !== 'edge' || essence(answer.headers['content-type']) === 'application/problem+json') return false;
  const text = answer.body.toString();
  return (
    (answer.status === 503 && text.includes('restarted mid-request')) ||
    (answer.status === 500 && text.includes('Cannot reconstruct a Request'))
  );
}

/** What is wrong with an answer to `o`, or undefined. */
function judge(
  o: Operation,
  c: FuzzCase,
  answer: FuzzAnswer,
  validate: ReturnType<typeof createSchemaValidator>,
): string | undefined {
  const { status } = answer;
  if (status === 0) return `no answer: ${answer.body.toString()}`;
  if (status === 500) return `500: ${answer.body.toString().slice(0, 300)}`;
  // A dot segment addressed another path: its 404 or 405 is still a problem.
  const elsewhere = c.retargeted && (status === 404 || status === 405);
  const documented = elsewhere ? { content: PROBLEM } : responseOf(doc, o.op, status);
  if (!documented) return `status ${status} is not documented: ${answer.body.toString().slice(0, 300)}`;
  const content = documented.content as JsonObject | undefined;
  const type = essence(answer.headers['content-type']);
  if (!content) return answer.body.length === 0 || status >= 300 ? undefined : `${status} has an undocumented body`;
  if (!(type in content))
    return `${status} answered ${type || 'no media type'}, documented: ${Object.keys(content).join(', ')}`;
  if (!type.endsWith('json')) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString());
  } catch {
    return `${status}: the ${type} body is not JSON`;
  }
  const schema = (content[type] as JsonObject).schema as JsonObject | undefined;
  if (schema) {
    const check = validate(schema);
    if (!check(body)) return `${status} body does not match its schema: ${JSON.stringify(check.errors).slice(0, 400)}`;
  }
  if (type === 'application/problem+json' && (body as JsonObject).status !== status)
    return `problem.status ${(body as JsonObject).status} is not ${status}`;
  if (status >= 500) {
    // A documented 502/503/504 is a dependency's failure (the bridge, the log store, a directory).
    const code = (body as JsonObject).code;
    if (!['BAD_GATEWAY', 'SERVICE_UNAVAILABLE', 'GATEWAY_TIMEOUT'].includes(String(code)))
      return `${status} ${String(code)}`;
  }
  return undefined;
}

interface OpResult {
  cases: number;
  /** Answers of wrangler dev's proxy (edge), not judged. */
  proxied: number;
  statuses: Record<number, number>;
  failures: string[];
}

/** A stable per-operation seed, so that adding a route changes no other operation's cases. */
function seedOf(o: Operation): number {
  let h = SEED;
  for (const ch of `${o.method} ${o.path}`) h = (Math.imul(h, 31) + ch.charCodeAt(0)) | 0;
  return h;
}

/** Runs the cases of one operation in batches; refused batches must leave the database as it was. */
async function fuzzOperation(
  o: Operation,
  ctx: FuzzContext,
  validate: ReturnType<typeof createSchemaValidator>,
): Promise<OpResult> {
  const cases = fc.sample(casesOf(ctx, o), { seed: seedOf(o), numRuns: RUNS });
  const result: OpResult = { cases: 0, proxied: 0, statuses: {}, failures: [] };
  const fail = (c: FuzzCase, why: string) => {
    if (result.failures.length < 20)
      result.failures.push(
        withHostLog(
          `${o.method.toUpperCase()} ${o.path} as ${c.identity} (${c.kind}): ${why}\n  ${curlOf(origin, c.request)}`,
        ),
      );
  };
  const recheck: FuzzCase[] = [];
  /** Sends a batch; when every request in it was refused, compares the fingerprints. */
  let last = await dbPrint();
  const runBatch = async (batch: FuzzCase[], isRecheck: boolean) => {
    // The fingerprint after a batch is the one before the next: nothing else runs in between.
    const before = last;
    const answers = await Promise.all(batch.map((c) => send(c.request)));
    const after = (last = await dbPrint());
    // A proxy's answer says nothing of what the worker did: such a batch is not all refusals.
    const refused = answers.every((a) => a.status >= 400 && !fromDevProxy(a));
    for (const [i, a] of answers.entries()) {
      if (!isRecheck) {
        result.cases += 1;
        result.statuses[a.status] = (result.statuses[a.status] ?? 0) + 1;
        const why = fromDevProxy(a) ? undefined : judge(o, batch[i]!, a, validate);
        if (fromDevProxy(a)) result.proxied += 1;
        if (why) fail(batch[i]!, why);
      }
      if (!refused && a.status >= 400 && !fromDevProxy(a) && !isRecheck) recheck.push(batch[i]!);
    }
    const changed = changedTables(before, after);
    if (refused && changed.length > 0) await pinpoint(batch, changed);
  };
  /** One by one, the refused requests of a batch that changed the database: which did. */
  const pinpoint = async (batch: FuzzCase[], changed: string[]) => {
    let found = false;
    for (const c of batch) {
      const before = await dbPrint();
      const a = await send(c.request);
      const now = changedTables(before, await dbPrint());
      if (a.status >= 400 && !fromDevProxy(a) && now.length > 0) {
        fail(c, `refused with ${a.status} but changed ${now.join(', ')}`);
        found = true;
      }
    }
    if (!found)
      fail(batch[0]!, `a batch of refused requests changed ${changed.join(', ')} (not reproduced one by one)`);
    last = await dbPrint();
  };
  for (let i = 0; i < cases.length; i += BATCH) await runBatch(cases.slice(i, i + BATCH), false);
  // Refusals that shared a batch with a success: again, among refusals only.
  for (let i = 0; i < recheck.length; i += BATCH) {
    const batch = recheck.slice(i, i + BATCH);
    const before = last;
    const answers = await Promise.all(batch.map((c) => send(c.request)));
    const changed = changedTables(before, (last = await dbPrint()));
    if (answers.every((a) => a.status >= 400 && !fromDevProxy(a)) && changed.length > 0) await pinpoint(batch, changed);
  }
  return result;
}

/** A failure, with what the host logged of the request its problem names (a 500's "unhandled error" line says why). */
function withHostLog(failure: string): string {
  const id = /"requestId\\?":\\?"([0-9a-f-]{36})/.exec(failure)?.[1];
  const lines = id
    ? host
        .output()
        .split('\n')
        .filter((line) => line.includes(id))
    : [];
  return lines.length > 0 ? `${failure}\n  the host logged:\n${lines.join('\n')}` : failure;
}

/**
 * A fixture call (identities, settings reset, the identities' check). On the edge host `wrangler dev`'s
 * local proxy now and then drops a connection after the fuzz cut uploads off ("fetch failed"), which
 * Cloudflare's front end does not do: such a call is made once more before it counts as the host failing.
 */
async function fixture<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (host.kind !== 'edge' || !(err instanceof TypeError)) throw err;
    // Once the proxy answers again.
    await eventually(
      () =>
        fetch(`${host.url}/health/live`).then(
          (r) => r.ok,
          () => false,
        ),
      {
        what: "wrangler dev's proxy answering again",
      },
    );
    return call();
  }
}

describe('schema-driven fuzz of every operation', () => {
  it(`answers ${RUNS} generated requests per operation as documented, refusals changing nothing`, async () => {
    const validate = createSchemaValidator(doc);
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(40);
    let shared = await fixture(createIdentities);
    const victims = async () => fixture(() => Promise.all([createIdentity('user'), createIdentity('auditor')]));
    const failures: string[] = [];
    const summary: string[] = [];
    let total = 0;
    let proxied = 0;
    const started = Date.now();
    for (const o of ops) {
      try {
        const identities = actsOnSelf(o) ? await fixture(createIdentities) : shared;
        const pathValues: Record<string, string[]> = {};
        const params = ((o.op.parameters as JsonObject[] | undefined) ?? []).filter((p) => p.in === 'path');
        for (const p of params) {
          const name = p.name as string;
          // Accounts a valid request may change or delete: fresh ones, never the identities.
          pathValues[name] =
            name === 'userId' ? (await victims()).map((v) => v.id) : await fixture(() => recordsAbove(o, name));
        }
        const maxBodySize = 65536;
        const t0 = Date.now();
        const r = await fuzzOperation(
          o,
          { doc, identities, pathValues, maxBodySize, bodyOnGet: host.kind !== 'edge', origin },
          validate,
        );
        total += r.cases;
        proxied += r.proxied;
        failures.push(...r.failures);
        const statuses = Object.entries(r.statuses)
          .map(([s, n]) => `${s}×${n}`)
          .join(' ');
        summary.push(
          `${o.method.toUpperCase()} ${o.path}: ${r.cases} cases in ${Date.now() - t0} ms ` +
            `(${statuses})${r.proxied ? `, ${r.proxied} from wrangler dev's proxy` : ''}`,
        );
        await fixture(resetSettings);
        if (!(await fixture(() => works(shared)))) {
          failures.push(`after ${o.method.toUpperCase()} ${o.path}: the shared identities no longer work`);
          shared = await fixture(createIdentities);
        }
      } catch (err) {
        // The host itself failed (a fixture call answered 5xx): what it printed says why.
        failures.push(
          `during ${o.method.toUpperCase()} ${o.path}: ${String(err)}\nthe host's last output:\n` +
            `${host.output().slice(-4000)}`,
        );
        break;
      }
    }
    console.log(
      `fuzz on ${host.kind}: ${total} cases, ${ops.length} operations, ${Date.now() - started} ms, seed ` +
        `${SEED}, ${proxied} answers of wrangler dev's proxy\n${summary.join('\n')}`,
    );
    expect(failures, failures.join('\n\n')).toEqual([]);
  }, 1_800_000);
});

/** One request to an operation (`target`: its path, filled in, and query), judged as the fuzz judges its cases. */
async function probe(o: Operation, headers: [string, string][], body?: string, target = o.path) {
  const c: FuzzCase = {
    request: {
      method: o.method.toUpperCase(),
      target,
      headers,
      ...(body === undefined ? {} : { body: new TextEncoder().encode(body) }),
    },
    identity: 'anonymous',
    kind: 'fixed case',
    retargeted: false,
  };
  const answer = await send(c.request);
  const problem = fromDevProxy(answer) ? undefined : judge(o, c, answer, createSchemaValidator(doc));
  return { answer, problem: problem && `${problem}\n  ${curlOf(origin, c.request)}` };
}

/** A value each path parameter accepts (so a request reaches the body checks), by its schema. */
function validParam(p: JsonObject): string {
  const schema = p.schema as JsonObject;
  if (typeof p.example === 'string') return p.example;
  if (typeof schema.example === 'string') return schema.example;
  if (schema.format === 'uuid') return randomUUID();
  return 'no-such-record';
}

/** The operation `method path` (path below the root). */
function operation(method: string, path: string): Operation {
  const o = operationsOf(doc).find((x) => x.method === method && x.path === `${new URL(host.url).pathname}${path}`);
  if (!o) throw new Error(`no operation ${method} ${path}`);
  return o;
}

describe('fixed cases of every operation', () => {
  it('anonymous, malformed path and query parameters, wrong media types, malformed and invalid bodies', async () => {
    const admin = (await createIdentities()).admin;
    const problems: string[] = [];
    const expectStatus = (at: string, got: number, want: number[]) => {
      if (!want.includes(got)) problems.push(`${at}: ${got}, expected ${want.join(' or ')}`);
    };
    const probeOperation = async (o: Operation) => {
      const at = `${o.method.toUpperCase()} ${o.path}`;
      const schemes = new Set(((o.op.security as JsonObject[] | undefined) ?? []).flatMap((x) => Object.keys(x)));
      // Bearer, else the session cookie (same-origin, as a browser's) for the operations that take only
      // a session (adding a passkey), else Basic; Basic for what no API token may do (managing tokens,
      // factors and passwords: x-token-scope none), a change of factors among them.
      const noToken = o.op['x-token-scope'] === 'none';
      const factorChange = o.op['x-step-up'] === 'factors' && schemes.has('basic');
      const auth: [string, string][] =
        (schemes.has('bearer') || schemes.size === 0) && !factorChange && !noToken
          ? [['Authorization', admin.bearer]]
          : schemes.has('cookie')
            ? cookieHeaders(admin.cookie, o.method, origin)
            : [['Authorization', admin.basic]];
      const params = (o.op.parameters as JsonObject[] | undefined) ?? [];
      const fill = (bad: boolean) =>
        params
          .filter((p) => p.in === 'path')
          .reduce(
            (path, p) =>
              path.replace(`{${p.name as string}}`, encodeURIComponent(bad ? `!${'x'.repeat(100)}` : validParam(p))),
            o.path,
          );
      const run = async (label: string, headers: [string, string][], body?: string, target?: string) => {
        const r = await probe(o, headers, body, target);
        if (r.problem) problems.push(`${at} (${label}): ${r.problem}`);
        return r.answer.status;
      };
      await run('anonymous', []);
      if (params.some((p) => p.in === 'path'))
        expectStatus(
          `${at} malformed path parameter`,
          await run('malformed path parameter', auth, undefined, fill(true)),
          [404, 422],
        );
      const query = params.filter((p) => p.in === 'query');
      if (query.length > 0) {
        const bad = query.map((p) => {
          const max = (p.schema as JsonObject).maxLength;
          return `${p.name as string}=${typeof max === 'number' ? 'x'.repeat(max + 1) : 'x'}`;
        });
        await run('malformed query', auth, undefined, `${fill(false)}?${bad.join('&')}`);
      }
      const body = o.op.requestBody as JsonObject | undefined;
      if (!body) return;
      const types = Object.keys(body.content as JsonObject);
      // The first-run page is gone (404) once an administrator exists, whatever is sent.
      const parsed =
        !o.path.endsWith('/first-run') &&
        types.some((t) => t === 'application/json' || t === 'application/x-www-form-urlencoded');
      const wrongType = await run(
        'wrong media type',
        [...auth, ['Content-Type', 'application/xml']],
        '<a/>',
        fill(false),
      );
      // Bodies the service parses (JSON, forms) are refused by media type before anything runs.
      if (parsed) expectStatus(`${at} wrong media type`, wrongType, [415]);
      if (types.includes('application/json')) {
        const json: [string, string][] = [...auth, ['Content-Type', 'application/json']];
        expectStatus(`${at} malformed JSON`, await run('malformed JSON', json, '{"login": ', fill(false)), [400]);
        expectStatus(`${at} invalid body`, await run('invalid body', json, '[]', fill(false)), [422]);
      }
    };
    // A few operations at a time, each one's requests in order: every operation at once (some 70, a few
    // hundred requests) only tested how a loaded machine copes with the burst, and cut connections there.
    const queue = operationsOf(doc);
    const workers = Array.from({ length: 8 }, async () => {
      for (let o = queue.shift(); o; o = queue.shift()) await probeOperation(o);
    });
    await Promise.all(workers);
    expect(problems, problems.map(withHostLog).join('\n\n')).toEqual([]);
  }, 300_000);
});

describe('defects the fuzz found (each replayed)', () => {
  it(
    'a GET with a chunked body is answered (edge: it was a 500, the body limit rebuilt a GET Request ' + 'with a body)',
    async () => {
      const { admin } = await createIdentities();
      const o = operation('get', '/v4/users/me');
      const headers: [string, string][] = [
        ['Authorization', admin.bearer],
        ['Transfer-Encoding', 'chunked'],
        ['Content-Type', 'application/json'],
      ];
      const { answer, problem } = await probe(o, headers, '{"a":1}');
      expect(problem).toBeUndefined();
      expect(answer.status).toBe(200);
    },
  );

  it(
    'POST /v3/oauth_login: a malformed multipart body is a 415 problem, not a 400 problem where an ' +
      'OAuth error is documented',
    async () => {
      const o = operation('post', '/v3/oauth_login');
      const { answer, problem } = await probe(
        o,
        [['Content-Type', 'multipart/form-data; boundary=x']],
        'grant_type=password&username=a&password=b',
      );
      expect(problem).toBeUndefined();
      expect(answer.status).toBe(415);
    },
  );
});

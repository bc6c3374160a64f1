/**
 * The embedded audit log (docs/audit-logs-embedded.md): while no log store is configured
 * (LOGSTORE_URLS the placeholder), the logs endpoints answer from the audit outbox in libSQL, which
 * already holds every event (nothing is shipped without a store), kept AUDIT_LOCAL_RETENTION_DAYS
 * days. The answers have the store's shape (`hits.total`, `hits.hits[]._source`, `sort`), so the
 * simple form, the export and the console read them unchanged. Only a subset of the query DSL runs
 * here; anything else is a 422 naming each key and saying that it needs the log store.
 *
 * Only the stream and a time range reach SQL (parameterised, on the `audit_outbox_stream_at`
 * index); the rest of the query is evaluated on the event documents, so it means exactly what it
 * means in the store for these fields. A query scanning more than LOCAL_SCAN_LIMIT events is
 * refused (narrow the time range).
 */
import { and, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import { auditOutbox } from '../../../schema/index.js';
import { outboxEvents } from '../audit/api-access.js';
import { ProblemError, type FieldError } from '../http/problem.js';
import type { Db } from '../store/index.js';
import { toLogDocument } from './document.js';
import { datedIndex, type StreamName } from './streams.js';

/** The most events one query of the embedded audit log reads. */
export const LOCAL_SCAN_LIMIT = 100_000;

type Doc = Record<string, unknown>;
type Predicate = (d: Doc) => boolean;
interface Bounds {
  /** Events at or after (epoch ms). */
  from?: number;
  /** Events before (epoch ms). */
  to?: number;
}

const NEEDS_STORE = 'needs the log store (LOGSTORE_URLS): the embedded audit log does not run it';

/** A 422 naming each key the embedded audit log cannot run (docs/audit-logs-embedded.md). */
function needsLogstore(errors: FieldError[]): ProblemError {
  const detail = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  return new ProblemError('VALIDATION', { detail, extensions: { errors, cause: 'LOGSTORE_REQUIRED' } });
}

/** A dotted field of a document; `.keyword` sub-fields read the field itself. */
function fieldValue(d: Doc, field: string): unknown {
  const name = field.endsWith('.keyword') ? field.slice(0, -'.keyword'.length) : field;
  if (name === '_id') return (d.event as Doc | undefined)?.id;
  if (Object.hasOwn(d, name)) return d[name];
  let v: unknown = d;
  for (const part of name.split('.'))
    v = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Doc)[part] : undefined;
  return v;
}

const isPlain = (v: unknown): v is string | number | boolean =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown) => isPlain(a) && isPlain(b) && String(a) === String(b);

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A time of a range: epoch ms, ISO 8601, `now` or `now-<n><s|m|h|d|w>` (also `+`). */
function timeOf(v: unknown, now: number): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v !== 'string') return undefined;
  const math = /^now(?:([+-])(\d{1,9})([smhdw]))?$/.exec(v);
  if (math) return math[1] ? now + (math[1] === '-' ? -1 : 1) * Number(math[2]) * UNIT_MS[math[3]!]! : now;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** The first key of a one-key clause and its value. */
function single(q: Record<string, unknown>): [string, unknown] {
  const [entry] = Object.entries(q);
  return entry ?? ['', undefined];
}

/** A query of the subset as a predicate; what it cannot run goes to `errors`. */
function compile(q: unknown, path: string, errors: FieldError[], now: number): Predicate {
  const no = (p: string, message = NEEDS_STORE): Predicate => {
    errors.push({ location: 'body', path: p, message });
    return () => false;
  };
  if (!isObject(q)) return no(path, 'a query object');
  const [type, body] = single(q);
  const at = `${path}.${type}`;
  switch (type) {
    case 'match_all':
      return () => true;
    case 'match_none':
      return () => false;
    case 'constant_score':
      return compile(isObject(body) ? body.filter : undefined, `${at}.filter`, errors, now);
    case 'ids': {
      const values = isObject(body) && Array.isArray(body.values) ? body.values : undefined;
      if (!values) return no(at, 'expects {"values": [ids]}');
      return (d) => values.some((v) => same(fieldValue(d, 'event.id'), v));
    }
    case 'exists': {
      const field = isObject(body) ? body.field : undefined;
      if (typeof field !== 'string') return no(at, 'expects {"field": name}');
      return (d) => fieldValue(d, field) !== undefined && fieldValue(d, field) !== null;
    }
    case 'term':
    case 'prefix': {
      if (!isObject(body)) return no(at, 'expects {field: value}');
      const [field, spec] = single(body);
      const value = isObject(spec) ? spec.value : spec;
      if (!isPlain(value)) return no(`${at}.${field}`, 'expects a value');
      if (type === 'term') return (d) => same(fieldValue(d, field), value);
      return (d) => {
        const v = fieldValue(d, field);
        return typeof v === 'string' && v.startsWith(String(value));
      };
    }
    case 'terms': {
      if (!isObject(body)) return no(at, 'expects {field: [values]}');
      const [field, values] = single(body);
      if (!Array.isArray(values)) return no(`${at}.${field}`, 'expects a list of values');
      return (d) => values.some((v) => same(fieldValue(d, field), v));
    }
    case 'range': {
      if (!isObject(body)) return no(at, 'expects {field: {gte, gt, lte, lt}}');
      const [field, spec] = single(body);
      if (!isObject(spec)) return no(`${at}.${field}`, 'expects {gte, gt, lte, lt}');
      const date = field === '@timestamp';
      const tests: Array<(v: number | string) => boolean> = [];
      for (const [op, raw] of Object.entries(spec)) {
        if (op === 'format' || op === 'time_zone') {
          if (op === 'time_zone') no(`${at}.${field}.${op}`);
          continue;
        }
        const bound = date ? timeOf(raw, now) : raw;
        if (bound === undefined || !isPlain(bound)) {
          no(`${at}.${field}.${op}`, date ? 'expects epoch ms, ISO 8601, now or now-<n><s|m|h|d|w>' : 'a value');
          continue;
        }
        const b = bound as number | string;
        if (op === 'gte') tests.push((v) => v >= b);
        else if (op === 'gt') tests.push((v) => v > b);
        else if (op === 'lte') tests.push((v) => v <= b);
        else if (op === 'lt') tests.push((v) => v < b);
        else no(`${at}.${field}.${op}`);
      }
      return (d) => {
        const raw = fieldValue(d, field);
        const v = date ? timeOf(raw, now) : raw;
        return (typeof v === 'number' || typeof v === 'string') && tests.every((t) => t(v));
      };
    }
    case 'bool': {
      if (!isObject(body)) return no(at, 'expects {must, filter, should, must_not}');
      const list = (k: string): Predicate[] => {
        const v = body[k];
        if (v === undefined) return [];
        return (Array.isArray(v) ? v : [v]).map((c, i) =>
          compile(c, Array.isArray(v) ? `${at}.${k}.${i}` : `${at}.${k}`, errors, now),
        );
      };
      const all = [...list('must'), ...list('filter')];
      const none = list('must_not');
      const some = list('should');
      let least = all.length === 0 && some.length > 0 ? 1 : 0;
      for (const k of Object.keys(body)) {
        if (k === 'minimum_should_match') {
          const m = Number(body[k]);
          if (Number.isInteger(m) && m >= 0) least = m;
          else no(`${at}.${k}`, 'expects a whole number');
        } else if (!['must', 'filter', 'should', 'must_not', 'boost', '_name'].includes(k)) no(`${at}.${k}`);
      }
      return (d) => all.every((p) => p(d)) && !none.some((p) => p(d)) && some.filter((p) => p(d)).length >= least;
    }
    default:
      return no(at);
  }
}

/** The time range a query certainly keeps to (its top-level `@timestamp` ranges), to narrow the SQL. */
function boundsOf(q: unknown, now: number): Bounds {
  const out: Bounds = {};
  const clauses: unknown[] = [];
  if (isObject(q) && isObject(q.bool)) {
    for (const k of ['must', 'filter']) {
      const v = q.bool[k];
      if (v !== undefined) clauses.push(...(Array.isArray(v) ? v : [v]));
    }
  } else clauses.push(q);
  for (const c of clauses) {
    const spec = isObject(c) && isObject(c.range) ? c.range['@timestamp'] : undefined;
    if (!isObject(spec)) continue;
    const lower = timeOf(spec.gte ?? spec.gt, now);
    const upper = timeOf(spec.lt, now) ?? (timeOf(spec.lte, now) ?? Number.NaN) + 1;
    if (lower !== undefined) out.from = Math.max(out.from ?? lower, lower);
    if (!Number.isNaN(upper)) out.to = Math.min(out.to ?? upper, upper);
  }
  return out;
}

interface SortKey {
  field: 'at' | 'id';
  desc: boolean;
}

/** The sort of a search: `@timestamp` and `event.id` (`_id`), each asc or desc. */
function sortOf(sort: unknown, errors: FieldError[]): SortKey[] | undefined {
  if (sort === undefined) return undefined;
  const items = Array.isArray(sort) ? sort : [sort];
  const keys: SortKey[] = [];
  for (const [i, item] of items.entries()) {
    const path = Array.isArray(sort) ? `sort.${i}` : 'sort';
    let name: string;
    let order: unknown = 'asc';
    if (typeof item === 'string') name = item;
    else if (isObject(item)) {
      const [n, spec] = single(item);
      name = n;
      order = isObject(spec) ? (spec.order ?? 'asc') : spec;
    } else {
      errors.push({ location: 'body', path, message: 'a field name or {field: order}' });
      continue;
    }
    const field = name === '@timestamp' ? 'at' : ['event.id', 'event.id.keyword', '_id'].includes(name) ? 'id' : null;
    if (!field || (order !== 'asc' && order !== 'desc')) {
      errors.push({ location: 'body', path, message: `${NEEDS_STORE} (sorts by @timestamp, event.id)` });
      continue;
    }
    keys.push({ field, desc: order === 'desc' });
  }
  return keys;
}

interface Found {
  doc: Doc;
  at: number;
  id: string;
}

function compareBy(keys: SortKey[]): (a: Found, b: Found) => number {
  return (a, b) => {
    for (const k of keys) {
      const c = k.field === 'at' ? a.at - b.at : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
      if (c !== 0) return k.desc ? -c : c;
    }
    return 0;
  };
}

/** `_source` as the store reads it: false, a field, a list of fields or wildcards, or {includes}. */
function sourceFilter(spec: unknown, errors: FieldError[]): ((d: Doc) => Doc) | undefined {
  if (spec === undefined || spec === true) return undefined;
  if (spec === false) return () => ({});
  const list = typeof spec === 'string' ? [spec] : Array.isArray(spec) ? spec : undefined;
  if (!list?.every((f) => typeof f === 'string')) {
    errors.push({ location: 'body', path: '_source', message: `${NEEDS_STORE} (true, false, fields)` });
    return undefined;
  }
  const patterns = (list as string[]).map(wildcard);
  return (d) => pickFields(d, '', patterns);
}

function wildcard(p: string): RegExp {
  return new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`);
}

/** The parts of `d` whose dotted path (or an ancestor's) matches one of `patterns`. */
function pickFields(d: Doc, prefix: string, patterns: RegExp[]): Doc {
  const out: Doc = {};
  for (const [k, v] of Object.entries(d)) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (patterns.some((p) => p.test(path))) out[k] = v;
    else if (isObject(v)) {
      const inner = pickFields(v, path, patterns);
      if (Object.keys(inner).length > 0) out[k] = inner;
    }
  }
  return out;
}

/** The events of `stream` in `bounds`, as documents (one per event; API-access batches expanded). */
async function eventsOf(db: Db, stream: StreamName, bounds: Bounds): Promise<Found[]> {
  const where: SQL[] = [eq(auditOutbox.stream, stream)];
  // A row of batched API-access events carries its first event's time, the others come after it:
  // only the upper bound narrows those rows.
  if (bounds.from !== undefined && stream !== 'api_access') where.push(gte(auditOutbox.at, bounds.from));
  if (bounds.to !== undefined) where.push(lt(auditOutbox.at, bounds.to));
  const [count] = await db
    .select({ events: sql<number | null>`sum(${auditOutbox.events})` })
    .from(auditOutbox)
    .where(and(...where));
  if ((count?.events ?? 0) > LOCAL_SCAN_LIMIT) {
    throw needsLogstore([
      {
        location: 'body',
        path: 'query',
        message:
          `matches more than ${LOCAL_SCAN_LIMIT} stored events: narrow the @timestamp range ` +
          '(from/to), or configure the log store (LOGSTORE_URLS)',
      },
    ]);
  }
  const rows = await db
    .select()
    .from(auditOutbox)
    .where(and(...where))
    .orderBy(desc(auditOutbox.at));
  const seen = new Set<string>();
  const found: Found[] = [];
  for (const row of rows) {
    for (const event of outboxEvents(row)) {
      // A refused event of a batch is also kept as a row of its own (a dead letter): once.
      if (seen.has(event.id)) continue;
      seen.add(event.id);
      found.push({ doc: toLogDocument(event), at: event.at, id: event.id });
    }
  }
  return found;
}

const SEARCH_KEYS = new Set([
  'query',
  'post_filter',
  'from',
  'size',
  'sort',
  '_source',
  'track_total_hits',
  'search_after',
  'timeout',
]);

/**
 * A search of `stream` (the body already passed the allow-list of dsl-guard.ts) on the embedded
 * audit log, answered in the store's shape. `pattern` names the documents' `_index`, as shipping
 * would have.
 */
export async function localSearch(
  db: Db,
  stream: StreamName,
  pattern: string,
  body: Record<string, unknown>,
  now: number,
): Promise<Record<string, unknown>> {
  const started = Date.now();
  const errors: FieldError[] = [];
  for (const key of Object.keys(body))
    if (!SEARCH_KEYS.has(key))
      errors.push({ location: 'body', path: key, message: `${NEEDS_STORE} (aggregations, highlighting, ...)` });
  const query = body.query ?? { match_all: {} };
  const matches = compile(query, 'query', errors, now);
  const post = body.post_filter === undefined ? () => true : compile(body.post_filter, 'post_filter', errors, now);
  const keys = sortOf(body.sort, errors);
  const source = sourceFilter(body._source, errors);
  const after = body.search_after;
  if (after !== undefined && (!keys || !Array.isArray(after) || after.length !== keys.length))
    errors.push({ location: 'body', path: 'search_after', message: 'one value per sort key (a sort is needed)' });
  if (errors.length > 0) throw needsLogstore(errors);

  const order = keys ?? [
    { field: 'at', desc: true },
    { field: 'id', desc: true },
  ];
  const compare = compareBy(order);
  // As in the store, post_filter narrows the hits and their total (there are no aggregations here).
  let found = (await eventsOf(db, stream, boundsOf(query, now))).filter((f) => matches(f.doc) && post(f.doc));
  found.sort(compare);
  const total = found.length;
  if (Array.isArray(after) && keys) {
    const at = keys.findIndex((k) => k.field === 'at');
    const id = keys.findIndex((k) => k.field === 'id');
    const mark: Found = {
      doc: {},
      at: at >= 0 ? (timeOf(after[at], now) ?? 0) : 0,
      id: id >= 0 ? String(after[id] ?? '') : '',
    };
    found = found.filter((f) => compare(f, mark) > 0);
  }
  const from = typeof body.from === 'number' ? body.from : 0;
  const size = typeof body.size === 'number' ? body.size : 10;
  const track = body.track_total_hits;
  const limit = track === true ? Number.POSITIVE_INFINITY : typeof track === 'number' ? track : 10_000;
  const hits = found.slice(from, from + size).map((f) => ({
    _index: datedIndex(pattern, f.at),
    _id: f.id,
    _score: null,
    _source: source ? source(f.doc) : f.doc,
    ...(keys ? { sort: keys.map((k) => (k.field === 'at' ? f.at : f.id)) } : {}),
  }));
  return {
    took: Date.now() - started,
    timed_out: false,
    hits: {
      ...(track === false
        ? {}
        : { total: total > limit ? { value: limit, relation: 'gte' } : { value: total, relation: 'eq' } }),
      max_score: null,
      hits,
    },
  };
}

/** The fields of an event document (document.ts); strings also have their `.keyword` sub-field. */
const DOCUMENT_FIELDS: ReadonlyArray<readonly [string, 'date' | 'text']> = [
  ['@timestamp', 'date'],
  ['event.id', 'text'],
  ['event.type', 'text'],
  ['event.stream', 'text'],
  ['event.outcome', 'text'],
  ['actor.id', 'text'],
  ['actor.login', 'text'],
  ['subject.id', 'text'],
  ['subject.login', 'text'],
  ['source.ip', 'text'],
  ['user_agent.original', 'text'],
  ['request.id', 'text'],
  ['host.name', 'text'],
  ['service.name', 'text'],
];

/**
 * field_caps of the embedded audit log: the fields of the event document (`data.*` varies by event
 * type: GET /v3/logs/audit_log_types lists them). Nothing aggregates here (aggregations need the store).
 */
export function localFieldCaps(
  pattern: string,
  fields: string,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const errors: FieldError[] = Object.keys(body).map((key) => ({ location: 'body', path: key, message: NEEDS_STORE }));
  if (errors.length > 0) throw needsLogstore(errors);
  const wanted = fields.split(',').map((f) => wildcard(f.trim()));
  const caps: Record<string, unknown> = {};
  const add = (name: string, type: string) => {
    if (wanted.some((w) => w.test(name))) caps[name] = { [type]: { type, searchable: true, aggregatable: false } };
  };
  for (const [name, type] of DOCUMENT_FIELDS) {
    add(name, type);
    if (type === 'text') add(`${name}.keyword`, 'keyword');
  }
  return { indices: [pattern], fields: caps };
}

/**
 * The query side of the test log store (see server.ts): a faithful-enough evaluator of the
 * Elasticsearch/OpenSearch query DSL over in-memory documents, for the tests only. It implements
 * match_all, match, match_phrase, term, terms, range, exists, ids and bool (must, should, filter,
 * must_not, minimum_should_match), sort (with search_after), from/size, _source filtering,
 * track_total_hits, and the terms and date_histogram aggregations. Anything else is answered with
 * the store's own 400 (`parsing_exception`), as a real store answers an unknown query type.
 */

export type Doc = Record<string, unknown>;

export interface StoredDoc {
  index: string;
  id: string;
  source: Doc;
  /** Insertion order, the tiebreaker of equal sort keys. */
  seq: number;
}

/** A 400 of the store: its `error.type` and `reason`. */
export class StoreError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    reason: string,
  ) {
    super(reason);
  }
}

type Query = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a dotted field (`actor.login`) from a document; arrays yield all their values. */
export function fieldValues(doc: Doc, field: string): unknown[] {
  let values: unknown[] = [doc];
  for (const part of field.split('.')) {
    const next: unknown[] = [];
    for (const v of values) {
      if (isObject(v) && part in v) {
        const child = v[part];
        if (Array.isArray(child)) next.push(...child);
        else next.push(child);
      }
    }
    values = next;
  }
  return values.filter((v) => v !== null && v !== undefined);
}

/** Lower-case word tokens, as the standard analyser makes them. */
const tokens = (v: unknown): string[] =>
  String(v)
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/** `field.keyword` addresses the unanalysed value of `field`, as in the default dynamic mapping. */
const baseField = (field: string) => (field.endsWith('.keyword') ? field.slice(0, -'.keyword'.length) : field);

function single(q: unknown, name: string): [string, unknown] {
  if (!isObject(q) || Object.keys(q).length !== 1)
    throw new StoreError(400, 'parsing_exception', `[${name}] query malformed, expected one field`);
  const [field, spec] = Object.entries(q)[0]!;
  return [field, spec];
}

function compare(a: unknown, b: unknown): number {
  const na = toComparable(a);
  const nb = toComparable(b);
  if (typeof na === 'number' && typeof nb === 'number') return na - nb;
  return String(na) < String(nb) ? -1 : String(na) > String(nb) ? 1 : 0;
}

/** Numbers and ISO dates compare as numbers; anything else as strings. */
function toComparable(v: unknown): number | string {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v)) {
    const t = Date.parse(v);
    if (!Number.isNaN(t)) return t;
  }
  if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
  return String(v);
}

/** Resolves `now`, `now-1d` and `now-2h` date math; other values pass through. */
function dateMath(v: unknown, now: number): unknown {
  if (typeof v !== 'string' || !v.startsWith('now')) return v;
  const m = /^now(?:([+-])(\d+)([smhd]))?$/.exec(v);
  if (!m) throw new StoreError(400, 'parse_exception', `failed to parse date field [${v}]`);
  if (!m[1]) return now;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[3] as 's' | 'm' | 'h' | 'd'];
  return now + (m[1] === '-' ? -1 : 1) * Number(m[2]) * unit;
}

/** Whether `doc` matches query `q`. */
export function matches(doc: Doc, id: string, q: Query, now = Date.now()): boolean {
  const keys = Object.keys(q);
  if (keys.length !== 1) throw new StoreError(400, 'parsing_exception', 'a query must have exactly one type');
  const type = keys[0]!;
  const spec = q[type];
  switch (type) {
    case 'match_all':
      return true;
    case 'match': {
      const [field, s] = single(spec, type);
      const text = isObject(s) ? s.query : s;
      const operator = isObject(s) && s.operator === 'and' ? 'and' : 'or';
      const wanted = tokens(text);
      const have = new Set(fieldValues(doc, baseField(field)).flatMap(tokens));
      return operator === 'and' ? wanted.every((t) => have.has(t)) : wanted.some((t) => have.has(t));
    }
    case 'match_phrase': {
      const [field, s] = single(spec, type);
      const phrase = tokens(isObject(s) ? s.query : s).join(' ');
      return fieldValues(doc, baseField(field)).some((v) => ` ${tokens(v).join(' ')} `.includes(` ${phrase} `));
    }
    case 'term': {
      const [field, s] = single(spec, type);
      const value = isObject(s) ? s.value : s;
      return fieldValues(doc, baseField(field)).some((v) => v === value || String(v) === String(value));
    }
    case 'terms': {
      if (!isObject(spec)) throw new StoreError(400, 'parsing_exception', '[terms] query malformed');
      const entries = Object.entries(spec).filter(([k]) => k !== 'boost');
      const [field, values] = entries[0] ?? [];
      if (!field || !Array.isArray(values))
        throw new StoreError(400, 'parsing_exception', '[terms] query requires an array of values');
      const wanted = new Set(values.map(String));
      return fieldValues(doc, baseField(field)).some((v) => wanted.has(String(v)));
    }
    case 'range': {
      const [field, s] = single(spec, type);
      if (!isObject(s)) throw new StoreError(400, 'parsing_exception', '[range] query malformed');
      return fieldValues(doc, baseField(field)).some((v) => {
        if (s.gte !== undefined && compare(v, dateMath(s.gte, now)) < 0) return false;
        if (s.gt !== undefined && compare(v, dateMath(s.gt, now)) <= 0) return false;
        if (s.lte !== undefined && compare(v, dateMath(s.lte, now)) > 0) return false;
        if (s.lt !== undefined && compare(v, dateMath(s.lt, now)) >= 0) return false;
        return true;
      });
    }
    case 'exists': {
      if (!isObject(spec) || typeof spec.field !== 'string')
        throw new StoreError(400, 'parsing_exception', '[exists] requires a field');
      return fieldValues(doc, baseField(spec.field)).length > 0;
    }
    case 'ids': {
      if (!isObject(spec) || !Array.isArray(spec.values))
        throw new StoreError(400, 'parsing_exception', '[ids] requires values');
      return spec.values.map(String).includes(id);
    }
    case 'bool': {
      if (!isObject(spec)) throw new StoreError(400, 'parsing_exception', '[bool] query malformed');
      const list = (k: string): Query[] => {
        const v = spec[k];
        if (v === undefined) return [];
        return (Array.isArray(v) ? v : [v]) as Query[];
      };
      const must = [...list('must'), ...list('filter')];
      const should = list('should');
      if (!must.every((c) => matches(doc, id, c, now))) return false;
      if (list('must_not').some((c) => matches(doc, id, c, now))) return false;
      const minimum =
        spec.minimum_should_match !== undefined ? Number(spec.minimum_should_match) : must.length > 0 ? 0 : 1;
      if (should.length > 0 && should.filter((c) => matches(doc, id, c, now)).length < minimum) return false;
      return true;
    }
    default:
      throw new StoreError(400, 'parsing_exception', `unknown query [${type}]`);
  }
}

interface SortKey {
  field: string;
  order: 'asc' | 'desc';
}

function sortKeys(sort: unknown): SortKey[] {
  if (sort === undefined) return [];
  const list = Array.isArray(sort) ? sort : [sort];
  return list.map((s) => {
    if (typeof s === 'string') return { field: s, order: s === '_score' ? 'desc' : 'asc' };
    const [field, spec] = single(s, 'sort');
    const order = (isObject(spec) ? spec.order : spec) === 'desc' ? 'desc' : 'asc';
    return { field, order };
  });
}

function sortValue(d: StoredDoc, field: string): unknown {
  if (field === '_id') return d.id;
  if (field === '_doc' || field === '_score') return d.seq;
  const v = fieldValues(d.source, baseField(field))[0];
  return v === undefined ? null : toComparable(v);
}

function pickSource(source: Doc, filter: unknown): Doc | undefined {
  if (filter === false) return undefined;
  if (filter === undefined || filter === true) return source;
  const includes =
    Array.isArray(filter) || typeof filter === 'string'
      ? [filter].flat()
      : isObject(filter)
        ? [filter.includes ?? []].flat()
        : [];
  const excludes = isObject(filter) ? [filter.excludes ?? []].flat() : [];
  const pattern = (p: unknown) =>
    new RegExp(
      `^${String(p)
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')}(\\..*)?$`,
    );
  const out: Doc = {};
  const walk = (obj: Doc, prefix: string, target: Doc) => {
    for (const [k, v] of Object.entries(obj)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (excludes.some((e) => pattern(e).test(path))) continue;
      if (isObject(v)) {
        const child: Doc = {};
        walk(v, path, child);
        if (Object.keys(child).length > 0) target[k] = child;
      } else if (includes.length === 0 || includes.some((i) => pattern(i).test(path))) {
        target[k] = v;
      }
    }
  };
  walk(source, '', out);
  return out;
}

const INTERVALS: Record<string, number> = {
  minute: 60_000,
  '1m': 60_000,
  hour: 3_600_000,
  '1h': 3_600_000,
  day: 86_400_000,
  '1d': 86_400_000,
};

function aggregate(docs: StoredDoc[], aggs: unknown): Record<string, unknown> {
  if (!isObject(aggs)) throw new StoreError(400, 'parsing_exception', 'aggregations must be an object');
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(aggs)) {
    if (!isObject(spec)) throw new StoreError(400, 'parsing_exception', `aggregation [${name}] malformed`);
    if (isObject(spec.terms)) {
      const field = String(spec.terms.field);
      const size = Number(spec.terms.size ?? 10);
      const counts = new Map<string, number>();
      for (const d of docs)
        for (const v of new Set(fieldValues(d.source, baseField(field)).map(String)))
          counts.set(v, (counts.get(v) ?? 0) + 1);
      const buckets = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const shown = buckets.slice(0, size);
      out[name] = {
        doc_count_error_upper_bound: 0,
        sum_other_doc_count: buckets.slice(size).reduce((s, [, n]) => s + n, 0),
        buckets: shown.map(([key, doc_count]) => ({ key, doc_count })),
      };
    } else if (isObject(spec.date_histogram)) {
      const field = String(spec.date_histogram.field);
      const interval = String(
        spec.date_histogram.calendar_interval ?? spec.date_histogram.fixed_interval ?? spec.date_histogram.interval,
      );
      const step = INTERVALS[interval];
      if (!step) throw new StoreError(400, 'illegal_argument_exception', `unsupported interval [${interval}]`);
      const counts = new Map<number, number>();
      for (const d of docs) {
        const t = toComparable(fieldValues(d.source, field)[0]);
        if (typeof t !== 'number') continue;
        const key = Math.floor(t / step) * step;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      out[name] = {
        buckets: [...counts]
          .sort((a, b) => a[0] - b[0])
          .map(([key, doc_count]) => ({ key_as_string: new Date(key).toISOString(), key, doc_count })),
      };
    } else {
      throw new StoreError(400, 'parsing_exception', `unknown aggregation type in [${name}]`);
    }
  }
  return out;
}

const KNOWN = new Set(['match_all', 'match', 'match_phrase', 'term', 'terms', 'range', 'exists', 'ids', 'bool']);

/** Refuses an unknown query type anywhere in the tree, as the store does before running anything. */
function validateQuery(q: unknown): void {
  if (!isObject(q) || Object.keys(q).length !== 1)
    throw new StoreError(400, 'parsing_exception', 'a query must have exactly one type');
  const [type, spec] = Object.entries(q)[0]!;
  if (!KNOWN.has(type)) throw new StoreError(400, 'parsing_exception', `unknown query [${type}]`);
  if (type === 'bool' && isObject(spec)) {
    for (const k of ['must', 'filter', 'should', 'must_not']) {
      const v = spec[k];
      if (v !== undefined) for (const c of Array.isArray(v) ? v : [v]) validateQuery(c);
    }
  }
}

/** Runs a `_search` body over `docs` (already restricted to the target indices). */
export function search(docs: StoredDoc[], body: Record<string, unknown>, now = Date.now()): Record<string, unknown> {
  const query = (body.query ?? { match_all: {} }) as Query;
  validateQuery(query);
  let hits = docs.filter((d) => matches(d.source, d.id, query, now));
  const keys = sortKeys(body.sort);
  const ordered = keys.length ? keys : [{ field: '_doc', order: 'asc' as const }];
  hits.sort((a, b) => {
    for (const k of ordered) {
      const c = compare(sortValue(a, k.field), sortValue(b, k.field));
      if (c !== 0) return k.order === 'desc' ? -c : c;
    }
    return a.seq - b.seq;
  });
  const total = hits.length;
  const aggregations = body.aggs ?? body.aggregations;
  const aggs = aggregations !== undefined ? aggregate(hits, aggregations) : undefined;
  if (body.search_after !== undefined) {
    const after = body.search_after;
    if (!Array.isArray(after) || keys.length === 0 || after.length !== keys.length) {
      throw new StoreError(400, 'illegal_argument_exception', 'search_after needs a sort with as many values');
    }
    hits = hits.filter((d) => {
      for (const [i, k] of keys.entries()) {
        const c = compare(sortValue(d, k.field), toComparable(after[i]));
        if (c !== 0) return k.order === 'desc' ? c < 0 : c > 0;
      }
      return false;
    });
  }
  const from = Number(body.from ?? 0);
  const size = Number(body.size ?? 10);
  if (from + size > 10_000)
    throw new StoreError(
      400,
      'illegal_argument_exception',
      'Result window is too large, from + size must be less than or equal to: [10000]',
    );
  const page = hits.slice(from, from + size);
  const track = body.track_total_hits;
  const totalHits =
    track === false
      ? undefined
      : typeof track === 'number' && total > track
        ? { value: track, relation: 'gte' }
        : { value: total, relation: 'eq' };
  return {
    took: 1,
    timed_out: false,
    _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
    hits: {
      ...(totalHits ? { total: totalHits } : {}),
      max_score: null,
      hits: page.map((d) => ({
        _index: d.index,
        _id: d.id,
        _score: null,
        ...(pickSource(d.source, body._source) ? { _source: pickSource(d.source, body._source) } : {}),
        ...(keys.length ? { sort: keys.map((k) => sortValue(d, k.field)) } : {}),
      })),
    },
    ...(aggs ? { aggregations: aggs } : {}),
  };
}

/** The store's type name of a JSON value, as dynamic mapping would choose it. */
function typeOf(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? 'long' : 'float';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v))) return 'date';
  return 'text';
}

/** Answers `_field_caps` for `fields` (comma-separated, `*` wildcards) over `docs`. */
export function fieldCaps(docs: StoredDoc[], indices: string[], fields: string): Record<string, unknown> {
  const wanted = fields.split(',').map(
    (f) =>
      new RegExp(
        `^${f
          .trim()
          .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')}$`,
      ),
  );
  const types = new Map<string, Set<string>>();
  const visit = (obj: Doc, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (isObject(v)) {
        visit(v, path);
        continue;
      }
      const t = typeOf(Array.isArray(v) ? v[0] : v);
      const add = (p: string, type: string) => {
        if (!wanted.some((w) => w.test(p))) return;
        if (!types.has(p)) types.set(p, new Set());
        types.get(p)!.add(type);
      };
      add(path, t);
      if (t === 'text') add(`${path}.keyword`, 'keyword');
    }
  };
  for (const d of docs) visit(d.source, '');
  const out: Record<string, unknown> = {};
  for (const [field, set] of [...types].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    out[field] = Object.fromEntries(
      [...set].map((t) => [t, { type: t, searchable: true, aggregatable: t !== 'text' }]),
    );
  }
  return { indices, fields: out };
}

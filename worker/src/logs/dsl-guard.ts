/**
 * The allow-list of the logs endpoints' query DSL (architecture.md §5). The caller's body runs on one
 * stream's index pattern only, so it must not be able to reach another index or run code: every key
 * of the body, of each query and of each aggregation is checked against what is allowed, and the
 * first look at anything else is a refusal naming the key. An allow-list, not a deny-list: a query
 * type the store adds tomorrow is refused until someone decides it is safe.
 *
 * Refused on purpose, with a reason: scripts anywhere (`script`, `script_fields`, `runtime_mappings`,
 * `script_score`, `function_score`, scripted and bucket-script aggregations, `_script` sorts); lookups
 * that read other indices (terms lookup, `more_like_this`, `percolate`, indexed shapes); `pit`, `knn`,
 * `suggest`, `rescore`, `profile`, `explain`, `slice`, `stored_fields`, `docvalue_fields`; `wrapper`
 * (a base64 query that would hide everything else from this check).
 */
import type { FieldError } from '../http/problem.js';

/** The largest `from + size` (the store's own index.max_result_window default). */
export const MAX_RESULT_WINDOW = 10_000;
/** The largest `size` of a terms or composite aggregation, and of top_hits. */
export const MAX_AGG_SIZE = 1000;
export const MAX_TOP_HITS = 100;
/** Aggregations nest at most this deep. */
export const MAX_AGG_DEPTH = 3;

const REASONS: Record<string, string> = {
  script: 'scripts are not allowed',
  _script: 'script sorts are not allowed',
  script_fields: 'scripts are not allowed',
  runtime_mappings: 'runtime fields (scripts) are not allowed',
  script_score: 'scripts are not allowed',
  function_score: 'function_score may run scripts: not allowed',
  scripted_metric: 'scripted aggregations are not allowed',
  bucket_script: 'scripted aggregations are not allowed',
  bucket_selector: 'scripted aggregations are not allowed',
  more_like_this: 'more_like_this may read other indices: not allowed',
  percolate: 'percolate reads other indices: not allowed',
  geo_shape: 'geo_shape may read an indexed shape of another index: not allowed',
  pit: 'point-in-time searches are not allowed',
  knn: 'knn searches are not allowed',
  suggest: 'suggesters are not allowed',
  rescore: 'rescoring is not allowed',
  profile: 'profiling is not allowed',
  explain: 'explain is not allowed',
  slice: 'sliced searches are not allowed',
  stored_fields: 'stored_fields is not allowed (use _source)',
  docvalue_fields: 'docvalue_fields is not allowed (use _source)',
  wrapper: 'wrapper queries are not allowed',
  indices_boost: 'indices_boost names other indices: not allowed',
};

const SEARCH_KEYS = new Set([
  'query',
  'from',
  'size',
  'sort',
  '_source',
  'aggs',
  'aggregations',
  'track_total_hits',
  'search_after',
  'post_filter',
]);
const FIELD_CAPS_KEYS = new Set(['index_filter']);

type Check = (spec: unknown, path: string) => void;

class Guard {
  readonly errors: FieldError[] = [];
  refuse(path: string, message: string): void {
    this.errors.push({ location: 'body', path, message });
  }
  /** A key outside the allow-list: its own reason when we have one. */
  unknown(path: string, key: string, what: string): void {
    this.refuse(path, REASONS[key] ?? `${what} "${key}" is not allowed`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));

/** A field name: no wildcards into other documents' metadata, and a sane length. */
const FIELD = /^[\p{L}\p{N}@_.\-*]{1,256}$/u;

function checkQuery(g: Guard, q: unknown, path: string, depth = 0): void {
  if (depth > 20) {
    g.refuse(path, 'queries nest too deep (at most 20 levels)');
    return;
  }
  if (!isObject(q) || Object.keys(q).length !== 1) {
    g.refuse(path, 'a query is an object with exactly one query type');
    return;
  }
  const [type, spec] = Object.entries(q)[0]!;
  const at = join(path, type);
  const fieldQuery: Check = (s, p) => {
    if (!isObject(s) || Object.keys(s).length !== 1) {
      g.refuse(p, 'expected one field');
      return;
    }
    const [field, value] = Object.entries(s)[0]!;
    if (!FIELD.test(field)) g.refuse(join(p, field), 'not a field name');
    if (isObject(value)) {
      for (const k of Object.keys(value)) {
        if (
          ![
            'query',
            'value',
            'operator',
            'boost',
            'case_insensitive',
            'gte',
            'gt',
            'lte',
            'lt',
            'format',
            'time_zone',
            'minimum_should_match',
            'slop',
            'fuzziness',
          ].includes(k)
        ) {
          g.unknown(join(join(p, field), k), k, 'option');
        }
      }
    }
  };
  switch (type) {
    case 'match_all':
    case 'match_none':
      if (!isObject(spec) || Object.keys(spec).some((k) => k !== 'boost')) g.refuse(at, 'takes no options but boost');
      return;
    case 'match':
    case 'match_phrase':
    case 'match_phrase_prefix':
    case 'term':
    case 'prefix':
    case 'wildcard':
    case 'range':
    case 'fuzzy':
      fieldQuery(spec, at);
      return;
    case 'terms': {
      if (!isObject(spec)) {
        g.refuse(at, 'expected an object');
        return;
      }
      for (const [k, v] of Object.entries(spec)) {
        if (k === 'boost') continue;
        // A terms lookup ({"index": ..., "id": ..., "path": ...}) reads a document of another index.
        if (!Array.isArray(v))
          g.refuse(join(at, k), 'terms takes an array of values (terms lookup reads other indices: not allowed)');
        else if (v.length > 1024) g.refuse(join(at, k), 'at most 1024 values');
        else if (v.some((x) => isObject(x) || Array.isArray(x)))
          g.refuse(join(at, k), 'values must be strings, numbers or booleans');
      }
      return;
    }
    case 'exists':
      if (!isObject(spec) || typeof spec.field !== 'string' || Object.keys(spec).length !== 1)
        g.refuse(at, 'takes {"field": name}');
      return;
    case 'ids':
      if (!isObject(spec) || !Array.isArray(spec.values) || Object.keys(spec).length !== 1)
        g.refuse(at, 'takes {"values": [...]}');
      return;
    case 'multi_match':
    case 'simple_query_string': {
      if (!isObject(spec)) {
        g.refuse(at, 'expected an object');
        return;
      }
      const allowed = [
        'query',
        'fields',
        'operator',
        'default_operator',
        'type',
        'minimum_should_match',
        'boost',
        'flags',
        'analyze_wildcard',
        'lenient',
      ];
      for (const k of Object.keys(spec)) if (!allowed.includes(k)) g.unknown(join(at, k), k, 'option');
      if (typeof spec.query !== 'string') g.refuse(join(at, 'query'), 'a string');
      return;
    }
    case 'bool': {
      if (!isObject(spec)) {
        g.refuse(at, 'expected an object');
        return;
      }
      for (const [k, v] of Object.entries(spec)) {
        if (['must', 'filter', 'should', 'must_not'].includes(k)) {
          const list = Array.isArray(v) ? v : [v];
          for (const [i, c] of list.entries())
            checkQuery(g, c, Array.isArray(v) ? join(join(at, k), i) : join(at, k), depth + 1);
        } else if (!['minimum_should_match', 'boost'].includes(k)) g.unknown(join(at, k), k, 'bool option');
      }
      return;
    }
    case 'constant_score': {
      if (!isObject(spec) || !('filter' in spec)) {
        g.refuse(at, 'takes {"filter": query}');
        return;
      }
      for (const k of Object.keys(spec)) if (!['filter', 'boost'].includes(k)) g.unknown(join(at, k), k, 'option');
      checkQuery(g, spec.filter, join(at, 'filter'), depth + 1);
      return;
    }
    case 'dis_max': {
      if (!isObject(spec) || !Array.isArray(spec.queries)) {
        g.refuse(at, 'takes {"queries": [...]}');
        return;
      }
      for (const k of Object.keys(spec))
        if (!['queries', 'tie_breaker', 'boost'].includes(k)) g.unknown(join(at, k), k, 'option');
      for (const [i, c] of spec.queries.entries()) checkQuery(g, c, join(join(at, 'queries'), i), depth + 1);
      return;
    }
    default:
      g.unknown(at, type, 'query type');
  }
}

const METRICS = new Set(['min', 'max', 'avg', 'sum', 'value_count', 'stats', 'cardinality', 'missing']);
const BUCKETS = new Set([
  'terms',
  'date_histogram',
  'histogram',
  'range',
  'date_range',
  'filter',
  'filters',
  'top_hits',
  'composite',
]);
const AGG_OPTIONS = new Set([
  'field',
  'size',
  'order',
  'min_doc_count',
  'missing',
  'format',
  'calendar_interval',
  'fixed_interval',
  'interval',
  'time_zone',
  'extended_bounds',
  'ranges',
  'keyed',
  'offset',
  'precision_threshold',
  'sources',
  'after',
  '_source',
  'sort',
  'include',
  'exclude',
  'shard_size',
]);

function checkAggs(g: Guard, aggs: unknown, path: string, depth: number): void {
  if (depth > MAX_AGG_DEPTH) {
    g.refuse(path, `aggregations nest at most ${MAX_AGG_DEPTH} levels deep`);
    return;
  }
  if (!isObject(aggs)) {
    g.refuse(path, 'aggregations are an object of named aggregations');
    return;
  }
  for (const [name, agg] of Object.entries(aggs)) {
    const at = join(path, name);
    if (!isObject(agg)) {
      g.refuse(at, 'an aggregation is an object');
      continue;
    }
    const types = Object.keys(agg).filter((k) => k !== 'aggs' && k !== 'aggregations' && k !== 'meta');
    if (types.length !== 1) {
      g.refuse(at, 'an aggregation has exactly one type');
      continue;
    }
    const type = types[0]!;
    const spec = agg[type];
    const tat = join(at, type);
    if (!METRICS.has(type) && !BUCKETS.has(type)) g.unknown(tat, type, 'aggregation type');
    else if (type === 'filter') checkQuery(g, spec, tat);
    else if (type === 'filters') {
      const filters = isObject(spec) ? spec.filters : undefined;
      if (!isObject(filters) && !Array.isArray(filters)) g.refuse(tat, 'takes {"filters": {...}}');
      else for (const [k, q] of Object.entries(filters)) checkQuery(g, q, join(join(tat, 'filters'), k));
    } else if (!isObject(spec)) g.refuse(tat, 'expected an object');
    else {
      for (const k of Object.keys(spec)) if (!AGG_OPTIONS.has(k)) g.unknown(join(tat, k), k, 'aggregation option');
      const limit = type === 'top_hits' ? MAX_TOP_HITS : MAX_AGG_SIZE;
      if (
        spec.size !== undefined &&
        !(Number.isInteger(spec.size) && (spec.size as number) >= 0 && (spec.size as number) <= limit)
      ) {
        g.refuse(join(tat, 'size'), `an integer in 0..${limit}`);
      }
      if (type === 'composite' && Array.isArray(spec.sources)) {
        for (const [i, src] of spec.sources.entries()) {
          for (const [n, s] of Object.entries(isObject(src) ? src : {})) {
            const [t, o] = Object.entries(isObject(s) ? s : {})[0] ?? [];
            if (!t || !['terms', 'date_histogram', 'histogram'].includes(t))
              g.refuse(
                join(join(join(tat, 'sources'), i), n),
                'composite sources are terms, date_histogram or histogram',
              );
            else
              for (const k of Object.keys(isObject(o) ? o : {}))
                if (!AGG_OPTIONS.has(k))
                  g.unknown(join(join(join(tat, 'sources'), i), `${n}.${t}.${k}`), k, 'aggregation option');
          }
        }
      }
      if (type === 'top_hits' && spec.sort !== undefined) checkSort(g, spec.sort, join(tat, 'sort'));
    }
    const sub = agg.aggs ?? agg.aggregations;
    if (sub !== undefined) checkAggs(g, sub, join(at, agg.aggs !== undefined ? 'aggs' : 'aggregations'), depth + 1);
  }
}

function checkSort(g: Guard, sort: unknown, path: string): void {
  const list = Array.isArray(sort) ? sort : [sort];
  list.forEach((s, i) => {
    const at = Array.isArray(sort) ? join(path, i) : path;
    if (typeof s === 'string') {
      if (!FIELD.test(s)) g.refuse(at, 'not a field name');
      return;
    }
    if (!isObject(s) || Object.keys(s).length !== 1) {
      g.refuse(at, 'a sort is a field name or {field: order}');
      return;
    }
    const [field, spec] = Object.entries(s)[0]!;
    if (field === '_script') {
      g.unknown(join(at, field), field, 'sort');
      return;
    }
    if (!FIELD.test(field)) {
      g.refuse(join(at, field), 'not a field name');
      return;
    }
    if (typeof spec === 'string') {
      if (spec !== 'asc' && spec !== 'desc') g.refuse(join(at, field), 'asc or desc');
    } else if (isObject(spec)) {
      for (const k of Object.keys(spec))
        if (!['order', 'missing', 'unmapped_type', 'format', 'mode'].includes(k))
          g.unknown(join(join(at, field), k), k, 'sort option');
    } else g.refuse(join(at, field), 'asc, desc or {order: ...}');
  });
}

function checkSource(g: Guard, source: unknown, path: string): void {
  if (typeof source === 'boolean' || typeof source === 'string') return;
  if (Array.isArray(source)) {
    if (source.some((s) => typeof s !== 'string')) g.refuse(path, 'a list of field names');
    return;
  }
  if (isObject(source)) {
    for (const [k, v] of Object.entries(source)) {
      if (k !== 'includes' && k !== 'excludes') g.unknown(join(path, k), k, '_source option');
      else if (!(typeof v === 'string' || (Array.isArray(v) && v.every((s) => typeof s === 'string'))))
        g.refuse(join(path, k), 'a list of field names');
    }
    return;
  }
  g.refuse(path, 'true, false, a field list or {includes, excludes}');
}

/** Checks a `_search` body; returns every refused key (empty: the body may run). */
export function checkSearchBody(body: Record<string, unknown>): FieldError[] {
  const g = new Guard();
  for (const [key, value] of Object.entries(body)) {
    if (!SEARCH_KEYS.has(key)) {
      g.unknown(key, key, 'search option');
      continue;
    }
    switch (key) {
      case 'query':
      case 'post_filter':
        checkQuery(g, value, key);
        break;
      case 'aggs':
      case 'aggregations':
        checkAggs(g, value, key, 1);
        break;
      case 'sort':
        checkSort(g, value, key);
        break;
      case '_source':
        checkSource(g, value, key);
        break;
      case 'from':
      case 'size':
        if (!Number.isInteger(value) || (value as number) < 0) g.refuse(key, 'a non-negative integer');
        break;
      case 'track_total_hits':
        if (typeof value !== 'boolean' && !(Number.isInteger(value) && (value as number) >= 0))
          g.refuse(key, 'true, false or a non-negative integer');
        break;
      case 'search_after':
        if (!Array.isArray(value) || value.length > 8 || value.some((v) => isObject(v) || Array.isArray(v)))
          g.refuse(key, 'a list of at most 8 sort values');
        break;
    }
  }
  const from = Number.isInteger(body.from) ? (body.from as number) : 0;
  const size = Number.isInteger(body.size) ? (body.size as number) : 10;
  if (from + size > MAX_RESULT_WINDOW)
    g.refuse(
      body.from !== undefined ? 'from' : 'size',
      `from + size must be at most ${MAX_RESULT_WINDOW}; page further with search_after`,
    );
  return g.errors;
}

/** Checks a `_field_caps` body (only `index_filter`, a query). */
export function checkFieldCapsBody(body: Record<string, unknown>): FieldError[] {
  const g = new Guard();
  for (const [key, value] of Object.entries(body)) {
    if (!FIELD_CAPS_KEYS.has(key)) g.unknown(key, key, 'field_caps option');
    else checkQuery(g, value, key);
  }
  return g.errors;
}

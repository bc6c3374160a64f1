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
 *
 * Every value is looked into, not only the keys the store is known to read: an option takes a
 * string, number or boolean unless it is one of the structured ones checked here (ranges, order,
 * bounds, ...); `aggs` and `aggregations` together are refused (the store reads one of them); a
 * key's reason is looked up among own properties only (`constructor` is just an unknown key).
 */
import type { FieldError } from '../http/problem.js';

/** The largest `from + size` (the store's own index.max_result_window default). */
export const MAX_RESULT_WINDOW = 10_000;
/** The largest `size` of a terms or composite aggregation, and of top_hits. */
export const MAX_AGG_SIZE = 1000;
export const MAX_TOP_HITS = 100;
/** Aggregations nest at most this deep. */
export const MAX_AGG_DEPTH = 3;

const REASONS: Readonly<Record<string, string>> = {
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

/** The reason a key is refused on purpose, if it has one (own properties only: never Object.prototype's). */
function reasonOf(key: string): string | undefined {
  return Object.hasOwn(REASONS, key) ? REASONS[key] : undefined;
}

class Guard {
  readonly errors: FieldError[] = [];
  refuse(path: string, message: string): void {
    this.errors.push({ location: 'json', path, message });
  }
  /** A key outside the allow-list: its own reason when we have one. */
  unknown(path: string, key: string, what: string): void {
    this.refuse(path, reasonOf(key) ?? `${what} "${key}" is not allowed`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
/** A plain value: what every option takes unless it is one of the structured ones. */
const isScalar = (v: unknown): v is string | number | boolean | null =>
  v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const SCALAR = 'a string, number or boolean';

/** Refuses every key of `spec` but `allowed`, and every value of those that is not a plain value. */
function scalarOptions(
  g: Guard,
  spec: Record<string, unknown>,
  path: string,
  allowed: readonly string[],
  what: string,
) {
  for (const [k, v] of Object.entries(spec)) {
    if (!allowed.includes(k)) g.unknown(join(path, k), k, what);
    else if (!isScalar(v)) g.refuse(join(path, k), SCALAR);
  }
}

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
    if (!isObject(value)) {
      if (!isScalar(value)) g.refuse(join(p, field), SCALAR);
    } else {
      for (const [k, v] of Object.entries(value)) {
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
        } else if (!isScalar(v)) g.refuse(join(join(p, field), k), SCALAR);
      }
    }
  };
  switch (type) {
    case 'match_all':
    case 'match_none':
      if (!isObject(spec) || Object.entries(spec).some(([k, v]) => k !== 'boost' || typeof v !== 'number'))
        g.refuse(at, 'takes no options but boost');
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
        if (k === 'boost') {
          if (typeof v !== 'number') g.refuse(join(at, k), 'a number');
          continue;
        }
        // A terms lookup ({"index": ..., "id": ..., "path": ...}) reads a document of another index.
        if (!Array.isArray(v))
          g.refuse(join(at, k), 'terms takes an array of values (terms lookup reads other indices: not allowed)');
        else if (v.length > 1024) g.refuse(join(at, k), 'at most 1024 values');
        else if (!v.every(isScalar)) g.refuse(join(at, k), 'values must be strings, numbers or booleans');
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
      else if (spec.values.length > 1024 || !spec.values.every((v) => typeof v === 'string'))
        g.refuse(join(at, 'values'), 'at most 1024 ids (strings)');
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
      const { fields, ...rest } = spec;
      scalarOptions(g, rest, at, allowed, 'option');
      if (
        fields !== undefined &&
        typeof fields !== 'string' &&
        !(Array.isArray(fields) && fields.every((f) => typeof f === 'string'))
      )
        g.refuse(join(at, 'fields'), 'a list of field names');
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
        else if (!isScalar(v)) g.refuse(join(at, k), SCALAR);
      }
      return;
    }
    case 'constant_score': {
      if (!isObject(spec) || !Object.hasOwn(spec, 'filter')) {
        g.refuse(at, 'takes {"filter": query}');
        return;
      }
      const { filter, ...rest } = spec;
      scalarOptions(g, rest, at, ['boost'], 'option');
      checkQuery(g, filter, join(at, 'filter'), depth + 1);
      return;
    }
    case 'dis_max': {
      if (!isObject(spec) || !Array.isArray(spec.queries)) {
        g.refuse(at, 'takes {"queries": [...]}');
        return;
      }
      const { queries, ...rest } = spec;
      scalarOptions(g, rest, at, ['tie_breaker', 'boost'], 'option');
      for (const [i, c] of (queries as unknown[]).entries()) checkQuery(g, c, join(join(at, 'queries'), i), depth + 1);
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

/** Options that take a structure rather than a plain value, each checked by its own shape. */
const STRUCTURED_OPTIONS = new Set(['order', 'extended_bounds', 'ranges', 'sources', 'after', '_source', 'sort']);
const ORDER_KEY = /^(_count|_key|_term|[\p{L}\p{N}@_.>\-[\]]{1,256})$/u;

/** `terms.order` and the like: {key: asc|desc} or a list of them; keys are _count, _key or a sub-aggregation. */
function checkOrder(g: Guard, order: unknown, path: string): void {
  const list = Array.isArray(order) ? order : [order];
  list.forEach((o, i) => {
    const at = Array.isArray(order) ? join(path, i) : path;
    if (!isObject(o)) {
      g.refuse(at, 'an order is {"_count" | "_key" | sub-aggregation: "asc" | "desc"}');
      return;
    }
    for (const [k, v] of Object.entries(o)) {
      if (!ORDER_KEY.test(k) || (k.startsWith('_') && !['_count', '_key', '_term'].includes(k)))
        g.unknown(join(at, k), k, 'order key');
      else if (v !== 'asc' && v !== 'desc') g.refuse(join(at, k), 'asc or desc');
    }
  });
}

/** Each key of `spec` (an aggregation's body) against the allow-list, and each value against its shape. */
function checkAggOptions(g: Guard, type: string, spec: Record<string, unknown>, path: string): void {
  for (const [k, v] of Object.entries(spec)) {
    const at = join(path, k);
    if (!AGG_OPTIONS.has(k)) {
      g.unknown(at, k, 'aggregation option');
      continue;
    }
    if (!STRUCTURED_OPTIONS.has(k)) {
      if (k === 'include' || k === 'exclude') {
        const ok =
          isScalar(v) ||
          (Array.isArray(v) && v.every(isScalar)) ||
          (isObject(v) &&
            Object.entries(v).every(
              ([pk, pv]) => ['partition', 'num_partitions'].includes(pk) && typeof pv === 'number',
            ));
        if (!ok) g.refuse(at, 'a pattern, a list of values or {partition, num_partitions}');
      } else if (!isScalar(v)) g.refuse(at, SCALAR);
      continue;
    }
    switch (k) {
      case 'order':
        checkOrder(g, v, at);
        break;
      case 'extended_bounds':
        if (!isObject(v)) g.refuse(at, 'takes {"min": ..., "max": ...}');
        else scalarOptions(g, v, at, ['min', 'max'], 'bound');
        break;
      case 'ranges':
        if (!Array.isArray(v) || v.length > 100) g.refuse(at, 'a list of at most 100 ranges');
        else
          v.forEach((r, i) => {
            if (!isObject(r)) g.refuse(join(at, i), 'a range is {"from", "to", "key"}');
            else scalarOptions(g, r, join(at, i), ['from', 'to', 'key', 'mask'], 'range option');
          });
        break;
      case 'after':
        if (!isObject(v)) g.refuse(at, 'the after_key of a previous page');
        else for (const [ak, av] of Object.entries(v)) if (!isScalar(av)) g.refuse(join(at, ak), SCALAR);
        break;
      case '_source':
        checkSource(g, v, at);
        break;
      case 'sort':
        checkSort(g, v, at);
        break;
      case 'sources':
        if (type !== 'composite') g.refuse(at, 'sources belong to a composite aggregation');
        else checkCompositeSources(g, v, at);
        break;
    }
  }
}

/** A composite's sources: a list of {name: {type: options}}, one name and one type each. */
function checkCompositeSources(g: Guard, sources: unknown, path: string): void {
  if (!Array.isArray(sources) || sources.length > 16) {
    g.refuse(path, 'a list of at most 16 sources');
    return;
  }
  sources.forEach((src, i) => {
    const at = join(path, i);
    if (!isObject(src) || Object.keys(src).length !== 1) {
      g.refuse(at, 'a source is {name: {terms | date_histogram | histogram: {...}}}');
      return;
    }
    const [name, s] = Object.entries(src)[0]!;
    const nat = join(at, name);
    if (!isObject(s) || Object.keys(s).length !== 1) {
      g.refuse(nat, 'a source has exactly one type: terms, date_histogram or histogram');
      return;
    }
    const [t, o] = Object.entries(s)[0]!;
    if (!['terms', 'date_histogram', 'histogram'].includes(t))
      g.refuse(nat, 'composite sources are terms, date_histogram or histogram');
    else if (!isObject(o)) g.refuse(join(nat, t), 'expected an object');
    else checkAggOptions(g, t, o, join(nat, t));
  });
}

/** An aggregation's `meta`: returned as it is by the store; plain values only. */
function checkMeta(g: Guard, meta: unknown, path: string): void {
  if (!isObject(meta)) {
    g.refuse(path, 'meta is an object of plain values');
    return;
  }
  for (const [k, v] of Object.entries(meta)) if (!isScalar(v)) g.refuse(join(path, k), SCALAR);
}

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
    if (Object.hasOwn(agg, 'aggs') && Object.hasOwn(agg, 'aggregations')) {
      g.refuse(at, 'aggs and aggregations together: use one of them');
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
      if (!isObject(spec) || (!isObject(filters) && !Array.isArray(filters))) g.refuse(tat, 'takes {"filters": {...}}');
      else {
        const { filters: _, ...rest } = spec;
        scalarOptions(g, rest, tat, ['other_bucket', 'other_bucket_key'], 'filters option');
        for (const [k, q] of Object.entries(filters)) checkQuery(g, q, join(join(tat, 'filters'), k));
      }
    } else if (!isObject(spec)) g.refuse(tat, 'expected an object');
    else {
      checkAggOptions(g, type, spec, tat);
      const limit = type === 'top_hits' ? MAX_TOP_HITS : MAX_AGG_SIZE;
      if (
        spec.size !== undefined &&
        !(Number.isInteger(spec.size) && (spec.size as number) >= 0 && (spec.size as number) <= limit)
      ) {
        g.refuse(join(tat, 'size'), `an integer in 0..${limit}`);
      }
    }
    if (Object.hasOwn(agg, 'meta')) checkMeta(g, agg.meta, join(at, 'meta'));
    if (Object.hasOwn(agg, 'aggs')) checkAggs(g, agg.aggs, join(at, 'aggs'), depth + 1);
    else if (Object.hasOwn(agg, 'aggregations')) checkAggs(g, agg.aggregations, join(at, 'aggregations'), depth + 1);
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
      scalarOptions(g, spec, join(at, field), ['order', 'missing', 'unmapped_type', 'format', 'mode'], 'sort option');
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
        // The store reads one of them: both would leave the other unchecked by the store's choice.
        if (key === 'aggregations' && Object.hasOwn(body, 'aggs'))
          g.refuse(key, 'aggs and aggregations together: use one');
        else checkAggs(g, value, key, 1);
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

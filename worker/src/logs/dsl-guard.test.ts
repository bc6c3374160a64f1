import { describe, expect, it } from 'vitest';
import { checkFieldCapsBody, checkSearchBody } from './dsl-guard.js';

const paths = (body: Record<string, unknown>) => checkSearchBody(body).map((e) => e.path);

describe('checkSearchBody', () => {
  it('looks into every value: both spellings, second composite types, ranges, order, filters, meta, options', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ aggs: { x: { terms: { field: 'a' }, aggs: {}, aggregations: { c: { scripted_metric: {} } } } } }, 'aggs.x'],
      [{ aggs: { x: { min: { field: 'a' } } }, aggregations: { y: { min: { field: 'b' } } } }, 'aggregations'],
      [
        { aggs: { c: { composite: { sources: [{ s: { terms: { field: 'a' }, histogram: { script: 'x' } } }] } } } },
        'aggs.c.composite.sources.0.s',
      ],
      [
        { aggs: { c: { composite: { sources: [{ s: { terms: { field: 'a', script: 'x' } } }] } } } },
        'aggs.c.composite.sources.0.s.terms.script',
      ],
      [{ aggs: { r: { range: { field: 'n', ranges: [{ from: 1, script: 'x' }] } } } }, 'aggs.r.range.ranges.0.script'],
      [{ aggs: { t: { terms: { field: 'a', order: { _script: 'asc' } } } } }, 'aggs.t.terms.order._script'],
      [{ aggs: { t: { terms: { field: 'a', order: [{ _count: { script: 'x' } }] } } } }, 'aggs.t.terms.order.0._count'],
      [{ aggs: { f: { filters: { filters: { a: { match_all: {} } }, script: 'x' } } } }, 'aggs.f.filters.script'],
      [{ aggs: { m: { min: { field: 'n' }, meta: { a: { script: 'x' } } } } }, 'aggs.m.meta.a'],
      [{ aggs: { m: { min: { field: { script: 'x' } } } } }, 'aggs.m.min.field'],
      [{ aggs: { m: { terms: { field: 'a', include: { script: 'x' } } } } }, 'aggs.m.terms.include'],
      [{ query: { match: { f: { query: { script: 'x' } } } } }, 'query.match.f.query'],
      [{ query: { ids: { values: [['x']] } } }, 'query.ids.values'],
      [
        { query: { constant_score: { filter: { match_all: {} }, boost: { script: 'x' } } } },
        'query.constant_score.boost',
      ],
      [{ sort: [{ f: { order: 'asc', missing: { script: 'x' } } }] }, 'sort.0.f.missing'],
    ];
    for (const [body, path] of cases) expect(paths(body), JSON.stringify(body)).toEqual([path]);
  });

  it('looks reasons up among own properties only (no prototype member answers)', () => {
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const errors = checkSearchBody(JSON.parse(`{"query":{"${key}":{}},"${key}":1}`));
      expect(errors.map((e) => e.message)).toEqual([
        `query type "${key}" is not allowed`,
        `search option "${key}" is not allowed`,
      ]);
    }
    expect(checkSearchBody({ query: { constant_score: {} } }).map((e) => e.path)).toEqual(['query.constant_score']);
  });

  it('lets an auditor query through: bool, term(s), match, range, exists, sort, paging, _source, aggregations', () => {
    expect(
      checkSearchBody({
        query: {
          bool: {
            filter: [
              { term: { 'event.outcome': 'failure' } },
              { range: { '@timestamp': { gte: 'now-1d', lt: 'now' } } },
            ],
            must: { match: { 'actor.login': { query: 'alice', operator: 'and' } } },
            should: [{ terms: { 'event.type': ['login.failed', 'login.locked'] } }, { exists: { field: 'source.ip' } }],
            must_not: [{ match_phrase: { 'data.reason': 'admin' } }],
            minimum_should_match: 1,
          },
        },
        sort: [{ '@timestamp': { order: 'desc' } }, 'event.id'],
        from: 0,
        size: 50,
        _source: { includes: ['event.*', 'actor.*'], excludes: ['data'] },
        track_total_hits: true,
        search_after: ['2026-11-26T10:00:00Z', 'e1'],
        aggs: {
          per_type: {
            terms: { field: 'event.type', size: 20 },
            aggs: { per_day: { date_histogram: { field: '@timestamp', calendar_interval: 'day' } } },
          },
          users: { cardinality: { field: 'actor.login' } },
        },
      }),
    ).toEqual([]);
  });

  it.each([
    [{ script_fields: { x: { script: '1' } } }, 'script_fields', 'scripts'],
    [{ runtime_mappings: {} }, 'runtime_mappings', 'runtime fields'],
    [{ query: { script: { script: { source: 'true' } } } }, 'query.script', 'scripts'],
    [{ query: { script_score: { query: { match_all: {} }, script: 'x' } } }, 'query.script_score', 'scripts'],
    [{ query: { function_score: {} } }, 'query.function_score', 'scripts'],
    [{ query: { bool: { filter: [{ script: {} }] } } }, 'query.bool.filter.0.script', 'scripts'],
    [{ query: { terms: { user: { index: 'secrets', id: '1', path: 'x' } } } }, 'query.terms.user', 'other indices'],
    [
      { query: { more_like_this: { like: [{ _index: 'secrets', _id: '1' }] } } },
      'query.more_like_this',
      'other indices',
    ],
    [{ query: { percolate: { field: 'q', index: 'secrets', id: '1' } } }, 'query.percolate', 'other indices'],
    [
      { query: { geo_shape: { location: { indexed_shape: { index: 'shapes', id: '1' } } } } },
      'query.geo_shape',
      'indexed shape',
    ],
    [{ query: { wrapper: { query: 'eyJtYXRjaF9hbGwiOnt9fQ==' } } }, 'query.wrapper', 'wrapper'],
    [{ aggs: { x: { scripted_metric: {} } } }, 'aggs.x.scripted_metric', 'scripted'],
    [
      { aggs: { x: { terms: { field: 'a' }, aggs: { y: { bucket_script: {} } } } } },
      'aggs.x.aggs.y.bucket_script',
      'scripted',
    ],
    [{ aggs: { x: { terms: { field: 'a', script: 'x' } } } }, 'aggs.x.terms.script', 'scripts'],
    [{ sort: [{ _script: { script: 'x' } }] }, 'sort.0._script', 'script sorts'],
    [{ pit: { id: 'x' } }, 'pit', 'point-in-time'],
    [{ knn: {} }, 'knn', 'knn'],
    [{ suggest: {} }, 'suggest', 'suggesters'],
    [{ rescore: {} }, 'rescore', 'rescoring'],
    [{ profile: true }, 'profile', 'profiling'],
    [{ explain: true }, 'explain', 'explain'],
    [{ slice: { id: 0, max: 2 } }, 'slice', 'sliced'],
    [{ stored_fields: ['x'] }, 'stored_fields', 'stored_fields'],
    [{ docvalue_fields: ['x'] }, 'docvalue_fields', 'docvalue_fields'],
    [{ indices_boost: [{ secrets: 2 }] }, 'indices_boost', 'other indices'],
    [{ highlight: {} }, 'highlight', 'not allowed'],
  ])('refuses %j at %s', (body, path, reason) => {
    const errors = checkSearchBody(body as Record<string, unknown>);
    expect(errors.map((e) => e.path)).toContain(path);
    expect(errors.find((e) => e.path === path)!.message).toContain(reason);
  });

  it('bounds from + size, aggregation sizes and nesting', () => {
    expect(paths({ from: 9_990, size: 20 })).toEqual(['from']);
    expect(paths({ size: 10_001 })).toEqual(['size']);
    expect(paths({ from: 9_990, size: 10 })).toEqual([]);
    expect(paths({ aggs: { a: { terms: { field: 'x', size: 100_000 } } } })).toEqual(['aggs.a.terms.size']);
    expect(paths({ aggs: { a: { top_hits: { size: 500 } } } })).toEqual(['aggs.a.top_hits.size']);
    const deep = {
      a: {
        terms: { field: 'x' },
        aggs: {
          b: { terms: { field: 'y' }, aggs: { c: { terms: { field: 'z' }, aggs: { d: { terms: { field: 'w' } } } } } },
        },
      },
    };
    expect(paths({ aggs: deep })).toEqual(['aggs.a.aggs.b.aggs.c.aggs']);
  });

  it('reports every refused key at once', () => {
    expect(
      paths({ script_fields: {}, pit: {}, query: { bool: { must: [{ percolate: {} }, { term: { a: 1 } }] } } }),
    ).toEqual(['script_fields', 'pit', 'query.bool.must.0.percolate']);
  });
});

describe('checkFieldCapsBody', () => {
  it('takes only an index_filter query, itself checked', () => {
    expect(checkFieldCapsBody({ index_filter: { range: { '@timestamp': { gte: 'now-1d' } } } })).toEqual([]);
    expect(checkFieldCapsBody({ index_filter: { script: {} } }).map((e) => e.path)).toEqual(['index_filter.script']);
    expect(checkFieldCapsBody({ runtime_mappings: {} }).map((e) => e.path)).toEqual(['runtime_mappings']);
  });
});

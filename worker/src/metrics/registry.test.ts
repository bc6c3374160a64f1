import { describe, expect, it } from 'vitest';
import { assertExpositionFormat, histogramOf, parseExposition, sampleValue } from '../../../test/harness/prometheus.js';
import { Counter, Histogram, Registry, escapeLabelValue, formatValue, renderExposition } from './registry.js';

describe('metrics registry', () => {
  it('renders counters and gauges with HELP and TYPE, one line per label set', () => {
    const r = new Registry();
    const c = r.counter('t_requests_total', 'requests', ['route', 'status']);
    c.inc(['/a', '200']);
    c.inc(['/a', '200']);
    c.inc(['/b/:id', '404'], 3);
    r.gauge('t_up', 'up').set([], 1);
    const text = renderExposition([r]);
    expect(text).toBe(
      [
        '# HELP t_requests_total requests',
        '# TYPE t_requests_total counter',
        't_requests_total{route="/a",status="200"} 2',
        't_requests_total{route="/b/:id",status="404"} 3',
        '# HELP t_up up',
        '# TYPE t_up gauge',
        't_up 1',
        '',
      ].join('\n'),
    );
    const families = parseExposition(text);
    expect(sampleValue(families, 't_requests_total', { route: '/b/:id', status: '404' })).toBe(3);
  });

  it('escapes backslash, double quote and line feed in label values, and backslash and line feed in HELP', () => {
    const r = new Registry();
    const g = r.gauge('t_escaped', 'help with \\ and\nnew line', ['v']);
    const odd = 'a\\b"c\nd';
    g.set([odd], 1);
    const text = renderExposition([r]);
    expect(text).toContain('t_escaped{v="a\\\\b\\"c\\nd"} 1');
    expect(text).toContain('# HELP t_escaped help with \\\\ and\\nnew line');
    // The parser reads the value back as it was.
    expect(sampleValue(parseExposition(text), 't_escaped', { v: odd })).toBe(1);
    expect(escapeLabelValue('plain')).toBe('plain');
  });

  it('writes special values as the format names them', () => {
    expect([Infinity, -Infinity, NaN, 0.25, 3].map(formatValue)).toEqual(['+Inf', '-Inf', 'NaN', '0.25', '3']);
  });

  it('histograms: fixed buckets, cumulative counts, +Inf, sum and count', () => {
    const r = new Registry();
    const h = r.histogram('t_seconds', 'latency', ['route'], [0.1, 0.5, 1]);
    for (const v of [0.05, 0.1, 0.3, 0.7, 2]) h.observe(['/x'], v);
    const text = renderExposition([r]);
    expect(text).toContain('t_seconds_bucket{route="/x",le="0.1"} 2');
    expect(text).toContain('t_seconds_bucket{route="/x",le="0.5"} 3');
    expect(text).toContain('t_seconds_bucket{route="/x",le="1"} 4');
    expect(text).toContain('t_seconds_bucket{route="/x",le="+Inf"} 5');
    expect(text).toContain('t_seconds_count{route="/x"} 5');
    const parsed = histogramOf(text, 't_seconds', { route: '/x' });
    expect(parsed).toMatchObject({ count: 5, buckets: { '0.1': 2, '0.5': 3, '1': 4 } });
    expect(parsed!.sum).toBeCloseTo(3.15);
    expect(h.count(['/x'])).toBe(5);
  });

  it('refuses bad names, reserved labels, wrong label counts, decreasing counters and unsorted buckets', () => {
    expect(() => new Counter('bad-name', 'x')).toThrow(/metric name/);
    expect(() => new Counter('ok_total', 'x', ['__reserved'])).toThrow(/label name/);
    expect(() => new Counter('ok_total', 'x', ['le'])).toThrow(/label name/);
    expect(() => new Counter('ok_total', 'x', ['a', 'a'])).toThrow(/repeated/);
    const c = new Counter('ok_total', 'x', ['a']);
    expect(() => c.inc([])).toThrow(/1 label values/);
    expect(() => c.inc(['x'], -1)).toThrow(/only goes up/);
    expect(() => new Histogram('h', 'x', [], [1, 0.5])).toThrow(/increasing/);
    const r = new Registry();
    r.counter('once_total', 'x');
    expect(() => r.counter('once_total', 'x')).toThrow(/twice/);
  });

  it('the strict check refuses what the format does not allow', () => {
    expect(() => assertExpositionFormat('# TYPE a counter\na{l="x"} 1\n')).not.toThrow();
    expect(() => assertExpositionFormat('# TYPE a counter\na{l="x\ny"} 1\n')).toThrow();
    expect(() => assertExpositionFormat('# TYPE a counter\na{l="x"y"} 1\n')).toThrow();
    expect(() => assertExpositionFormat('# TYPE a counter\na 1')).toThrow(/line feed/);
    expect(() => assertExpositionFormat('b 1\n')).toThrow(/outside/);
    expect(() => assertExpositionFormat('# TYPE a counter\na one\n')).toThrow(/not a sample/);
  });
});

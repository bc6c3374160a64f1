/**
 * A small Prometheus registry (architecture.md §7): counters, gauges and histograms with fixed
 * buckets, rendered in the text exposition format 0.0.4. Written here because prom-client (and
 * @hono/prometheus over it) imports Node modules, and worker code must run in workerd too.
 * Recording is an integer increment into a map entry made at the first use of a label set, so the
 * per-request cost is a string key and a lookup.
 */

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The content type of the text exposition format. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Escapes a label value: backslash, double quote and line feed (format 0.0.4). */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (ch) => (ch === '\\' ? '\\\\' : ch === '"' ? '\\"' : '\\n'));
}

/** Escapes HELP text: backslash and line feed. */
function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (ch) => (ch === '\\' ? '\\\\' : '\\n'));
}

/** A sample value as the format writes it (+Inf, -Inf, NaN, or a Go-style float). */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts = names.map((n, i) => `${n}="${escapeLabelValue(values[i] ?? '')}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

type Kind = 'counter' | 'gauge' | 'histogram';

/** What every metric shares: its name, help, type and label names, checked once at creation. */
abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly kind: Kind,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
    for (const l of labelNames) {
      if (!LABEL.test(l) || l.startsWith('__') || l === 'le') throw new Error(`bad label name ${l} of ${name}`);
    }
    if (new Set(labelNames).size !== labelNames.length) throw new Error(`repeated label name in ${name}`);
  }

  protected key(values: readonly string[]): string {
    if (values.length !== this.labelNames.length) {
      throw new Error(`${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
    }
    // NUL cannot appear in the values this service records (routes, enums), so keys do not collide.
    return values.length === 1 ? values[0]! : values.join('\u0000');
  }

  /** The sample lines of this metric (without HELP and TYPE). */
  abstract samples(): string[];

  /** HELP, TYPE and the samples. */
  render(): string {
    const lines = [
      `# HELP ${this.name} ${escapeHelp(this.help)}`,
      `# TYPE ${this.name} ${this.kind}`,
      ...this.samples(),
    ];
    return lines.join('\n');
  }
}

interface Series {
  values: readonly string[];
  value: number;
}

/** Values per label set (counters and gauges). */
abstract class ScalarMetric extends Metric {
  protected readonly series = new Map<string, Series>();

  protected entry(values: readonly string[]): Series {
    const key = this.key(values);
    let s = this.series.get(key);
    if (!s) {
      s = { values: [...values], value: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  /**
   * The series of a label set, made at its first use, for hot paths that keep it: adding to its
   * `value` then costs no key and no lookup.
   */
  seriesOf(values: readonly string[]): Series {
    return this.entry(values);
  }

  /** The current value of a label set (0 when never recorded). */
  get(values: readonly string[] = []): number {
    return this.series.get(this.key(values))?.value ?? 0;
  }

  samples(): string[] {
    return [...this.series.values()].map(
      (s) => `${this.name}${labelText(this.labelNames, s.values)} ${formatValue(s.value)}`,
    );
  }
}

/** A monotonically increasing count. */
export class Counter extends ScalarMetric {
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, 'counter', labelNames);
  }

  /** Adds `by` (default 1; never negative) to the count of a label set. */
  inc(values: readonly string[] = [], by = 1): void {
    if (!(by >= 0)) throw new Error(`${this.name}: a counter only goes up`);
    this.entry(values).value += by;
  }

  /** Sets a count read elsewhere (a counter kept in the database, collected at scrape time). */
  setTotal(values: readonly string[], total: number): void {
    this.entry(values).value = total;
  }
}

/** A value that goes up and down. */
export class Gauge extends ScalarMetric {
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, 'gauge', labelNames);
  }

  /** Sets the value of a label set. */
  set(values: readonly string[], value: number): void {
    this.entry(values).value = value;
  }
}

/** The buckets of one label set of a histogram. */
export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;

  constructor(
    readonly values: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Counts one observation. */
  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
  }
}

/** Latency buckets in seconds, from 5 ms to 10 s. */
export const LATENCY_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Observations counted in fixed buckets, with their sum and count. */
export class Histogram extends Metric {
  private readonly series = new Map<string, HistogramSeries>();
  private readonly bounds: readonly number[];
  private readonly le: readonly string[];

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    buckets: readonly number[] = LATENCY_BUCKETS,
  ) {
    super(name, help, 'histogram', labelNames);
    if (buckets.length === 0 || buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))) {
      throw new Error(`${name}: buckets must be finite and increasing`);
    }
    this.bounds = [...buckets];
    this.le = [...buckets.map(formatValue), '+Inf'];
  }

  /** The series of a label set, made at its first use (hot paths keep it and call its observe). */
  seriesOf(values: readonly string[]): HistogramSeries {
    const key = this.key(values);
    let s = this.series.get(key);
    if (!s) {
      s = new HistogramSeries([...values], this.bounds);
      this.series.set(key, s);
    }
    return s;
  }

  /** Counts one observation of a label set. */
  observe(values: readonly string[], value: number): void {
    this.seriesOf(values).observe(value);
  }

  /** The number of observations of a label set. */
  count(values: readonly string[] = []): number {
    const s = this.series.get(this.key(values));
    return s ? s.counts.reduce((a, b) => a + b, 0) : 0;
  }

  samples(): string[] {
    const lines: string[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.le.length; i++) {
        cumulative += s.counts[i]!;
        lines.push(
          `${this.name}_bucket${labelText(this.labelNames, s.values, `le="${this.le[i]}"`)} ${formatValue(cumulative)}`,
        );
      }
      const labels = labelText(this.labelNames, s.values);
      lines.push(
        `${this.name}_sum${labels} ${formatValue(s.sum)}`,
        `${this.name}_count${labels} ${formatValue(cumulative)}`,
      );
    }
    return lines;
  }
}

/** A set of metrics rendered together; a name is registered once. */
export class Registry {
  private readonly metrics = new Map<string, Metric>();

  /** Registers a metric and returns it. */
  register<M extends Metric>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} registered twice`);
    this.metrics.set(metric.name, metric);
    return metric;
  }

  /** Creates and registers a counter. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(new Counter(name, help, labelNames));
  }

  /** Creates and registers a gauge. */
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.register(new Gauge(name, help, labelNames));
  }

  /** Creates and registers a histogram. */
  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: readonly number[]): Histogram {
    return this.register(new Histogram(name, help, labelNames, buckets));
  }

  /** The metric families in the text exposition format, each with HELP and TYPE. */
  render(): string {
    return [...this.metrics.values()].map((m) => m.render()).join('\n');
  }
}

/** Renders registries one after the other into one exposition (ends with a line feed). */
export function renderExposition(registries: readonly Registry[]): string {
  return `${registries
    .map((r) => r.render())
    .filter((t) => t !== '')
    .join('\n')}\n`;
}

/**
 * Reading the Prometheus text format in tests: a strict line grammar of format 0.0.4 (names, label
 * escaping, values, HELP/TYPE before the samples of their family), which is the real check (the
 * npm parser `parse-prometheus-text-format` is lenient), then that parser for counters and gauges
 * and a line reader for histograms.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const LABEL_VALUE = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const VALUE = '(?:[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?|[+-]Inf|NaN)';
const SAMPLE = new RegExp(
  `^(${NAME})(?:\\{(?:${LABEL}=${LABEL_VALUE}(?:,${LABEL}=${LABEL_VALUE})*,?)?\\})? (${VALUE})(?: -?\\d+)?$`,
);
const HELP = new RegExp(`^# HELP (${NAME}) (?:[^\\\\\\n]|\\\\[\\\\n])*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

/** Throws, naming the line, unless `text` follows the text format 0.0.4 strictly. */
export function assertExpositionFormat(text: string): void {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const typed = new Map<string, string>();
  const seen = new Set<string>();
  let current: string | null = null;
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, i) => {
      const at = `line ${i + 1}: ${line}`;
      const help = HELP.exec(line);
      const type = TYPE.exec(line);
      if (help || type) {
        const name = (help ?? type)![1]!;
        if (type) {
          if (typed.has(name)) throw new Error(`${at}: a second TYPE for ${name}`);
          typed.set(name, type[2]!);
        }
        if (current !== name && seen.has(name)) throw new Error(`${at}: ${name} appears in two groups`);
        current = name;
        seen.add(name);
        return;
      }
      const sample = SAMPLE.exec(line);
      if (!sample) throw new Error(`${at}: not a sample, HELP or TYPE line`);
      const name = sample[1]!;
      const family = [name, name.replace(/_(bucket|sum|count)$/, '')].find((n) => typed.has(n));
      if (!family || family !== current) throw new Error(`${at}: a sample outside the group of its TYPE line`);
      if (family !== name && typed.get(family) !== 'histogram' && typed.get(family) !== 'summary') {
        throw new Error(`${at}: a ${name} sample in a ${typed.get(family)} family`);
      }
    });
}

interface ParsedFamily {
  name: string;
  help: string;
  type: string;
  metrics: Array<{ value?: string; labels?: Record<string, string> }>;
}

/** The families, parsed by parse-prometheus-text-format after the strict check. */
export function parseExposition(text: string): ParsedFamily[] {
  assertExpositionFormat(text);
  return parsePrometheusTextFormat(text) as ParsedFamily[];
}

const matches = (labels: Record<string, string> | undefined, want: Record<string, string>) =>
  Object.entries(want).every(([k, v]) => labels?.[k] === v);

/** The value of a counter or gauge series (0 when the series is absent; undefined when the family is). */
export function sampleValue(
  families: ParsedFamily[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = families.find((f) => f.name === name);
  if (!family) return undefined;
  const m = family.metrics.find((s) => matches(s.labels, labels));
  return m ? Number(m.value) : 0;
}

const unescapeLabel = (v: string) => v.replace(/\\(.)/g, (_, ch: string) => (ch === 'n' ? '\n' : ch));

/**
 * Every sample line with its labels unescaped (after the strict check). The npm parser folds all
 * label sets of a histogram into one, so histograms are read from here.
 */
export function readSamples(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  assertExpositionFormat(text);
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((line) => {
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0];
      const labels: Record<string, string> = {};
      const close = line.lastIndexOf(' ');
      for (const m of line.slice(name.length, close).matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        labels[m[1]!] = unescapeLabel(m[2]!);
      }
      return {
        name,
        labels,
        value: Number(
          line
            .slice(close + 1)
            .replace('+Inf', 'Infinity')
            .replace('-Inf', '-Infinity'),
        ),
      };
    });
}

/** A histogram series: its count, sum and cumulative buckets by `le`. */
export function histogramOf(text: string, name: string, labels: Record<string, string>) {
  const of = readSamples(text).filter((s) => matches(s.labels, labels));
  const count = of.find((s) => s.name === `${name}_count`);
  if (!count) return undefined;
  const buckets = Object.fromEntries(of.filter((s) => s.name === `${name}_bucket`).map((s) => [s.labels.le!, s.value]));
  return { count: count.value, sum: of.find((s) => s.name === `${name}_sum`)!.value, buckets };
}

/** Parsing of raw (string) configuration values into typed values, with errors that name the variable. */
import { REGISTRY, type Registry, type VarName } from './registry.js';
import type { ValueOf, VarDef } from './types.js';

/** One bad value: which variable, what was expected, what was received (masked for secrets). */
export interface ConfigIssue {
  readonly name: string;
  readonly env: string;
  readonly expected: string;
  readonly received: string;
  readonly message: string;
}

/** A configuration that cannot be used; `issues` lists every bad variable. */
export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super(issues.map((i) => i.message).join('\n'));
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

const TRUE = new Set(['true', '1']);
const FALSE = new Set(['false', '0']);

/** What a definition expects, in words, for error messages and docs/configuration.md. */
export function describeExpected(def: VarDef): string {
  switch (def.type) {
    case 'integer':
      return `integer in ${def.min}..${def.max}`;
    case 'number':
      return `number in ${def.min}..${def.max}`;
    case 'boolean':
      return 'boolean (True/False, true/false, 1/0)';
    case 'list':
      return def.format ?? 'comma-separated list';
    case 'enumeration':
      return `one of ${def.values.join(', ')}`;
    case 'string':
      return def.oneOf ? `one of ${def.oneOf.join(', ')}` : (def.format ?? 'string');
  }
}

type Parsed<T> = { ok: true; value: T } | { ok: false; expected: string };

function parseRaw(def: VarDef, raw: string): Parsed<unknown> {
  const fail = (expected = describeExpected(def)): Parsed<never> => ({ ok: false, expected });
  const text = raw.trim();
  switch (def.type) {
    case 'integer': {
      if (!/^[+-]?\d{1,16}$/.test(text)) return fail();
      const n = Number(text);
      return n >= def.min && n <= def.max ? { ok: true, value: n } : fail();
    }
    case 'number': {
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return fail();
      const n = Number(text);
      return Number.isFinite(n) && n >= def.min && n <= def.max ? { ok: true, value: n } : fail();
    }
    case 'boolean': {
      const t = text.toLowerCase();
      if (TRUE.has(t)) return { ok: true, value: true };
      if (FALSE.has(t)) return { ok: true, value: false };
      return fail();
    }
    case 'list': {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      for (const item of items) {
        const problem = def.checkItem?.(item);
        if (problem) return fail(problem);
      }
      return { ok: true, value: items };
    }
    case 'enumeration': {
      const v = def.values.find((x) => x.toLowerCase() === text.toLowerCase());
      return v ? { ok: true, value: v } : fail();
    }
    case 'string': {
      if (def.oneOf) {
        const v = def.oneOf.find((x) => x.toLowerCase() === text.toLowerCase());
        return v ? { ok: true, value: v === 'WARN' ? 'WARNING' : v } : fail();
      }
      const problem = def.check?.(raw);
      return problem ? fail(problem) : { ok: true, value: raw };
    }
  }
}

/** Shows a received value in an error message; secrets are never shown. */
function showReceived(def: VarDef, raw: string): string {
  if (def.secret) return '"***" (secret, hidden)';
  const shown = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
  return JSON.stringify(shown);
}

/** Builds the issue for a bad value of `name`. */
export function configIssue(name: VarName, raw: string, expected: string, origin: 'env' | 'ui'): ConfigIssue {
  const def = REGISTRY[name];
  const received = showReceived(def, raw);
  const label = origin === 'env' ? `${def.env} (${name})` : name;
  return {
    name,
    env: def.env,
    expected,
    received,
    message: `${label}: expected ${expected}, received ${received}`,
  };
}

/** Parses a raw value of a variable; returns the typed value or the issue describing the failure. */
export function parseValue<K extends VarName>(
  name: K,
  raw: string,
  origin: 'env' | 'ui' = 'env',
): { ok: true; value: ValueOf<Registry[K]> } | { ok: false; issue: ConfigIssue } {
  const result = parseRaw(REGISTRY[name], raw);
  if (result.ok) return { ok: true, value: result.value as ValueOf<Registry[K]> };
  return { ok: false, issue: configIssue(name, raw, result.expected, origin) };
}

/** Renders a typed value back to the text form the parser accepts (for the UI and docs/configuration.md). */
export function formatValue(def: VarDef, value: unknown): string {
  if (def.type === 'list') return (value as readonly string[]).join(',');
  if (def.type === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

/**
 * Resolution of configuration values: UI-saved value (libSQL, UI-editable variables only)
 * → environment → default (specification, "Configuration variables"; architecture.md §4).
 */
import { conflictIssue, findConflicts } from './consistency.js';
import { ConfigError, parseValue, type ConfigIssue } from './parse.js';
import { REGISTRY, VAR_NAMES, type Registry, type VarName } from './registry.js';
import type { ValueOf, ValueSource } from './types.js';

/** Environment as strings: process.env plus a .env file on Node, vars and secrets on the edge. */
export type EnvSource = Readonly<Record<string, unknown>>;

/** An immutable view of effective values. */
export interface ConfigSnapshot {
  /** The effective, typed value of a variable. */
  get<K extends VarName>(name: K): ValueOf<Registry[K]>;
  /** Where the effective value came from. */
  source(name: VarName): ValueSource;
}

type Entry = { value: unknown; source: ValueSource };

class Snapshot implements ConfigSnapshot {
  constructor(private readonly entries: ReadonlyMap<VarName, Entry>) {}
  get<K extends VarName>(name: K): ValueOf<Registry[K]> {
    return this.entries.get(name)!.value as ValueOf<Registry[K]>;
  }
  source(name: VarName): ValueSource {
    return this.entries.get(name)!.source;
  }
}

/** Reads an environment value as a string; wrangler [vars] may hold JSON numbers or booleans. */
function envString(env: EnvSource, key: string): string | undefined {
  const v = env[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/**
 * Parses every variable from the environment (falling back to defaults).
 * Throws ConfigError naming every bad variable, so a bad environment stops the start; so do values
 * that do not fit together (min above max, a password policy no password can satisfy).
 */
export function parseEnvironment(env: EnvSource): ConfigSnapshot {
  const entries = new Map<VarName, Entry>();
  const issues: ConfigIssue[] = [];
  for (const name of VAR_NAMES) {
    const raw = envString(env, REGISTRY[name].env);
    if (raw === undefined) {
      entries.set(name, { value: REGISTRY[name].default, source: 'default' });
      continue;
    }
    const parsed = parseValue(name, raw, 'env');
    if (parsed.ok) entries.set(name, { value: parsed.value, source: 'env' });
    else issues.push(parsed.issue);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  const get = (name: VarName) => entries.get(name)!.value;
  const conflicts = findConflicts(get);
  if (conflicts.length > 0) throw new ConfigError(conflicts.map((c) => conflictIssue(c, get)));
  return new Snapshot(entries);
}

/** Overlays UI-saved raw values on an environment snapshot; bad saved values are reported and skipped. */
export function overlayUiValues(
  base: ConfigSnapshot,
  saved: Readonly<Record<string, string>>,
  accept: (name: VarName) => boolean = () => true,
  onIssue: (issue: ConfigIssue) => void = () => {},
): ConfigSnapshot {
  const entries = new Map<VarName, Entry>();
  for (const name of VAR_NAMES) {
    entries.set(name, { value: base.get(name), source: base.source(name) });
    const raw = saved[name];
    if (raw === undefined || !REGISTRY[name].ui || !accept(name)) continue;
    const parsed = parseValue(name, raw, 'ui');
    if (parsed.ok) entries.set(name, { value: parsed.value, source: 'ui' });
    else onIssue(parsed.issue);
  }
  return new Snapshot(entries);
}

/** Loads the UI-saved raw values (name → text) from the store. */
export type UiValueLoader = () => Promise<Record<string, string>>;

export interface ConfigServiceOptions {
  env: ConfigSnapshot;
  /** The default loader; `current()` may be given the request's own. */
  load: UiValueLoader;
  /** Milliseconds a loaded set of UI values is reused (changes reach every instance within it). */
  ttlMs?: number;
  now?: () => number;
  onIssue?: (issue: ConfigIssue) => void;
}

/**
 * Effective configuration with UI values cached for a short time.
 * Variables marked `restart` keep the UI value seen at the first load (they apply after a restart).
 */
export class ConfigService {
  readonly env: ConfigSnapshot;
  private readonly load: UiValueLoader;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly onIssue: (issue: ConfigIssue) => void;
  private cached: { at: number; snapshot: ConfigSnapshot } | undefined;
  private atStart: Readonly<Record<string, string>> | undefined;

  constructor(o: ConfigServiceOptions) {
    this.env = o.env;
    this.load = o.load;
    this.ttlMs = o.ttlMs ?? 2000;
    this.now = o.now ?? Date.now;
    this.onIssue = o.onIssue ?? (() => {});
  }

  /**
   * The effective configuration, refreshed from the store when older than the TTL. A refresh is
   * never shared between requests: on Workers a request must not wait on another request's I/O.
   */
  async current(load: UiValueLoader = this.load): Promise<ConfigSnapshot> {
    return this.fresh() ?? this.refresh(load);
  }

  /** The snapshot `current()` would give without reading the store, or undefined when it must. */
  fresh(): ConfigSnapshot | undefined {
    const c = this.cached;
    return c && this.now() - c.at < this.ttlMs ? c.snapshot : undefined;
  }

  /** Forgets the cached UI values, so the next `current()` reads the store (after a local write). */
  invalidate(): void {
    this.cached = undefined;
  }

  private async refresh(load: UiValueLoader): Promise<ConfigSnapshot> {
    const saved = await load();
    this.atStart ??= saved;
    const startValues = this.atStart;
    const live = overlayUiValues(this.env, saved, (n) => !REGISTRY[n].restart, this.onIssue);
    // Restart-only variables: the value saved when this instance started.
    const snapshot = overlayUiValues(live, startValues, (n) => REGISTRY[n].restart, this.onIssue);
    this.cached = { at: this.now(), snapshot };
    return snapshot;
  }
}

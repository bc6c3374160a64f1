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
  /** Milliseconds a loaded set of UI values is served as it is (default 2 s). */
  ttlMs?: number;
  /**
   * Milliseconds a loaded set is still served, while a refresh runs in the background (default 5 s; at
   * least `ttlMs`): the bound on how old a setting may be, so changes reach every instance within it.
   */
  staleMs?: number;
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
  private readonly staleMs: number;
  private readonly now: () => number;
  private readonly onIssue: (issue: ConfigIssue) => void;
  private cached: { at: number; snapshot: ConfigSnapshot } | undefined;
  /** When the background refresh in flight started (one at a time; a stuck one is retried after `staleMs`). */
  private refreshingSince: number | undefined;
  /** Bumped by `invalidate()`: a read that started before a local write must not overwrite its result. */
  private generation = 0;
  private atStart: Readonly<Record<string, string>> | undefined;

  constructor(o: ConfigServiceOptions) {
    this.env = o.env;
    this.load = o.load;
    this.ttlMs = o.ttlMs ?? 2000;
    this.staleMs = Math.max(this.ttlMs, o.staleMs ?? 5000);
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

  /**
   * The snapshot a request may use without waiting (docs/architecture.md §3, "The frame"): the
   * cached one while it is younger than `ttlMs`; while younger than `staleMs`, the same one, with a
   * refresh handed to `background` (the edge's `waitUntil`) so that the next request sees the new
   * values. Undefined when the request must wait for `current()` (no snapshot, or one too old).
   */
  served(load: UiValueLoader, background: (work: () => Promise<unknown>) => void): ConfigSnapshot | undefined {
    const c = this.cached;
    if (!c) return undefined;
    const now = this.now();
    const age = now - c.at;
    if (age < this.ttlMs) return c.snapshot;
    if (age >= this.staleMs) return undefined;
    if (this.refreshingSince === undefined || now - this.refreshingSince >= this.staleMs) {
      this.refreshingSince = now;
      background(() =>
        this.refresh(load).finally(() => {
          if (this.refreshingSince === now) this.refreshingSince = undefined;
        }),
      );
    }
    return c.snapshot;
  }

  /** Forgets the cached UI values, so the next `current()` reads the store (after a local write). */
  invalidate(): void {
    this.cached = undefined;
    this.generation++;
  }

  private async refresh(load: UiValueLoader): Promise<ConfigSnapshot> {
    const generation = this.generation;
    const readAt = this.now();
    const saved = await load();
    this.atStart ??= saved;
    const startValues = this.atStart;
    const live = overlayUiValues(this.env, saved, (n) => !REGISTRY[n].restart, this.onIssue);
    // Restart-only variables: the value saved when this instance started.
    const snapshot = overlayUiValues(live, startValues, (n) => REGISTRY[n].restart, this.onIssue);
    if (generation === this.generation) this.cached = { at: readAt, snapshot };
    return snapshot;
  }
}

/**
 * One scope for domain code (architecture.md §2): what domain code needs (database, configuration,
 * clock, logger, bridge...) travels as `Scope`/`RequestScope` (http/scope.ts), not as a shape of
 * its own, and time is read with `scope.now()`. This scan fails when a type of worker/src carries the
 * database together with the time as a number (a repacked scope with a frozen clock) or with a clock
 * of its own beside the scope's `now` (a run on one instant takes a scope with a fixed `now`), or when a
 * route reads from `c.var.deps` a value the request scope has. The scanner is tested on planted
 * cases first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scopeWithoutRequest } from '../../worker/src/http/scope.js';
import type { Db } from '../../worker/src/store/db.js';
import { parseEnvironment } from '../../worker/src/config/index.js';

const ROOT = join(import.meta.dirname, '../../worker/src');

/** The interfaces and object types of `source` that hold `db` and a `now: number` or a `clock`. */
function repackedScopes(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:interface\s+(\w+)[^{]*|type\s+(\w+)\s*=\s*)\{([^}]*)\}/g)) {
    const body = m[3] ?? '';
    const frozen = /\bnow\??:\s*number\b/.test(body);
    const ownClock = /\bclock\??:\s*\(\)\s*=>\s*number\b/.test(body);
    // A clock beside a database handle (not a host's per-request `db: () => Db`) is a second clock.
    const clockBesideDb = ownClock && /\bdb\??:\s*Db\b/.test(body);
    if ((/\bdb\??:/.test(body) && frozen) || clockBesideDb) found.push(m[1] ?? m[2] ?? '?');
  }
  return found;
}

/** Reads of `c.var.deps` for what the request scope carries (the scope's names for them differ in places). */
function depsReadsOfScopeValues(source: string): string[] {
  return [...source.matchAll(/c\.var\.deps\??\.(clock|bridge|verifier|mailOutbox|hostName|db|lazyDb)\b/g)].map(
    (m) => m[0],
  );
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('one scope for domain code', () => {
  it('the scanner sees a repacked scope and a deps read of a scope value', () => {
    expect(
      repackedScopes('export interface LoginContext {\n  db: Db;\n  now: number;\n  challenge: string;\n}'),
    ).toEqual(['LoginContext']);
    expect(repackedScopes('type X = { db: Db; config: ConfigSnapshot; now: number }')).toEqual(['X']);
    expect(repackedScopes('export interface Scope {\n  db: Db;\n  now: () => number;\n}')).toEqual([]);
    expect(repackedScopes('export interface NewSession {\n  kind: string;\n  now: number;\n}')).toEqual([]);
    expect(repackedScopes('interface RunScope {\n  db: Db;\n  now: () => number;\n  clock?: () => number;\n}')).toEqual(
      ['RunScope'],
    );
    // A host's dependencies hand out a database per request and the clock: not a scope.
    expect(repackedScopes('export interface AppDeps {\n  db: () => Db;\n  clock: () => number;\n}')).toEqual([]);
    expect(depsReadsOfScopeValues('const now = c.var.deps.clock();')).toEqual(['c.var.deps.clock']);
    expect(depsReadsOfScopeValues('c.var.deps.config.env.get("ROOT_PATH")')).toEqual([]);
  });

  it('no type of worker/src repacks the scope with a frozen clock; routes read scope values from the scope', () => {
    const shapes: string[] = [];
    const reads: string[] = [];
    for (const path of sources(ROOT)) {
      const source = readFileSync(path, 'utf8');
      const where = relative(ROOT, path);
      for (const name of repackedScopes(source)) shapes.push(`${where}: ${name}`);
      if (where !== 'app.ts') for (const read of depsReadsOfScopeValues(source)) reads.push(`${where}: ${read}`);
    }
    expect(shapes).toEqual([]);
    expect(reads).toEqual([]);
  });

  it('a scope without a request reads the clock it is given, and logs without a logger of its own', () => {
    let t = 1_000;
    const scope = scopeWithoutRequest({ db: {} as Db, config: parseEnvironment({}), now: () => t });
    expect(scope.now()).toBe(1_000);
    t += 5;
    expect(scope.now()).toBe(1_005);
    expect(scope.request).toBeUndefined();
    expect(typeof scope.logger.info).toBe('function');
  });
});

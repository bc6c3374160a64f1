/**
 * Scanning the service's sources for a forbidden pattern (test/unit/account-writes.test.ts,
 * test/unit/live-account.test.ts): each test lists its patterns and plants copies first.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The matches of `patterns` in `source`, joined across line breaks so that a statement split over lines is seen. */
export function matchesAcrossLines(source: string, patterns: readonly RegExp[]): string[] {
  const flat = source.replace(/\s*\n\s*/g, ' ');
  return patterns.flatMap((p) => [...flat.matchAll(new RegExp(p.source, `${p.flags}g`))].map((m) => m[0]));
}

/** The TypeScript sources below `dir`, tests left out. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The layout of worker/src in docs/architecture.md §2 is generated from the import rules
 * (.dependency-cruiser.cjs: TIERS and PURPOSES) by `npm run docs:layout` (scripts/docs-layout.ts): this
 * fails while the page's block differs from what the rules give, or while a folder of worker/src has no
 * tier or no line, so the page and the checked rules cannot disagree. The other pages keep no layout of
 * their own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { END, layoutGaps, renderLayout, sourceEntries, START } from '../../scripts/docs-layout.js';

const root = new URL('../../', import.meta.url);
const page = (name: string) => readFileSync(new URL(`docs/${name}`, root), 'utf8');

describe('the layout of worker/src in architecture.md §2', () => {
  it('every folder of worker/src has a tier and a line, and every file directly in it a line', () => {
    expect(layoutGaps()).toEqual([]);
    expect(sourceEntries().folders.length).toBeGreaterThan(20);
  });

  it('is the block generated from .dependency-cruiser.cjs (npm run docs:layout)', () => {
    const doc = page('architecture.md');
    const a = doc.indexOf(START);
    const b = doc.indexOf(END);
    expect(a, 'the markers are in architecture.md').toBeGreaterThan(0);
    expect(doc.slice(a, b + END.length)).toBe(renderLayout());
    for (const folder of sourceEntries().folders) expect(doc.slice(a, b)).toContain(`  ${folder}/ `);
  });

  it('is the only layout: development.md links to it rather than keeping another', () => {
    const dev = page('development.md');
    expect(dev).not.toMatch(/^worker\/src\/\s/m);
    expect(dev).toContain('architecture.md#2-layout-and-import-rules');
  });
});

/** The files of worker/src (not tests), relative to it. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe("architecture.md §2 on Hono's Context", () => {
  it('names every file besides route files, http/ and app.ts that sees it', () => {
    const src = new URL('worker/src/', root).pathname;
    const seeing = sources(src)
      .filter((path) => /import (type )?\{[^}]*\bContext\b[^}]*\} from 'hono'/.test(readFileSync(path, 'utf8')))
      .map((path) => relative(src, path))
      .filter((path) => !path.endsWith('routes.ts') && !path.startsWith('http/') && path !== 'app.ts');
    const doc = page('architecture.md');
    const a = doc.indexOf("- Hono's `Context` is seen by");
    const sentence = doc.slice(a, doc.indexOf('No other file does.', a));
    expect(a).toBeGreaterThan(0);
    expect(seeing).toContain('mfa/answers.ts');
    expect(seeing.filter((path) => !sentence.includes(`\`${path}\``))).toEqual([]);
  });
});

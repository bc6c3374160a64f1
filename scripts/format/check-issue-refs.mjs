#!/usr/bin/env node
// Comments and docs point at what a reader of the repository can open: a docs/ section, or the reason said in
// place; never the number of an issue (the word followed by a number, or `#` and a number in parentheses), which
// nobody reading the tree can follow. Lists file:line of every such reference in the source files
// (scripts/format/source-files.mjs), README.md, docs/*.md, the CI script and wrangler.toml, and exits 1 if there is
// one (part of `npm run lint`; docs/development.md, "Formatting").
// Usage: node scripts/format/check-issue-refs.mjs [file ...]   (no file: every checked file)
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listSourceFiles, selectFiles } from './source-files.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The word issue (or issues) and a number, with or without `#`; `#` and a number in parentheses or after "see". */
const ISSUE_REF = /\bissues?\s*(?:no\.?\s*)?#?\d+|\(#\d+\)|\bsee\s+#\d+/gi;

/** Every reference in `text`, as `line: match`. */
export function findIssueRefs(text) {
  const out = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(ISSUE_REF)) out.push({ line: i + 1, match: m[0] });
  });
  return out;
}

/** The checked files: source, the top-level docs and the configs that carry comments. */
function checkedFiles() {
  const docs = readdirSync(resolve(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  const shell = readdirSync(resolve(ROOT, 'scripts/bench'))
    .filter((f) => f.endsWith('.sh'))
    .map((f) => `scripts/bench/${f}`);
  return [...listSourceFiles(ROOT), 'README.md', ...docs, ...shell, '.ci/run', 'wrangler.toml'];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const files = args.length === 0 ? checkedFiles() : selectFiles(ROOT, args);
  const found = [];
  for (const f of files) {
    for (const r of findIssueRefs(readFileSync(resolve(ROOT, f), 'utf8'))) found.push(`${f}:${r.line}: "${r.match}"`);
  }
  if (found.length > 0) {
    console.error(
      `${found.length} reference(s) to an issue number: point at a docs/ section or say the reason in place:\n` +
        found.join('\n'),
    );
    process.exit(1);
  }
}

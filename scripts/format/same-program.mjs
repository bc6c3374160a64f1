#!/usr/bin/env node
// Checks that a formatting pass changed no program: for each TypeScript/JavaScript file changed since REV (default
// HEAD), esbuild's minified output (types, comments and white space dropped, `'a' + 'b'` folded) of the file at REV
// and in the working tree must be the same. Lists the files that differ; a hand fix (a value moved to a const, a
// line break inside a SQL template) shows here and is to be read, not a failure in itself.
// Usage: node scripts/format/same-program.mjs [REV]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

const rev = process.argv[2] ?? 'HEAD';
const git = (...args) => execFileSync('git', args, { encoding: 'utf8', maxBuffer: 1e9 });
const files = git('diff', '--name-only', '--diff-filter=M', rev)
  .split('\n')
  .filter((f) => /\.(ts|mts|cts|mjs|cjs|js)$/.test(f) && !f.endsWith('.d.ts'));
const minified = (source, file) =>
  transformSync(source, {
    loader: /\.[mc]?ts$/.test(file) ? 'ts' : 'js',
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'none',
    format: 'esm',
  }).code;

const differ = [];
for (const f of files) {
  const before = minified(git('show', `${rev}:${f}`), f);
  const after = minified(readFileSync(f, 'utf8'), f);
  if (before !== after) differ.push(f);
}
console.log(`${files.length} changed file(s), ${differ.length} with another program${differ.length ? ':' : ''}`);
for (const f of differ) console.log(`  ${f}`);
process.exit(differ.length > 0 ? 1 : 0);

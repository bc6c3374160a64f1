#!/usr/bin/env node
// The 120-column rule (docs/architecture.md §2), checked: lists file:line of every line longer than 120 characters
// in the files of scripts/format/source-files.mjs and exits 1 if there is one. `npm run format` fixes most (Biome
// for code, rewrap-comments.mjs for comments); what remains is split by hand (long strings with `+`, see
// docs/development.md). Usage: node scripts/format/check-line-length.mjs [file ...]   (no file: every checked file)
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectFiles } from './source-files.mjs';

const MAX = 120;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Lines allowed to be longer, each with why: a line is exempt when its file is named here and the line contains
 * the text. Keep it short; split the line where it can be split.
 */
const EXEMPT = [];

const exempt = (file, line) => EXEMPT.some((e) => e.file === file && line.includes(e.contains));

const files = selectFiles(ROOT, process.argv.slice(2));
const long = [];
for (const f of files) {
  const lines = readFileSync(resolve(ROOT, f), 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (line.length > MAX && !exempt(f, line)) long.push(`${f}:${i + 1}: ${line.length} characters`);
  });
}
if (long.length > 0) {
  console.error(`${long.length} line(s) longer than ${MAX} characters:\n${long.join('\n')}`);
  process.exit(1);
}

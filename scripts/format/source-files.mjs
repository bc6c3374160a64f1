// The files the 120-column rule covers: the TypeScript and JavaScript we write. Shared by the comment rewrap and
// the line-length check so both see the same set; biome.json's "files.includes" names the same folders.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** Folders walked, and single files at the root. */
const ROOTS = ['worker', 'console', 'ldap-bridge', 'schema', 'scripts', 'test', 'static'];
const ROOT_FILES = ['vitest.config.ts', 'drizzle.config.ts'];
const EXTENSIONS = /\.(ts|mts|cts|mjs|cjs|js)$/;
/** Folders never walked: installed, copied or generated code. */
const SKIP_DIRS = new Set(['node_modules', 'vendor', 'dist', 'data', '.wrangler', 'migrations']);
/** Generated folders (the console's bundle: scripts/build-console.mjs). */
const SKIP_PATHS = new Set(['static/console']);
/** Generated files (openapi-typescript writes auth-api.d.ts: `npm run openapi:types`). */
const SKIP_FILES = new Set(['test/http/auth-api.d.ts']);

/** Lists the checked files, relative to `root` with `/` separators, sorted. */
export function listSourceFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name) && !SKIP_PATHS.has(rel)) walk(rel);
      } else if (e.isFile() && EXTENSIONS.test(e.name) && !SKIP_FILES.has(rel)) {
        out.push(rel);
      }
    }
  };
  for (const d of ROOTS) walk(d);
  for (const f of ROOT_FILES) out.push(f);
  return out.map((f) => f.split(sep).join('/')).sort();
}

/** The files named on the command line (relative to `root`), or every checked file when none is named. */
export function selectFiles(root, args) {
  if (args.length === 0) return listSourceFiles(root);
  return args.map((a) => relative(root, a).split(sep).join('/'));
}

/**
 * The command line of a formatting pass: applies `transform(file, text)` to the named files (or every
 * checked file) under `root` and writes what changed; with `--check`, writes nothing and exits 1
 * naming the files it would change (`what` says what they need).
 */
export function runFormatPass(root, transform, what) {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const changed = [];
  for (const f of selectFiles(
    root,
    args.filter((a) => a !== '--check'),
  )) {
    const path = resolve(root, f);
    const text = readFileSync(path, 'utf8');
    const next = transform(f, text);
    if (next === text) continue;
    changed.push(f);
    if (!check) writeFileSync(path, next);
  }
  if (check && changed.length > 0) {
    console.error(`${what} (npm run format):\n${changed.map((f) => `  ${f}`).join('\n')}`);
    process.exit(1);
  }
  if (!check && changed.length > 0) console.log(`${what}: ${changed.length} file(s) done`);
}

// Builds the web console's browser code (console/*.ts) with esbuild into STATIC_DIR/console/:
// console.js (every console page), errtrack-page.js (the error-tracking page), console.css, and
// texts.json (every text of the console, which the server renders its pages with); the OpenAPI document
// both hosts serve (STATIC_DIR/openapi/openapi.json, generated from the routes); and the edge host's data
// assets (STATIC_DIR/blocklist/common-passwords.pwbf, STATIC_DIR/unicode/confusables.txt).
// Run by `npm install` (postinstall), by the HTTP test setup, and by `npm run build:console`;
// the output is generated (gitignored), so the edge host's assets and STATIC_DIR both carry it.
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');

/** Bundles the console into `staticDir`/console (default: AUTH_STATIC_DIR or static). */
export async function buildConsole(staticDir = process.env.AUTH_STATIC_DIR ?? join(ROOT, 'static')) {
  const { build } = await import('esbuild');
  const outdir = join(staticDir, 'console');
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: { console: join(ROOT, 'console/main.ts'), 'errtrack-page': join(ROOT, 'console/errtrack-page.ts') },
    bundle: true,
    format: 'iife',
    minify: true,
    sourcemap: 'linked',
    target: 'es2020',
    legalComments: 'none',
    outdir,
    logLevel: 'warning',
  });
  copyFileSync(join(ROOT, 'console/console.css'), join(outdir, 'console.css'));
  await writeTexts(build, staticDir);
  await writeApiDocument(build, staticDir);
  writePasswordFilter(staticDir);
  writeConfusables(staticDir);
  return outdir;
}

/**
 * Every text of the console as `texts.json` (worker/src/pages/texts.ts, `loadTexts`): the server reads
 * its texts from there, so the edge script carries none (docs/performance.md, "The edge bundle").
 */
async function writeTexts(build, staticDir) {
  const { dictionaries } = await importBundled(build, 'worker/src/pages/all-texts.ts');
  writeAsset(staticDir, 'console/texts.json', JSON.stringify(dictionaries()));
}

/**
 * The OpenAPI document (worker/src/docs/generate.ts, through scripts/openapi-document.ts) as
 * `openapi/openapi.json`: both hosts serve it (docs/routes.ts), so neither generates it at run time and
 * the edge script carries no generator (docs/performance.md, "The edge bundle").
 */
async function writeApiDocument(build, staticDir) {
  const { generatedDocument } = await importBundled(build, 'scripts/openapi-document.ts');
  writeAsset(staticDir, 'openapi/openapi.json', JSON.stringify(generatedDocument()));
}

/**
 * Bundles the TypeScript module `entry` (a path below the repository) and imports it. Its packages stay
 * external: the bundle is written into node_modules/.cache, where they resolve.
 */
async function importBundled(build, entry) {
  const cache = join(ROOT, 'node_modules/.cache/auth-service');
  mkdirSync(cache, { recursive: true });
  const module = join(cache, `${basename(entry, '.ts')}-${process.pid}.mjs`);
  try {
    await build({
      entryPoints: [join(ROOT, entry)],
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: module,
      logLevel: 'warning',
    });
    return await import(pathToFileURL(module).href);
  } finally {
    rmSync(module, { force: true });
  }
}

/**
 * The string literals of export `name` of a generated module (`worker/src/...`), joined: the data of the
 * edge host's assets below, taken from the module the Node host imports, so both hold one copy.
 */
function generatedData(module, name, chars) {
  const source = readFileSync(join(ROOT, module), 'utf8');
  const body = source.slice(source.indexOf(`export const ${name} =`));
  return [...body.matchAll(new RegExp(`'(${chars}*)'`, 'g'))].map((m) => m[1]).join('');
}

/**
 * Writes `data` to `staticDir`/`path` whole: a file of its own renamed into place, so a host reading it
 * while another build writes it (the two HTTP suites build at once) never reads half of it.
 */
function writeAsset(staticDir, path, data) {
  const out = join(staticDir, path);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.${process.pid}.tmp`, data);
  renameSync(`${out}.${process.pid}.tmp`, out);
}

/**
 * The bundled password filter for the edge host (docs/performance.md, "The edge bundle"): its data is
 * a static asset the isolate fetches once rather than part of the script. Written wherever the console
 * is (install, test setup, deploy), so the asset never lags the module.
 */
function writePasswordFilter(staticDir) {
  const base64 = generatedData(
    'worker/src/passwords/blocklist/bundled-filter.ts',
    'BUNDLED_FILTER_BASE64',
    '[A-Za-z0-9+/=]',
  );
  writeAsset(staticDir, 'blocklist/common-passwords.pwbf', Buffer.from(base64, 'base64'));
}

/** The confusables table for the edge host, likewise: the entries as one text. */
function writeConfusables(staticDir) {
  const text = generatedData('worker/src/users/confusables-data.ts', 'CONFUSABLES', '[0-9a-f:. ]');
  writeAsset(staticDir, 'unicode/confusables.txt', text);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(`console bundled to ${await buildConsole()}`);
}

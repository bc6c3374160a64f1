// Builds the web console's browser code (console/*.ts) with esbuild into STATIC_DIR/console/:
// console.js (every console page), errtrack-page.js (the error-tracking page), console.css, and
// texts.json (every text of the console, which the server renders its pages with); the OpenAPI document
// both hosts serve (STATIC_DIR/openapi/openapi.json, generated from the routes); and the edge host's data
// assets (STATIC_DIR/blocklist/common-passwords.pwbf, STATIC_DIR/unicode/confusables.txt).
// Run by `npm install` (postinstall), by the HTTP test setup, and by `npm run build:console`;
// the output is generated (gitignored), so the edge host's assets and STATIC_DIR both carry it.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
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
  await writeTexts(build, outdir);
  await writeApiDocument(build, staticDir);
  writePasswordFilter(staticDir);
  writeConfusables(staticDir);
  return outdir;
}

/**
 * Every text of the console as `texts.json` (worker/src/console/texts.ts, `loadTexts`): the server reads
 * its texts from there, so the edge script carries none (docs/performance.md, "The edge bundle").
 */
async function writeTexts(build, outdir) {
  const dir = mkdtempSync(join(tmpdir(), 'console-texts-'));
  try {
    const module = join(dir, 'all-texts.mjs');
    await build({
      entryPoints: [join(ROOT, 'worker/src/console/all-texts.ts')],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      outfile: module,
      logLevel: 'warning',
    });
    const { dictionaries } = await import(pathToFileURL(module).href);
    const texts = join(outdir, 'texts.json');
    writeFileSync(`${texts}.tmp`, JSON.stringify(dictionaries()));
    renameSync(`${texts}.tmp`, texts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The OpenAPI document (worker/src/docs/generate.ts, through scripts/openapi-document.ts) as
 * `openapi/openapi.json`: both hosts serve it (docs/routes.ts), so neither generates it at run time and
 * the edge script carries no generator (docs/performance.md, "The edge bundle"). The module is bundled
 * with its packages left external, into node_modules/.cache, where they resolve.
 */
async function writeApiDocument(build, staticDir) {
  const cache = join(ROOT, 'node_modules/.cache/auth-service');
  mkdirSync(cache, { recursive: true });
  const module = join(cache, `openapi-document-${process.pid}.mjs`);
  try {
    await build({
      entryPoints: [join(ROOT, 'scripts/openapi-document.ts')],
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: module,
      logLevel: 'warning',
    });
    const { generatedDocument } = await import(pathToFileURL(module).href);
    const out = join(staticDir, 'openapi/openapi.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(`${out}.${process.pid}.tmp`, JSON.stringify(generatedDocument()));
    renameSync(`${out}.${process.pid}.tmp`, out);
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

/** Writes `data` to `staticDir`/`path`. */
function writeAsset(staticDir, path, data) {
  const out = join(staticDir, path);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, data);
}

/**
 * The bundled password filter for the edge host (docs/performance.md, "The edge bundle"): its data is
 * a static asset the isolate fetches once rather than part of the script. Written wherever the console
 * is (install, test setup, deploy), so the asset never lags the module.
 */
function writePasswordFilter(staticDir) {
  const base64 = generatedData(
    'worker/src/auth/blocklist/bundled-filter.ts',
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

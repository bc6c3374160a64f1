// Builds the web console's browser code (console/*.ts) with esbuild into STATIC_DIR/console/:
// console.js (every console page), errtrack-page.js (the error-tracking page) and console.css; and
// the edge host's password filter asset (STATIC_DIR/blocklist/common-passwords.pwbf).
// Run by `npm install` (postinstall), by the HTTP test setup, and by `npm run build:console`;
// the output is generated (gitignored), so the edge host's assets and STATIC_DIR both carry it.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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
  writePasswordFilter(staticDir);
  return outdir;
}

/**
 * The bundled password filter for the edge host (docs/performance.md, "The edge bundle"): its data is
 * a static asset the isolate fetches once rather than part of the script. Decoded from the generated
 * module the Node host imports, so both hold one list; written wherever the console is (install, test
 * setup, deploy), so the asset never lags the module.
 */
function writePasswordFilter(staticDir) {
  const source = readFileSync(join(ROOT, 'worker/src/auth/blocklist/bundled-filter.ts'), 'utf8');
  const body = source.slice(source.indexOf('BUNDLED_FILTER_BASE64'));
  const base64 = [...body.matchAll(/'([A-Za-z0-9+/=]*)'/g)].map((m) => m[1]).join('');
  const out = join(staticDir, 'blocklist', 'common-passwords.pwbf');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, Buffer.from(base64, 'base64'));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(`console bundled to ${await buildConsole()}`);
}

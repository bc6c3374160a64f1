// Builds the web console's browser code (console/*.ts) with esbuild into STATIC_DIR/console/:
// console.js (every console page), errtrack-page.js (the error-tracking page) and console.css.
// Run by `npm install` (postinstall), by the HTTP test setup, and by `npm run build:console`;
// the output is generated (gitignored), so the edge host's assets and STATIC_DIR both carry it.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
  return outdir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(`console bundled to ${await buildConsole()}`);
}

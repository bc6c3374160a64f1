// Vendor assets served by the service itself, so its pages work with no network and load nothing
// from a CDN (run by `npm install` as the postinstall step):
// - Swagger UI from swagger-ui-dist into STATIC_DIR/vendor/swagger-ui (the docs page);
// - @sentry/browser, which ships no prebuilt bundle on npm, bundled with esbuild into one
//   minified script STATIC_DIR/vendor/sentry/sentry.min.js exposing window.Sentry (the
//   error-tracking page), with only the integrations that page uses.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const staticDir = process.env.AUTH_STATIC_DIR ?? 'static';

const src = dirname(require.resolve('swagger-ui-dist/package.json'));
const dest = join(staticDir, 'vendor', 'swagger-ui');
mkdirSync(dest, { recursive: true });
// oauth2-redirect.html runs oauth2-redirect.js (no inline script): both, under STATIC_CSP.
const swaggerFiles = [
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'favicon-32x32.png',
  'oauth2-redirect.html',
  'oauth2-redirect.js',
];
for (const file of swaggerFiles) {
  copyFileSync(join(src, file), join(dest, file));
}
console.log(`swagger-ui assets copied to ${dest}`);

const { build } = await import('esbuild');
const sentryOut = join(staticDir, 'vendor', 'sentry', 'sentry.min.js');
await build({
  stdin: {
    contents:
      'export { init, captureException, getClient, browserTracingIntegration, replayIntegration, ' +
      "browserProfilingIntegration } from '@sentry/browser';",
    resolveDir: process.cwd(),
    loader: 'js',
  },
  bundle: true,
  format: 'iife',
  globalName: 'Sentry',
  minify: true,
  target: 'es2020',
  legalComments: 'none',
  banner: {
    js:
      `/*! @sentry/browser ${require('@sentry/browser/package.json').version} (MIT), bundled by ` +
      `scripts/copy-vendor.mjs */`,
  },
  outfile: sentryOut,
  logLevel: 'warning',
});
console.log(`@sentry/browser bundled to ${sentryOut}`);

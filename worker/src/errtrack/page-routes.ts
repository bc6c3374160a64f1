/**
 * The error-tracking page, ROOT_PATH + /errtrack: a small page of the service that does what the
 * web interface does at load (specification, Endpoints rule 3 and the three configurations). Its
 * script fetches client-config, initialises `@sentry/browser` (served by the service itself, never a
 * CDN) when `sentry` is not null, shows the effective DSN on Ctrl+Shift+I, and can send a test error.
 * Its script (console/errtrack-page.ts) shares the error-tracking module of the console.
 */
import type { App } from '../http/context.js';
import { browserPageCsp, errtrackDialog } from './page-csp.js';
import { html } from 'hono/html';
import { htmlDocument } from '../http/html.js';

function pageHtml(title: string, root: string, staticBase: string) {
  return htmlDocument({
    title: `${title} — error tracking`,
    root,
    head: html`<link rel="stylesheet" href="${staticBase}/errtrack.css">`,
    body: html`<main>
<h1>${title}: error tracking</h1>
<p id="errtrack-status" role="status" aria-live="polite">Loading the error-tracking configuration…</p>
<p>Press <kbd>Ctrl</kbd>+<kbd>Shift</kbd>+<kbd>I</kbd> (or the button below) to show the effective DSN.</p>
<p>
<button type="button" id="errtrack-show-dsn" aria-haspopup="dialog">Show the effective DSN</button>
<button type="button" id="errtrack-test" disabled>Send a test error</button>
</p>
</main>
${errtrackDialog({
  title: 'Error tracking',
  dsn: 'Effective DSN',
  route: 'Events go',
  off: 'error tracking off',
  nowhere: 'nowhere (error tracking off)',
  close: 'Close',
})}
<script src="${staticBase}/vendor/sentry/sentry.min.js"></script>
<script src="${staticBase}/console/errtrack-page.js"></script>`,
  });
}

/** Registers GET ROOT_PATH/errtrack (not an API operation, so not in the OpenAPI description). */
export function registerErrtrackPage(app: App): void {
  app.get('/errtrack', (c) => {
    const env = c.var.deps.config.env;
    const root = env.get('ROOT_PATH');
    return c.html(pageHtml(env.get('PROJECT_NAME'), root, `${root}${env.get('STATIC_PATH')}`), 200, {
      'Content-Security-Policy': browserPageCsp(env),
      'Cache-Control': 'no-cache',
      // PROFILE: the JS Self-Profiling API (Chromium) is only offered to documents that ask for it.
      ...(c.var.scope.config.get('PROFILE') ? { 'Document-Policy': 'js-profiling' } : {}),
    });
  });
}

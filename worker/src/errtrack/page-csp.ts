/**
 * What the service's browser pages (the error-tracking page and the console) share for error
 * tracking: their Content-Security-Policy and the Ctrl+Shift+I dialog's markup, which the one client
 * module (console/errtrack.ts) fills in.
 */
import { html } from 'hono/html';
import type { ConfigSnapshot } from '../config/index.js';
import { parseDsn } from './dsn.js';

/**
 * The policy of a page that may send error events: scripts and styles only from the service; events
 * only to the service or, in Direct mode, the DSN's origin. No inline script or style anywhere.
 */
export function browserPageCsp(env: ConfigSnapshot, formAction: "'none'" | "'self'" = "'none'"): string {
  const dsn = parseDsn(env.get('FRONTEND_ERRTRACK_DSN'));
  const direct =
    dsn && env.get('ERRTRACK_ENV') !== '' && !env.get('FRONTEND_ERRTRACK_TUNNEL')
      ? `${dsn.protocol}://${dsn.host}`
      : null;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${direct ? ` ${direct}` : ''}`,
    // Session replay compresses in a worker built from a blob: URL.
    "worker-src 'self' blob:",
    "base-uri 'none'",
    `form-action ${formAction}`,
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Labels of the error-tracking dialog (the console passes its own language's). */
export interface ErrtrackDialogLabels {
  title: string;
  dsn: string;
  route: string;
  off: string;
  nowhere: string;
  close: string;
}

/** The dialog Ctrl+Shift+I opens; `data-*` hold the texts the client module writes in it. */
export function errtrackDialog(l: ErrtrackDialogLabels) {
  return html`<dialog id="errtrack-dialog" aria-labelledby="errtrack-dialog-title" data-off="${l.off}"
data-nowhere="${l.nowhere}">
<h2 id="errtrack-dialog-title">${l.title}</h2>
<p>${l.dsn}: <output id="errtrack-dsn">${l.off}</output></p>
<p>${l.route}: <output id="errtrack-route">${l.nowhere}</output></p>
<form method="dialog"><button type="submit" autofocus>${l.close}</button></form>
</dialog>`;
}

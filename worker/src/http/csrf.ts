/**
 * CSRF defences for cookie-authenticated requests and login forms (architecture.md §4, "Sessions
 * and tokens"): the browser's Origin (or Sec-Fetch-Site) must show our own or the front end's site.
 */
import type { Context } from 'hono';
import type { AppEnv } from './context.js';
import { isHttpsRequest } from './forwarded.js';
import { ProblemError } from './problem.js';
import { requestHeader } from './node-messages.js';

/** Our origin as the client sees it (https behind a TLS-terminating proxy). */
export function requestOrigin(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  return isHttpsRequest(c) && url.protocol === 'http:' ? `https://${url.host}` : url.origin;
}

/**
 * A same-origin request whose Origin the browser hid: a page with `Referrer-Policy: no-referrer`
 * (ours) makes Chromium post its forms with `Origin: null`, and Fetch Metadata, which no page can
 * set, still says `same-origin`. Other senders of `null` are not accepted: a sandboxed frame or a
 * page after a cross-site redirect (Sec-Fetch-Site cross-site), an old browser without Fetch
 * Metadata (none at all).
 */
export function isHiddenSameOrigin(c: Context<AppEnv>, origin: string | undefined): boolean {
  return origin === 'null' && requestHeader(c, 'Sec-Fetch-Site') === 'same-origin';
}

/** Origins allowed to send cookie-authenticated unsafe requests: ours and the front end's. */
function allowedOrigins(c: Context<AppEnv>): Set<string> {
  return new Set([
    requestOrigin(c),
    new URL(c.req.url).origin,
    new URL(c.var.scope.config.get('DEFAULT_FRONTEND_URL')).origin,
  ]);
}

/**
 * CSRF defence for cookie-authenticated unsafe requests: the browser's Origin (or, without it,
 * Sec-Fetch-Site) must show a same-origin or front-end request. A request that shows neither is
 * refused: every browser that sends cookies sends one of them.
 */
export function assertNotCrossSite(c: Context<AppEnv>): void {
  if (['GET', 'HEAD', 'OPTIONS'].includes(c.req.method)) return;
  const origin = requestHeader(c, 'Origin');
  if (origin !== undefined) {
    if (allowedOrigins(c).has(origin) || isHiddenSameOrigin(c, origin)) return;
    throw new ProblemError('FORBIDDEN', {
      detail: `cross-site request refused (Origin ${origin})`,
      extensions: { reason: 'csrf' },
    });
  }
  const site = requestHeader(c, 'Sec-Fetch-Site');
  if (site === 'same-origin' || site === 'none') return;
  throw new ProblemError('FORBIDDEN', {
    detail: 'cross-site request refused: send the Origin header',
    extensions: { reason: 'csrf' },
  });
}

/**
 * Login CSRF: a login form posted from another site would log the victim into the attacker's
 * account. Browsers send Origin (or Sec-Fetch-Site) on such posts; API clients send neither.
 */
export function refuseCrossSiteLogin(c: Context<AppEnv>): void {
  const origin = requestHeader(c, 'Origin');
  const crossSite =
    origin !== undefined
      ? !allowedOrigins(c).has(origin) && !isHiddenSameOrigin(c, origin)
      : requestHeader(c, 'Sec-Fetch-Site') === 'cross-site';
  if (crossSite)
    throw new ProblemError('FORBIDDEN', { detail: 'cross-site login refused', extensions: { reason: 'csrf' } });
}

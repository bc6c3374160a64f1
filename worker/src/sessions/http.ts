/** The session cookie, CSRF checks and safe redirects (DESIGN.md §4). */
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { AppEnv } from '../http/context.js';
import { isHttpsRequest } from '../http/forwarded.js';
import { ProblemError } from '../http/problem.js';

const BASE_NAME = 'auth_session';
export const MERGE_COOKIE = 'auth_pending_merge';

/**
 * Whether the client reached us over HTTPS (directly, or through a TLS-terminating proxy listed in
 * AUTH_TRUSTED_PROXIES: a client's own X-Forwarded-Proto is never believed).
 */
function isHttps(c: Context<AppEnv>): boolean {
  return isHttpsRequest(c);
}

/**
 * The cookie's name. Over HTTPS it takes the `__Secure-` prefix (browsers then insist on Secure);
 * `__Host-` would require Path=/, and the cookie is scoped to ROOT_PATH instead.
 */
export function cookieName(c: Context<AppEnv>, base = BASE_NAME): string {
  return isHttps(c) ? `__Secure-${base}` : base;
}

function cookiePath(c: Context<AppEnv>): string {
  return c.var.deps.config.env.get('ROOT_PATH') || '/';
}

/** Sets a signed cookie: HttpOnly, Secure, SameSite=Lax, Path=ROOT_PATH. */
export function setAuthCookie(c: Context<AppEnv>, value: string, expiresAt: number, base = BASE_NAME): void {
  setCookie(c, cookieName(c, base), value, {
    httpOnly: true,
    secure: true,
    sameSite: 'Lax',
    path: cookiePath(c),
    expires: new Date(expiresAt),
  });
}

/** Reads a cookie set by setAuthCookie. */
export function readAuthCookie(c: Context<AppEnv>, base = BASE_NAME): string | undefined {
  return getCookie(c, cookieName(c, base));
}

/** Clears a cookie set by setAuthCookie. */
export function clearAuthCookie(c: Context<AppEnv>, base = BASE_NAME): void {
  deleteCookie(c, cookieName(c, base), { path: cookiePath(c), secure: true, httpOnly: true, sameSite: 'Lax' });
}

/**
 * A cookie that binds a flow to the browser (the pending merge's binding): over HTTPS named
 * `__Host-<base>`, which browsers accept only with Secure, Path=/ and no Domain, so that no other
 * host (a sibling subdomain) can plant or overwrite it. It holds a random value, no identity, so
 * being sent to every path of our host reveals nothing usable alone. SameSite=Strict: only our own
 * site's requests need it.
 */
export function setHostCookie(c: Context<AppEnv>, base: string, value: string, expiresAt: number): void {
  const expires = new Date(expiresAt);
  setCookie(c, hostCookieName(c, base), value, { httpOnly: true, secure: true, sameSite: 'Strict', path: '/', expires });
}

/** Reads a cookie set by setHostCookie. */
export function readHostCookie(c: Context<AppEnv>, base: string): string | undefined {
  return getCookie(c, hostCookieName(c, base));
}

/** Clears a cookie set by setHostCookie. */
export function clearHostCookie(c: Context<AppEnv>, base: string): void {
  deleteCookie(c, hostCookieName(c, base), { path: '/', secure: true, httpOnly: true, sameSite: 'Strict' });
}

function hostCookieName(c: Context<AppEnv>, base: string): string {
  return isHttps(c) ? `__Host-${base}` : base;
}

/** Our origin as the client sees it (https behind a TLS-terminating proxy). */
export function requestOrigin(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  return isHttps(c) && url.protocol === 'http:' ? `https://${url.host}` : url.origin;
}

/** Origins allowed to send cookie-authenticated unsafe requests: ours and the front end's. */
function allowedOrigins(c: Context<AppEnv>): Set<string> {
  return new Set([requestOrigin(c), new URL(c.req.url).origin, new URL(c.var.config.get('DEFAULT_FRONTEND_URL')).origin]);
}

/**
 * CSRF defence for cookie-authenticated unsafe requests: the browser's Origin (or, without it,
 * Sec-Fetch-Site) must show a same-origin or front-end request. A request that shows neither is
 * refused: every browser that sends cookies sends one of them.
 */
export function assertNotCrossSite(c: Context<AppEnv>): void {
  if (['GET', 'HEAD', 'OPTIONS'].includes(c.req.method)) return;
  const origin = c.req.header('Origin');
  if (origin !== undefined) {
    if (allowedOrigins(c).has(origin)) return;
    throw new ProblemError('FORBIDDEN', { detail: `cross-site request refused (Origin ${origin})`, extensions: { reason: 'csrf' } });
  }
  const site = c.req.header('Sec-Fetch-Site');
  if (site === 'same-origin' || site === 'none') return;
  throw new ProblemError('FORBIDDEN', { detail: 'cross-site request refused: send the Origin header', extensions: { reason: 'csrf' } });
}

/**
 * Where to send the browser after a login: `next` only when it is a same-origin path (or a URL of
 * the front end's origin); anything else (absolute URLs elsewhere, `//host`, `/\host`, encoded
 * tricks, control characters) falls back to DEFAULT_FRONTEND_URL. Never an open redirect.
 */
export function safeRedirect(c: Context<AppEnv>, next: string | undefined, fallback: string): string {
  if (!next || next.length > 2048 || /[\\\u0000-\u001f\u007f]/.test(next)) return fallback;
  let decoded = next;
  try {
    decoded = decodeURIComponent(next);
  } catch {
    return fallback;
  }
  if (/[\\\u0000-\u001f\u007f]/.test(decoded)) return fallback;
  const frontend = new URL(fallback);
  const base = new URL(c.req.url);
  if (next.startsWith('/') && !next.startsWith('//') && !decoded.startsWith('//')) {
    const target = new URL(next, base);
    return target.origin === base.origin ? target.pathname + target.search + target.hash : fallback;
  }
  try {
    const target = new URL(next);
    return target.origin === frontend.origin ? target.href : fallback;
  } catch {
    return fallback;
  }
}

/**
 * Login CSRF: a login form posted from another site would log the victim into the attacker's
 * account. Browsers send Origin (or Sec-Fetch-Site) on such posts; API clients send neither.
 */
export function refuseCrossSiteLogin(c: Context<AppEnv>): void {
  const origin = c.req.header('Origin');
  const crossSite = origin !== undefined ? !allowedOrigins(c).has(origin) : c.req.header('Sec-Fetch-Site') === 'cross-site';
  if (crossSite) throw new ProblemError('FORBIDDEN', { detail: 'cross-site login refused', extensions: { reason: 'csrf' } });
}

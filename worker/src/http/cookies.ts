/**
 * The service's cookies (architecture.md §4, "Sessions and tokens"): signed cookies scoped to
 * ROOT_PATH (the session, the pending merge, the OIDC flow) and `__Host-` binding cookies.
 */
import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { tryDecodeURIComponent } from 'hono/utils/url';
import type { AppEnv } from './context.js';
import { isHttpsRequest } from './forwarded.js';
import { requestHeader } from './node-messages.js';

/** The session cookie's name (before the `__Secure-` prefix of HTTPS). */
export const SESSION_COOKIE = 'auth_session';
const BASE_NAME = SESSION_COOKIE;

/**
 * The cookie's name. Over HTTPS it takes the `__Secure-` prefix (browsers then insist on Secure);
 * `__Host-` would require Path=/, and the cookie is scoped to ROOT_PATH instead.
 */
export function cookieName(c: Context<AppEnv>, base = BASE_NAME): string {
  return isHttpsRequest(c) ? `__Secure-${base}` : base;
}

function cookiePath(c: Context<AppEnv>): string {
  return c.var.deps.config.env.get('ROOT_PATH') || '/';
}

/**
 * Where a cookie set by setAuthCookie goes: the session cookie, with AUTH_COOKIE_DOMAIN set, to that
 * domain and every path, so that the gate's protected services receive it (docs/integration.md,
 * "One sign-in for the platform"); every other cookie, and the session's without it, host-only below
 * ROOT_PATH. Its `__Secure-` prefix over HTTPS stays (it allows a Domain; `__Host-` would not).
 */
function cookieScope(c: Context<AppEnv>, base: string): { path: string; domain?: string } {
  const domain = base === SESSION_COOKIE ? c.var.deps.config.env.get('COOKIE_DOMAIN') : '';
  return domain ? { path: '/', domain } : { path: cookiePath(c) };
}

/** Sets a signed cookie: HttpOnly, Secure, SameSite=Lax, Path=ROOT_PATH. */
export function setAuthCookie(c: Context<AppEnv>, value: string, expiresAt: number, base = BASE_NAME): void {
  setCookie(c, cookieName(c, base), value, {
    httpOnly: true,
    secure: true,
    sameSite: 'Lax',
    ...cookieScope(c, base),
    expires: new Date(expiresAt),
  });
}

/** A request cookie by name (as hono/cookie's getCookie reads it, with the header read by requestHeader). */
export function readCookie(c: Context<AppEnv>, name: string): string | undefined {
  const header = requestHeader(c, 'Cookie');
  return header ? cookieValue(header, name) : undefined;
}

/** A cookie value's characters (RFC 6265 §4.1.1's cookie-octet, plus space, as Hono's parser allows). */
const COOKIE_VALUE = /^[ !#-:<-[\]-~]*$/;

/**
 * The first value of cookie `name` in a Cookie header, exactly as Hono's `parse(header, name)[name]`
 * reads it (the tests compare both), without splitting the whole header into pairs: the session cookie
 * is read on every cookie request, and a platform's hosts share their cookies (AUTH_COOKIE_DOMAIN), so
 * the header may carry many (docs/performance.md, "Logins and the hot path").
 */
export function cookieValue(header: string, name: string): string | undefined {
  let at = 0;
  // The next '=' at or after `at`, found once for every pair before it (linear in the header's length).
  let eq = -1;
  while (at < header.length) {
    let end = header.indexOf(';', at);
    if (end === -1) end = header.length;
    if (eq < at) eq = header.indexOf('=', at);
    if (eq === -1) return undefined;
    if (eq < end) {
      let start = at;
      while (isBlank(header.charCodeAt(start))) start++;
      let nameEnd = eq;
      while (nameEnd > start && isBlank(header.charCodeAt(nameEnd - 1))) nameEnd--;
      if (nameEnd - start === name.length && header.startsWith(name, start)) {
        let from = eq + 1;
        let to = end;
        while (from < to && isBlank(header.charCodeAt(from))) from++;
        while (to > from && isBlank(header.charCodeAt(to - 1))) to--;
        const value = unquote(header.slice(from, to));
        // Hono skips an invalid value and reads on; only a valid one is the answer.
        if (COOKIE_VALUE.test(value)) return tryDecodeURIComponent(value);
      }
    }
    at = end + 1;
  }
  return undefined;
}

const isBlank = (code: number) => code === 32 || code === 9;

function unquote(value: string): string {
  return value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** Reads a cookie set by setAuthCookie. */
export function readAuthCookie(c: Context<AppEnv>, base = BASE_NAME): string | undefined {
  return readCookie(c, cookieName(c, base));
}

/** Clears a cookie set by setAuthCookie. */
export function clearAuthCookie(c: Context<AppEnv>, base = BASE_NAME): void {
  deleteCookie(c, cookieName(c, base), { ...cookieScope(c, base), secure: true, httpOnly: true, sameSite: 'Lax' });
}

/**
 * A cookie that binds a flow to the browser (the pending merge's binding): over HTTPS named
 * `__Host-<base>`, which browsers accept only with Secure, Path=/ and no Domain, so that no other
 * host (a sibling subdomain) can plant or overwrite it. It holds a random value, no identity, so
 * being sent to every path of our host reveals nothing usable alone. SameSite=Strict: only our own
 * site's requests need it.
 */
export function setHostCookie(c: Context<AppEnv>, base: string, value: string, expiresAt: number): void {
  // Max-Age, counted from the service clock: an absolute Expires would be judged against the real
  // clock (Hono refuses one beyond 400 days), which the test clock may be ahead of.
  const maxAge = Math.max(0, Math.floor((expiresAt - c.var.scope.now()) / 1000));
  setCookie(c, hostCookieName(c, base), value, {
    httpOnly: true,
    secure: true,
    sameSite: 'Strict',
    path: '/',
    maxAge,
  });
}

/** Reads a cookie set by setHostCookie. */
export function readHostCookie(c: Context<AppEnv>, base: string): string | undefined {
  return readCookie(c, hostCookieName(c, base));
}

/** Clears a cookie set by setHostCookie. */
export function clearHostCookie(c: Context<AppEnv>, base: string): void {
  deleteCookie(c, hostCookieName(c, base), { path: '/', secure: true, httpOnly: true, sameSite: 'Strict' });
}

function hostCookieName(c: Context<AppEnv>, base: string): string {
  return isHttpsRequest(c) ? `__Host-${base}` : base;
}

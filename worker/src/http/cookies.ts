/**
 * The service's cookies (architecture.md §4, "Sessions and tokens"): signed cookies scoped to
 * ROOT_PATH (the session, the pending merge, the OIDC flow) and `__Host-` binding cookies.
 */
import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { parse } from 'hono/utils/cookie';
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

/** A request cookie by name (hono/cookie's getCookie, with the header read by requestHeader). */
export function readCookie(c: Context<AppEnv>, name: string): string | undefined {
  const header = requestHeader(c, 'Cookie');
  return header ? parse(header, name)[name] : undefined;
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

/** Where a browser goes after a login: safe redirects only (architecture.md §4), and the front end's error URLs. */
import type { Context } from 'hono';
import type { ConfigSnapshot } from '../config/index.js';
import type { AppEnv } from './context.js';

/**
 * Backslashes (browsers read them as `/`) and control characters (browsers strip tabs and newlines): never
 * in an address a browser is sent to (also the gate's, gate/target.ts).
 */
export const SUSPECT = /[\\\u0000-\u001f\u007f]/;

/**
 * Whether `path`, sent as a Location, keeps a browser on this origin: it starts with one `/` and
 * neither it nor its percent-decoded form starts with `//` or `/\` (a network-path reference).
 */
function isOwnPath(path: string): boolean {
  if (!path.startsWith('/') || SUSPECT.test(path) || /^\/[/\\]/.test(path)) return false;
  try {
    return !/^\/[/\\]/.test(decodeURIComponent(path));
  } catch {
    return false;
  }
}

/**
 * Where to send the browser after a login: `next` only when it is a same-origin path (or a URL of
 * the front end's origin); anything else (absolute URLs elsewhere, `//host`, `/\host`, encoded
 * tricks, control characters) falls back to DEFAULT_FRONTEND_URL. Never an open redirect. The
 * path returned is the resolved one (dot segments removed), so it is checked after resolution too:
 * `/..//host` and `/%2e%2e//host` resolve to `//host`.
 */
export function safeRedirect(c: Context<AppEnv>, next: string | undefined, fallback: string): string {
  if (!next || next.length > 2048 || SUSPECT.test(next)) return fallback;
  let decoded = next;
  try {
    decoded = decodeURIComponent(next);
  } catch {
    return fallback;
  }
  if (SUSPECT.test(decoded)) return fallback;
  const frontend = new URL(fallback);
  const base = new URL(c.req.url);
  if (isOwnPath(next)) {
    const target = new URL(next, base);
    const path = target.pathname + target.search + target.hash;
    return target.origin === base.origin && isOwnPath(path) ? path : fallback;
  }
  try {
    const target = new URL(next);
    return target.origin === frontend.origin ? target.href : fallback;
  } catch {
    return fallback;
  }
}

/**
 * The front-end URL with an `auth_error` code, where a failed form login sends the browser; with
 * `description`, an `auth_error_description` too (OAuth's error_description, for the user).
 */
export function frontendWithError(config: ConfigSnapshot, code: string, description?: string): string {
  const url = new URL(config.get('DEFAULT_FRONTEND_URL'));
  url.searchParams.set('auth_error', code.toLowerCase());
  if (description) url.searchParams.set('auth_error_description', description);
  return url.href;
}

/** Where a browser goes after a login: safe redirects only (architecture.md §4), and the front end's error URLs. */
import type { Context } from 'hono';
import type { ConfigSnapshot } from '../config/index.js';
import type { AppEnv } from './context.js';

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
 * The front-end URL with an `auth_error` code, where a failed form login sends the browser; with
 * `description`, an `auth_error_description` too (OAuth's error_description, for the user).
 */
export function frontendWithError(config: ConfigSnapshot, code: string, description?: string): string {
  const url = new URL(config.get('DEFAULT_FRONTEND_URL'));
  url.searchParams.set('auth_error', code.toLowerCase());
  if (description) url.searchParams.set('auth_error_description', description);
  return url.href;
}

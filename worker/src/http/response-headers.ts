/**
 * The headers every answer carries, set once per request after the route has answered (request-frame.ts):
 * the request id and the security headers below. They are fixed strings, built once, and set in
 * one loop on the response's headers: Hono's `secureHeaders` middleware set eleven, one more
 * middleware step per request, and was about a sixth of the CPU of an unauthenticated request
 * (architecture.md §6).
 *
 * The set is what an API and its few pages need (OWASP's REST security and HTTP headers cheat
 * sheets). Left out, as having no effect in today's browsers for this service: X-XSS-Protection
 * (the filter is gone; "0" only switched it off), X-Download-Options (Internet Explorer 8),
 * X-DNS-Prefetch-Control and Origin-Agent-Cluster (hints for pages that embed other origins; ours
 * embed none), X-Permitted-Cross-Domain-Policies (Flash and Acrobat cross-domain files; we serve
 * none). Pages set their own Content-Security-Policy (docs, console, error tracking, first run).
 */
import type { Context } from 'hono';
import type { AppEnv } from './context.js';

/** Set on every answer; a route's own value wins (none sets a different one today). */
const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  // Browsers reach us over HTTPS only, once they have seen us over HTTPS (ignored over http:).
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  // A JSON answer is never sniffed into a script or a page.
  ['X-Content-Type-Options', 'nosniff'],
  // No page of ours in another site's frame (clickjacking); pages also say frame-ancestors 'none'.
  ['X-Frame-Options', 'DENY'],
  // No URL of ours (which may carry a state or a code) in another site's Referer.
  ['Referrer-Policy', 'no-referrer'],
  // Other origins cannot load our answers as resources (no-cors reads, Spectre-style leaks)...
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  // ...nor keep a handle on our windows (the console, the OIDC login pages).
  ['Cross-Origin-Opener-Policy', 'same-origin'],
];

/**
 * Set when the route set none: answers carry accounts, sessions and tokens, which no cache (a
 * browser's or a proxy's) may keep. Static files and pages set their own.
 */
const DEFAULT_CACHE_CONTROL = 'no-store';

/**
 * Sets the request id and the security headers on an answer, and no-store unless it says otherwise.
 * On the Node host they go on the Node response, which merges them with the route's own headers
 * (the route's win) when it writes the head (node-messages.ts); elsewhere on the Fetch response.
 */
export function setResponseHeaders(c: Context<AppEnv>, requestId: string): void {
  const node = c.var.deps?.nodeMessages?.(c);
  if (node) {
    const out = node.outgoing;
    out.setHeader('X-Request-Id', requestId);
    for (const [name, value] of SECURITY_HEADERS) out.setHeader(name, value);
    out.setHeader('Cache-Control', DEFAULT_CACHE_CONTROL);
    return;
  }
  const headers = c.res.headers;
  headers.set('X-Request-Id', requestId);
  for (const [name, value] of SECURITY_HEADERS) if (!headers.has(name)) headers.set(name, value);
  if (!headers.has('Cache-Control')) headers.set('Cache-Control', DEFAULT_CACHE_CONTROL);
}

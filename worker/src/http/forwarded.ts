/**
 * Which scheme the client used, and which forwarded headers are believed. Any client can send
 * X-Forwarded-Proto (or X-Forwarded-For, X-Forwarded-Host, Forwarded), so they are trusted only
 * when the connection comes from a reverse proxy listed in AUTH_TRUSTED_PROXIES (IP addresses or
 * CIDR ranges; empty: none). The peer address comes from the host: the Node host knows the socket's
 * address; the edge host has no peer to check (Cloudflare is the proxy, and the request URL already
 * carries the client's scheme), so there forwarded headers are never believed.
 *
 * Only X-Forwarded-Proto is read at all: the host comes from the Host header, and no client
 * address is recorded.
 */
import type { Context } from 'hono';
import type { AppEnv } from './context.js';
import { ipMatcher } from './ip-ranges.js';

const matchers = new WeakMap<readonly string[], (address: string | undefined) => boolean>();

/** Whether the request's connection comes from a proxy listed in AUTH_TRUSTED_PROXIES. */
export function fromTrustedProxy(c: Context<AppEnv>): boolean {
  const ranges = c.var.deps.config.env.get('TRUSTED_PROXIES');
  const peer = c.var.deps.peerAddress;
  if (ranges.length === 0 || !peer) return false;
  let matches = matchers.get(ranges);
  if (!matches) matchers.set(ranges, (matches = ipMatcher(ranges)));
  return matches(peer(c));
}

/**
 * Whether the client reached us over HTTPS: the request URL's scheme, or, from a trusted proxy
 * only, X-Forwarded-Proto. Its last value is the one our peer (the trusted proxy) set or added.
 */
export function isHttpsRequest(c: Context<AppEnv>): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  const proto = c.req.header('X-Forwarded-Proto');
  if (!proto || !fromTrustedProxy(c)) return false;
  return proto.split(',').pop()!.trim().toLowerCase() === 'https';
}

/**
 * Which scheme the client used, and which forwarded headers are believed. Any client can send
 * X-Forwarded-Proto (or X-Forwarded-For, X-Forwarded-Host, Forwarded), so they are trusted only
 * when the connection comes from a reverse proxy listed in AUTH_TRUSTED_PROXIES (IP addresses or
 * CIDR ranges; empty: none). The peer address comes from the host: the Node host knows the socket's
 * address; the edge host has no peer to check (Cloudflare is the proxy, and the request URL already
 * carries the client's scheme), so there forwarded headers are never believed.
 *
 * Read: X-Forwarded-Proto (the scheme) and X-Forwarded-For (the client's address, for audit
 * events). The host comes from the Host header.
 */
import type { Context } from 'hono';
import type { AppEnv } from './context.js';
import { ipMatcher } from '../config/ip-ranges.js';
import { requestHeader } from './node-messages.js';

const matchers = new WeakMap<readonly string[], (address: string | undefined) => boolean>();

/** Whether an address is one of AUTH_TRUSTED_PROXIES (one matcher per configured list). */
export function trustedProxy(c: Context<AppEnv>): (address: string | undefined) => boolean {
  const ranges = c.var.deps.config.env.get('TRUSTED_PROXIES');
  if (ranges.length === 0) return () => false;
  let matches = matchers.get(ranges);
  if (!matches) matchers.set(ranges, (matches = ipMatcher(ranges)));
  return matches;
}

/** Whether the request's connection comes from a proxy listed in AUTH_TRUSTED_PROXIES. */
export function fromTrustedProxy(c: Context<AppEnv>): boolean {
  const peer = c.var.deps.peerAddress;
  return peer !== undefined && trustedProxy(c)(peer(c));
}

/**
 * The client's address. Node: the socket's peer, unless it is a trusted proxy: then the last
 * address of X-Forwarded-For that is not a trusted proxy (each proxy appends the address it saw;
 * anything left of the first untrusted one may be forged by the client). Edge: what the host
 * reports (CF-Connecting-IP, set by Cloudflare). Null when the host cannot tell.
 */
export function clientIp(c: Context<AppEnv>): string | null {
  const deps = c.var.deps;
  if (!deps.peerAddress) return deps.clientAddress?.(c.req.raw, c.env) ?? null;
  const peer = deps.peerAddress(c);
  const trusted = trustedProxy(c);
  if (!peer || !trusted(peer)) return peer ?? null;
  const hops = (requestHeader(c, 'X-Forwarded-For') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted(hops[i])) return hops[i]!;
  // Every hop is a trusted proxy: the first one is the nearest to the client that we know.
  return hops[0] ?? peer;
}

/**
 * Whether the client reached us over HTTPS: the request URL's scheme, or, from a trusted proxy
 * only, X-Forwarded-Proto. Its last value is the one our peer (the trusted proxy) set or added.
 */
export function isHttpsRequest(c: Context<AppEnv>): boolean {
  // The scheme of the request URL, read without parsing the whole URL (every cookie read asks).
  if (c.req.url.startsWith('https:')) return true;
  const proto = requestHeader(c, 'X-Forwarded-Proto');
  if (!proto || !fromTrustedProxy(c)) return false;
  return proto.split(',').pop()!.trim().toLowerCase() === 'https';
}

/**
 * Whether a request comes from the machine the service runs on: the condition of the first-run
 * page, which creates the first administrator without any login (as Keycloak's development start
 * does). Each host tells the client address it knows (Node: the socket's peer; edge: the
 * CF-Connecting-IP that `wrangler dev` sets from its socket); the rest of the decision is the same
 * on both hosts.
 */

/** Whether `address` is a loopback address: 127.0.0.0/8, ::1, or IPv4-mapped 127.x. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.trim().toLowerCase();
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice('::ffff:'.length) : a;
  const parts = v4.split('.');
  return parts.length === 4 && parts[0] === '127' && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/** Whether a URL's hostname names this machine (localhost, 127.0.0.0/8 or [::1]). */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || isLoopbackAddress(h);
}

/**
 * Headers that a proxy or a CDN adds to name the client: their presence means the socket's peer is
 * not the client. The edge host's own client-address header (CF-Connecting-IP) is left out there.
 */
const FORWARDING_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-real-ip',
  'true-client-ip',
  'x-client-ip',
  'cf-connecting-ip',
  'x-cluster-client-ip',
  'fastly-client-ip',
];

/**
 * A request is local when all three hold:
 * - the client address (from the host) is loopback;
 * - no forwarding header is present: a reverse proxy on the same machine connects from loopback
 *   on behalf of remote clients, so its requests must not count as local (`addressHeader`, the
 *   header the host itself reads the client address from, excepted);
 * - the URL's host is a loopback name: a page of another site that a browser reaches through DNS
 *   rebinding (its name resolving to 127.0.0.1) carries that site's name, not a loopback one.
 * A proxy that adds none of these headers still passes: the one-time code (code.ts) guards that case.
 */
export function isLocalRequest(request: Request, clientAddress: string | undefined, addressHeader?: string): boolean {
  if (!isLoopbackAddress(clientAddress)) return false;
  const own = addressHeader?.toLowerCase();
  if (FORWARDING_HEADERS.some((h) => h !== own && request.headers.has(h))) return false;
  return isLoopbackHostname(new URL(request.url).hostname);
}

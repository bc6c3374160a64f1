/**
 * The address a proxied request asks for, made comparable (docs/integration.md, "How a request finds
 * its service"): hosts in lower case, without a trailing dot, in IDNA A-labels (the WHATWG URL parser
 * does all three, as browsers do), and paths resolved. Anything a browser or a proxy could read in two
 * ways (backslashes, control characters, white space, userinfo, encoded slashes) is refused rather
 * than guessed at: that is how Authelia's CVE-2021-32637 and the host-case bypasses came about.
 */
import { SUSPECT as REDIRECT_SUSPECT } from '../http/redirect.js';

/** Besides what no redirect may hold (http/redirect.ts): a space, and all of these percent-encoded, `/` too. */
const ENCODED_OR_SPACE = / |%(?:[01][0-9a-f]|20|7f|5c|2f)/i;
const suspect = (text: string) => REDIRECT_SUSPECT.test(text) || ENCODED_OR_SPACE.test(text);

/**
 * The normalised addresses asked about last, as text (undefined: refused): a proxy asks about the same
 * few addresses again and again, and normalising one parses it three times (docs/performance.md,
 * "The gate's decisions"). Each answer is a new URL, parsed once from the kept text, so no caller can change
 * another's. Bounded in count and in key length; emptied when full.
 */
const seen = new Map<string, string | null>();
const SEEN_ADDRESSES = 1024;
const LONGEST_KEPT = 1024;

function remembered(key: string, compute: () => URL | undefined): URL | undefined {
  if (key.length > LONGEST_KEPT) return compute();
  let href = seen.get(key);
  if (href === undefined) {
    href = compute()?.href ?? null;
    if (seen.size >= SEEN_ADDRESSES) seen.clear();
    seen.set(key, href);
  }
  return href === null ? undefined : new URL(href);
}

/** `host` (with an optional port) normalised, or undefined when it is no plain host. */
export function normaliseHost(host: string): string | undefined {
  if (host === '' || host.length > 300 || suspect(host) || /[/?#@]/.test(host)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${host}/`);
  } catch {
    return undefined;
  }
  const hostname = url.hostname.replace(/\.+$/, '');
  if (hostname === '' || hostname.includes('..')) return undefined;
  return url.port ? `${hostname}:${url.port}` : hostname;
}

/**
 * A URL of a protected service, normalised: http(s) only, no userinfo, the host as normaliseHost
 * makes it, the path resolved (dot segments, encoded dots) and the default port dropped. Undefined
 * for anything else, or anything suspect (see `suspect`) anywhere in it.
 */
export function normaliseUrl(raw: string): URL | undefined {
  return remembered(raw, () => normalise(raw));
}

function normalise(raw: string): URL | undefined {
  if (raw.length > 4096 || suspect(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  // The authority as written: `new URL` would also accept `http:\\host` or `http:host`.
  if (!/^https?:\/\/[^/\\?#]/i.test(raw)) return undefined;
  const host = normaliseHost(url.host);
  if (host === undefined) return undefined;
  url.host = host;
  return url;
}

/** The URL a forward-auth request names through its parts (scheme, host, request target), normalised. */
export function urlFromParts(proto: string, host: string, uri: string): URL | undefined {
  return remembered(`${proto}\n${host}\n${uri}`, () => fromParts(proto, host, uri));
}

function fromParts(proto: string, host: string, uri: string): URL | undefined {
  const scheme = proto.trim().toLowerCase();
  if ((scheme !== 'http' && scheme !== 'https') || !uri.startsWith('/') || uri.startsWith('//')) return undefined;
  const normalHost = normaliseHost(host.trim());
  if (normalHost === undefined) return undefined;
  return normalise(`${scheme}://${normalHost}${uri}`);
}

/** A URL prefix of a service as stored: normalised, with its path ending in `/` or not as given. */
export function normalisePrefix(raw: string): string | undefined {
  const url = normaliseUrl(raw);
  if (!url || url.search !== '' || url.hash !== '' || raw.includes('?') || raw.includes('#')) return undefined;
  return url.href;
}

/** Whether `url` lies under `prefix`: at a segment boundary (`/app` covers `/app/x`, not `/apple`). */
export function underPrefix(url: URL, prefix: string): boolean {
  const href = url.href;
  if (!href.startsWith(prefix)) return false;
  if (prefix.endsWith('/') || href.length === prefix.length) return true;
  return '/?#'.includes(href[prefix.length]!);
}

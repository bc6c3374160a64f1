/**
 * Where webhooks may go (docs/webhooks.md, "Targets"): the rules against server-side request forgery. A
 * subscription URL is https:// (http:// only for hosts of AUTH_WEBHOOK_ALLOW_HTTP_HOSTS), carries no user
 * name or password, and never names, or resolves to, a loopback, private, link-local, reserved or cloud
 * metadata address unless AUTH_WEBHOOK_ALLOW_PRIVATE opens it. Pure: the hosts apply them (the Node host
 * to each resolved address at connection time, webhooks/transport.ts on the edge to the URL).
 */
import type { ConfigSnapshot } from '../config/index.js';
import { ipMatcher, parseIp } from '../config/ip-ranges.js';

/** Ranges no webhook reaches unless allow-listed: what is not the public Internet. */
export const REFUSED_RANGES: readonly string[] = [
  // IPv4: "this network", private, shared (CGNAT; Alibaba's metadata), loopback, link-local (the metadata
  // address 169.254.169.254 of AWS, GCP, Azure), IETF protocol assignments, documentation, benchmarking,
  // multicast, reserved and broadcast.
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  // IPv6: unspecified, loopback, IPv4-compatible, NAT64 (may embed a private IPv4), discard, documentation,
  // unique local (fd00:ec2::254, AWS's metadata address, included), link-local, site-local, multicast.
  // IPv4-mapped addresses (::ffff:a.b.c.d) are read as their IPv4 address (config/ip-ranges.ts).
  '::/96',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001:db8::/32',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

const refusedAddress = ipMatcher(REFUSED_RANGES);

/** The two allow-lists, from the configuration. */
export interface TargetRules {
  /** Hosts reachable over http:// (AUTH_WEBHOOK_ALLOW_HTTP_HOSTS). */
  httpHosts: readonly string[];
  /** Host names, addresses or CIDR ranges opened although private (AUTH_WEBHOOK_ALLOW_PRIVATE). */
  privateTargets: readonly string[];
}

export function targetRules(config: ConfigSnapshot): TargetRules {
  return {
    httpHosts: config.get('WEBHOOK_ALLOW_HTTP_HOSTS').map(normalHost),
    privateTargets: config.get('WEBHOOK_ALLOW_PRIVATE').map(normalHost),
  };
}

/** A host name as compared: lower case, without a trailing dot or IPv6 brackets. */
export function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '');
}

/** Whether `host` (normalised) names the local machine whatever DNS says (RFC 6761). */
function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.localdomain';
}

/**
 * Why `address` may not be reached for a URL of host `host` (null: it may): a refused range not opened by
 * AUTH_WEBHOOK_ALLOW_PRIVATE (by the address, a range holding it, or the URL's host name).
 */
export function addressRefusal(address: string, host: string, rules: TargetRules): string | null {
  const ip = parseIp(address);
  if (!ip) return `${address} is not an IP address`;
  if (!refusedAddress(address)) return null;
  const allowed = rules.privateTargets.includes(normalHost(host)) || ipMatcher(rules.privateTargets)(address);
  return allowed
    ? null
    : `${address} is a loopback, private, link-local, reserved or metadata address (AUTH_WEBHOOK_ALLOW_PRIVATE)`;
}

/** A subscription URL that passed the rules: the URL and its host as compared. */
export interface CheckedTarget {
  url: URL;
  host: string;
  /** The host is an IP address (no resolution: checked here). */
  literal: boolean;
}

/**
 * Checks a subscription URL before any connection: the scheme, no credentials, and for an IP address or
 * a local name the address rules. A host name's addresses are checked once resolved (the Node host) or
 * left to the platform's fetch (the edge: docs/webhooks.md, "Targets"). Returns the reason of a refusal.
 */
export function checkTarget(text: string, rules: TargetRules): CheckedTarget | { refused: string } {
  let url: URL;
  try {
    // The WHATWG parser turns the other spellings of IPv4 (2130706433, 0x7f.1, 0177.0.0.1) into dotted
    // quads, so the checks below see the address a connection would use.
    url = new URL(text);
  } catch {
    return { refused: 'not an absolute URL' };
  }
  const host = normalHost(url.hostname);
  if (url.username !== '' || url.password !== '') return { refused: 'a user name or password in the URL' };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { refused: 'only https:// URLs' };
  if (url.protocol === 'http:' && !rules.httpHosts.includes(host))
    return { refused: 'only https:// URLs (http:// for the hosts of AUTH_WEBHOOK_ALLOW_HTTP_HOSTS)' };
  if (host === '') return { refused: 'no host' };
  if (url.hash !== '') return { refused: 'a fragment (#...) in the URL' };
  const literal = parseIp(host) !== null;
  if (literal) {
    const refusal = addressRefusal(host, host, rules);
    if (refusal) return { refused: refusal };
  } else if (isLocalName(host) && !rules.privateTargets.includes(host)) {
    return { refused: `${host} is the local machine (AUTH_WEBHOOK_ALLOW_PRIVATE)` };
  } else if (!/^[a-z0-9.-]+$/.test(host) || !host.includes('.')) {
    // A single label (intranet, metadata) is resolved by search domains: only on purpose.
    if (!rules.privateTargets.includes(host))
      return { refused: `${host} is no public host name (AUTH_WEBHOOK_ALLOW_PRIVATE)` };
  }
  return { url, host, literal };
}

/**
 * Why the URL of a subscription delivered through the bridge is refused (null: it is not): https:// only (the
 * bridge exists to verify a private CA), no user name or password, no fragment. Its addresses are the bridge's
 * to judge (BRIDGE_WEBHOOK_HOSTS): such a receiver is on-prem by design (docs/webhooks.md, "Targets").
 */
export function bridgeTargetRefusal(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:') return 'only https:// URLs through the bridge';
  if (url.username !== '' || url.password !== '') return 'a user name or password in the URL';
  if (url.hostname === '') return 'no host';
  if (url.hash !== '') return 'a fragment (#...) in the URL';
  return null;
}

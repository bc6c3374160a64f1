/**
 * IP addresses and CIDR ranges (IPv4 and IPv6), for AUTH_TRUSTED_PROXIES: parsing and matching,
 * with no dependency, so that the configuration registry can check the variable's items.
 */
/** An IPv4 address as 4 bytes, or null. */
function parseIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b <= 255) ? bytes : null;
}

/** An IPv6 address (optionally with an IPv4 tail) as 16 bytes, or null. */
function parseIPv6(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const items = half.split(':');
    for (const [i, item] of items.entries()) {
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = parseIPv4(item);
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-f]{1,4}$/i.test(item)) {
        out.push(parseInt(item, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return all.flatMap((g) => [g >> 8, g & 0xff]);
}

/**
 * An IP address as bytes: 4 for IPv4 (IPv4-mapped IPv6 such as ::ffff:10.0.0.1 included, as Node
 * reports IPv4 peers on a dual-stack socket), 16 for IPv6 (a zone id is ignored); null otherwise.
 */
export function parseIp(text: string): number[] | null {
  const v4 = parseIPv4(text);
  if (v4) return v4;
  const v6 = parseIPv6(text.replace(/%.*$/, ''));
  if (!v6) return null;
  const mapped = v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
  return mapped ? v6.slice(12) : v6;
}

interface Range {
  bytes: number[];
  prefix: number;
}

/** An address or a CIDR range (`10.0.0.0/8`, `fd00::/8`), or null when malformed. */
function parseRange(text: string): Range | null {
  const [addr, bits, extra] = text.split('/');
  if (extra !== undefined || addr === undefined) return null;
  const bytes = parseIp(addr);
  if (!bytes) return null;
  const max = bytes.length * 8;
  if (bits === undefined) return { bytes, prefix: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return { bytes, prefix: Number(bits) };
}

/** Configuration check of one AUTH_TRUSTED_PROXIES item. */
export function checkProxyRange(item: string): string | null {
  return parseRange(item) ? null : 'IP addresses or CIDR ranges such as 10.0.0.0/8 or fd00::/8';
}

/** Configuration check of an item that is an IP address, a CIDR range or a host name (AUTH_WEBHOOK_ALLOW_PRIVATE). */
export function checkHostOrRange(item: string): string | null {
  if (parseRange(item)) return null;
  const host = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;
  return host.test(item) ? null : 'host names, IP addresses or CIDR ranges such as 10.0.0.0/8 or fd00::/8';
}

function inRange(ip: number[], r: Range): boolean {
  if (ip.length !== r.bytes.length) return false;
  for (let bit = 0; bit < r.prefix; bit++) {
    const mask = 0x80 >> (bit % 8);
    if ((ip[bit >> 3]! & mask) !== (r.bytes[bit >> 3]! & mask)) return false;
  }
  return true;
}

/** A predicate telling whether an address lies in one of `ranges` (malformed items never match). */
export function ipMatcher(ranges: readonly string[]): (address: string | undefined) => boolean {
  const parsed = ranges.map(parseRange).filter((r): r is Range => r !== null);
  const matches = (address: string) => {
    const ip = parseIp(address);
    return ip !== null && parsed.some((r) => inRange(ip, r));
  };
  // The answers for the addresses seen last: every request asks about its peer, and a host's peers are
  // few (its proxies, its load balancer). Bounded in count and in length (X-Forwarded-For hops are the
  // client's text); emptied when full, so a spray of addresses costs what it did without it.
  const known = new Map<string, boolean>();
  return (address) => {
    if (address === undefined) return false;
    if (address.length > LONGEST_ADDRESS) return matches(address);
    let inside = known.get(address);
    if (inside === undefined) {
      inside = matches(address);
      if (known.size >= KNOWN_ADDRESSES) known.clear();
      known.set(address, inside);
    }
    return inside;
  };
}

/** How many addresses' answers a matcher keeps, and the longest it keeps (an IPv6 address with a zone). */
const KNOWN_ADDRESSES = 1024;
const LONGEST_ADDRESS = 64;

/**
 * The bucket a client address counts in (the per-address login throttle, architecture.md §4): an
 * IPv4 address itself (/32), an IPv6 address's /64 (one subscriber usually holds a whole /64), or
 * the text itself when it is no address.
 */
export function addressBucket(address: string): string {
  const ip = parseIp(address);
  if (!ip) return address;
  if (ip.length === 4) return ip.join('.');
  const groups = [];
  for (let i = 0; i < 8; i += 2) groups.push(((ip[i]! << 8) | ip[i + 1]!).toString(16));
  return `${groups.join(':')}::/64`;
}

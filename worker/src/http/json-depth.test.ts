import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, isJsonType, jsonNestsDeeper } from './json-depth.js';

describe('jsonNestsDeeper', () => {
  it('counts arrays and objects, not brackets inside strings (escaped quotes included)', () => {
    expect(jsonNestsDeeper('{"a":[1,{"b":[]}]}', 4)).toBe(false);
    expect(jsonNestsDeeper('{"a":[1,{"b":[]}]}', 3)).toBe(true);
    expect(jsonNestsDeeper(`{"s":"${'['.repeat(500)}\\"${'{'.repeat(500)}"}`, 1)).toBe(false);
    expect(jsonNestsDeeper(`"\\\\"${'['.repeat(3)}`, 2)).toBe(true);
  });

  it('measures 30,000 levels in one pass (no recursion) and allows exactly the limit', () => {
    const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(jsonNestsDeeper(nested(30_000), MAX_JSON_DEPTH)).toBe(true);
    expect(jsonNestsDeeper(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonNestsDeeper(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
  });

  it('applies to JSON media types only', () => {
    for (const t of ['application/json', 'application/json; charset=utf-8', 'application/problem+json'])
      expect(isJsonType(t), t).toBe(true);
    for (const t of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonx'])
      expect(isJsonType(t), String(t)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { rawHeader } from './node-messages.js';

/** What Fetch's Headers answers for the same raw header list (the behaviour rawHeader must keep). */
function viaFetch(raw: string[], name: string): string | undefined {
  const headers = new Headers();
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers.get(name) ?? undefined;
}

describe('rawHeader', () => {
  const raw = [
    'Host',
    '127.0.0.1:8080',
    'authorization',
    'Bearer ast_x',
    'X-Forwarded-For',
    '203.0.113.7',
    'x-forwarded-for',
    ' 10.0.0.1\t',
    'Cookie',
    'a=1',
    'cookie',
    'b=2',
    'X-Empty',
    '',
    'X-Padded',
    '  v  ',
  ];

  it('answers as Fetch Headers does: any case, repeats joined (cookies with "; "), spaces trimmed', () => {
    for (const name of [
      'authorization',
      'Authorization',
      'X-FORWARDED-FOR',
      'cookie',
      'x-empty',
      'x-padded',
      'host',
      'absent',
    ])
      expect(rawHeader(raw, name), name).toBe(viaFetch(raw, name));
    expect(rawHeader(raw, 'x-forwarded-for')).toBe('203.0.113.7, 10.0.0.1');
    expect(rawHeader(raw, 'Cookie')).toBe('a=1; b=2');
    expect(rawHeader(raw, 'X-Empty')).toBe('');
    expect(rawHeader(raw, 'Authorizatio')).toBeUndefined();
  });
});

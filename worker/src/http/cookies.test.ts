/**
 * The one-cookie reader of the hot path against Hono's parser, which it replaces: the same value for
 * every header, the edge cases written out and thousands generated; and linear in the header's length.
 */
import fc from 'fast-check';
import { parse } from 'hono/utils/cookie';
import { describe, expect, it } from 'vitest';
import { cookieValue } from './cookies.js';

const hono = (header: string, name: string) => parse(header, name)[name];

describe('cookieValue', () => {
  it('reads what Hono reads, case by case', () => {
    const name = 'auth_session';
    const headers = [
      'auth_session=abc',
      ' auth_session = abc ; other=1',
      'other=1; auth_session=v1.abc-_DEF',
      'xauth_session=no; auth_session=yes',
      'auth_session_x=no; auth_session=yes',
      'auth_session=first; auth_session=second',
      'auth_session=bad,value; auth_session=good',
      'auth_session="quoted"',
      'auth_session="',
      'auth_session=',
      'auth_session',
      'auth_session;auth_session=late',
      'a=b=c; auth_session=x=y',
      'auth_session=caf%C3%A9',
      'auth_session=bad%E0%A4%A',
      '\tauth_session=tab\t',
      'auth_session=with space inside',
      ';;;auth_session=after;;',
      'other="x;auth_session=inside"; auth_session=real',
      '',
      'no-equals-anywhere; another',
    ];
    for (const header of headers) expect(cookieValue(header, name), header).toBe(hono(header, name));
  });

  it('reads what Hono reads for generated headers', () => {
    const piece = fc.constantFrom('auth_session', 'auth', 'x', '=', ';', ' ', '\t', '"', '%', '%41', ',', 'v1.ab');
    const header = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(header, (h) => {
        expect(cookieValue(h, 'auth_session')).toBe(hono(h, 'auth_session'));
      }),
      { numRuns: 20_000 },
    );
  });

  it('stays linear in a header of many pairs without "=" (no quadratic rescans)', () => {
    const header = `${';x'.repeat(200_000)};auth_session=found`;
    // Each position is visited a bounded number of times: a quadratic scan would not end in the test's time.
    expect(cookieValue(header, 'auth_session')).toBe('found');
    expect(cookieValue(`${'x;'.repeat(200_000)}`, 'auth_session')).toBeUndefined();
  });
});

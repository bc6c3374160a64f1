import { describe, expect, it } from 'vitest';
import { loginKey, loginViolation, normaliseLogin } from './login-name.js';

describe('loginKey', () => {
  it('is one key for every case and width of a login', () => {
    const keys = ['admin', 'Admin', 'ADMIN', 'ＡＤＭＩＮ', 'ａｄｍｉｎ', 'ＡdＭin'].map(loginKey);
    expect(new Set(keys)).toEqual(new Set(['admin']));
    expect(loginKey('j.doe@Ｅｘａｍｐｌｅ')).toBe('j.doe@example');
  });

  it('ignores what a directory ignores: surrounding white space, runs of it, invisible characters', () => {
    const keys = ['bob ', ' bob', '\u3000Bob\t', 'b\u200Bob', 'b\u00ADob', '\uFEFFbob', 'bo\u2060b'].map(loginKey);
    expect(new Set(keys)).toEqual(new Set(['bob']));
    expect(loginKey('doe,  john')).toBe(loginKey('Doe, John'));
    expect(loginKey(' ')).toBe('');
  });

  it('folds case fully, not just lower case', () => {
    expect(loginKey('Straße')).toBe(loginKey('STRASSE'));
    expect(loginKey('ΟΔΟΣ')).toBe(loginKey('οδοσ'));
    expect(loginKey('ΟΔΟΣ')).toBe(loginKey('οδος'));
    expect(loginKey('ﬁle')).toBe('file');
  });

  it('does not depend on the Unicode normal form of the input', () => {
    expect(loginKey('Jose\u0301')).toBe(loginKey('José'));
    expect(loginKey('ﾃｽﾄ')).toBe(loginKey('テスト'));
    expect(loginKey('ｶﾞ')).toBe('ガ');
  });

  it('is stable: a key is its own key', () => {
    for (const login of ['Straße', 'ΟΔΟΣ', 'ＡＤＭＩＮ', 'İstanbul', 'ǅemal', 'ŉ', 'José']) {
      expect(loginKey(loginKey(login))).toBe(loginKey(login));
    }
  });

  it('keeps ASCII keys as they were (lower case), so stored keys of ASCII logins never change', () => {
    expect(loginKey('Root-Admin_1.x@Y')).toBe('root-admin_1.x@y');
  });
});

describe('loginViolation', () => {
  it('accepts letters of any script, digits and . _ - @, NFC-normalised first', () => {
    const allowed = ['j.doe', 'José', normaliseLogin('Jose\u0301'), 'Ηλίας', '山田', 'a_b-c@d', '1st'];
    allowed.push('ＲＯＯＴ－ＡＤＭＩＮ', 'ｶﾞｷ');
    for (const login of allowed) expect(loginViolation(login)).toBeUndefined();
  });

  it('names why a login is refused, without echoing invisible text', () => {
    expect(loginViolation('a\nb')).toMatch(/control character \(U\+000A/);
    expect(loginViolation('zero\u200Bwidth')).toMatch(/invisible formatting character \(U\+200B\)/);
    expect(loginViolation('<b>bold</b>')).toMatch(/starts with "<" \(U\+003C\)/);
    expect(loginViolation('x<script>')).toMatch(/"<" \(U\+003C\)/);
    expect(loginViolation('doe, john')).toMatch(/"," \(U\+002C\)/);
    expect(loginViolation('two words')).toMatch(/a space \(U\+0020\)/);
    expect(loginViolation('')).toBe('the login is empty');
    expect(loginViolation('x'.repeat(151))).toMatch(/longer than 150/);
    expect(loginViolation('x'.repeat(150))).toBeUndefined();
    expect(loginViolation('.hidden')).toMatch(/starts with/);
    // Judged after width mapping, as the key is: a full-width "<" is a "<".
    expect(loginViolation('ａ＜ｂ＞')).toMatch(/U\+FF1C/);
  });

  it('refuses what PRECIS IdentifierClass refuses, phonetic letters and letters whose lower case adds a mark', () => {
    expect(loginViolation('admin\u{1D7CF}')).toMatch(/U\+1D7CF, a compatibility form of "1" \(PRECIS/);
    expect(loginViolation('\uFB01le')).toMatch(/U\+FB01, a compatibility form of "fi"/);
    expect(loginViolation('\u1F88x')).toMatch(/U\+1F88, a title-case letter/);
    expect(loginViolation('\u1100\u1161\u11A8\u11FA')).toMatch(/old Hangul jamo/);
    expect(loginViolation('\u1D00dmin')).toMatch(/U\+1D00, a phonetic letter/);
    expect(loginViolation('ADM\u0130N')).toMatch(/U\+0130, a letter whose lower case adds a combining mark/);
    // Width forms are mapped first (RFC 8265), so they are not compatibility characters here.
    for (const login of ['ＡＤＭＩＮ', 'ｶﾞｷ', 'Straße', '한국어']) expect(loginViolation(login)).toBeUndefined();
  });
});

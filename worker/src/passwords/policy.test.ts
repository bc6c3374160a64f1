/** Password composition policy: config wiring, every rule at its boundaries, Unicode classes, no echo. */
import { describe, expect, it } from 'vitest';
import { overlayUiValues, parseEnvironment } from '../config/index.js';
import { BloomFilter } from './blocklist/filter.js';
import { bundledBlocklist } from './blocklist/index.js';
import { CONTEXT_WORD_MIN, checkPassword, passwordPolicy } from './policy.js';
import type { PasswordPolicy, PolicyRule } from './policy.js';

const P: PasswordPolicy = {
  minLength: 8,
  maxLength: 20,
  specialSymbols: ['$', '@', '#', '%'],
  specialMin: 1,
  digitMin: 1,
  lowerMin: 1,
  upperMin: 1,
  serviceName: 'AUTH',
};
const P2: PasswordPolicy = { ...P, specialMin: 2, digitMin: 2, lowerMin: 2, upperMin: 2 };
const ONLY = '(only letters, digits and $ @ # %)';

const rules = (password: string, policy: PasswordPolicy = P): PolicyRule[] =>
  checkPassword(password, policy).map((v) => v.rule);

describe('passwordPolicy: reads the effective configuration', () => {
  it('defaults of the registry', () => {
    expect(passwordPolicy(parseEnvironment({}))).toEqual(P);
  });

  it('environment values', () => {
    const policy = passwordPolicy(
      parseEnvironment({
        USER_PASSWORD_MIN_LENGTH: '10',
        USER_PASSWORD_MAX_LENGTH: '12',
        USER_PASSWORD_SPECIAL_SYM: '!,?',
        USER_PASSWORD_SPECIAL_SYM_MIN: '2',
        USER_PASSWORD_DIGITAL_MIN: '3',
        USER_PASSWORD_LOWER_MIN: '0',
        USER_PASSWORD_UPPER_MIN: '4',
      }),
    );
    expect(policy).toEqual({
      minLength: 10,
      maxLength: 12,
      specialSymbols: ['!', '?'],
      specialMin: 2,
      digitMin: 3,
      lowerMin: 0,
      upperMin: 4,
      serviceName: 'AUTH',
    });
    expect(checkPassword('ABCD123!?', policy).map((v) => [v.rule, v.actual])).toEqual([['min_length', 9]]);
    expect(checkPassword('ABCD123!?$', policy).map((v) => [v.rule, v.actual])).toEqual([['disallowed_character', 1]]);
  });

  it('a UI-saved value applies to the next policy read', () => {
    const env = parseEnvironment({});
    expect(rules('Passw0rd$', passwordPolicy(env))).toEqual([]);
    const changed = overlayUiValues(env, { USER_PASSWORD_MIN_LENGTH: '12' });
    expect(checkPassword('Passw0rd$', passwordPolicy(changed))).toEqual([
      { rule: 'min_length', required: 12, actual: 9, message: 'at least 12 characters' },
    ]);
  });
});

describe('length', () => {
  const of = (n: number): string => 'Aa1$' + 'a'.repeat(n - 4);

  it('min-1 fails, min passes', () => {
    expect(checkPassword(of(7), P)).toEqual([
      { rule: 'min_length', required: 8, actual: 7, message: 'at least 8 characters' },
    ]);
    expect(checkPassword(of(8), P)).toEqual([]);
  });

  it('max passes, max+1 fails', () => {
    expect(checkPassword(of(20), P)).toEqual([]);
    expect(checkPassword(of(21), P)).toEqual([
      { rule: 'max_length', required: 20, actual: 21, message: 'at most 20 characters' },
    ]);
  });

  it('counts code points: a supplementary-plane letter counts 1 (and as upper-case)', () => {
    const bold = '𝐀'; // U+1D400 MATHEMATICAL BOLD CAPITAL A
    expect([bold.length, /^\p{Lu}$/u.test(bold)]).toEqual([2, true]); // fixture: 2 UTF-16 units, Lu
    const pw = bold + 'bcdef1$'; // 8 code points, 9 UTF-16 units, the only upper-case letter is 𝐀
    expect(checkPassword(pw, P)).toEqual([]);
    expect(checkPassword(pw, { ...P, maxLength: 8 })).toEqual([]);
    expect(checkPassword(pw, { ...P, minLength: 9 }).map((v) => [v.rule, v.actual])).toEqual([['min_length', 8]]);
  });

  it('an emoji counts 1 toward the length (and is disallowed)', () => {
    const pw = 'Abcdef1$😀'; // 9 code points, 10 UTF-16 units
    expect(checkPassword(pw, { ...P, maxLength: 9 }).map((v) => [v.rule, v.actual])).toEqual([
      ['disallowed_character', 1],
    ]);
  });
});

describe('class minimums (raised to 2), min-1 fails and min passes', () => {
  it('all classes at their minimum pass', () => {
    expect(checkPassword('AAbb11$$', P2)).toEqual([]);
  });

  // One character of the class is replaced by a caseless letter, which counts toward nothing.
  it.each([
    ['special_min', 'AAbb11$中', 'at least 2 special characters from $ @ # %'],
    ['digit_min', 'AAbb1中$$', 'at least 2 digits'],
    ['lower_min', 'AAb中11$$', 'at least 2 lower-case letters'],
    ['upper_min', 'A中bb11$$', 'at least 2 upper-case letters'],
  ] as const)('%s', (rule, password, message) => {
    expect(checkPassword(password, P2)).toEqual([{ rule, required: 2, actual: 1, message }]);
  });

  it('each special symbol of the list counts', () => {
    expect(checkPassword('AAbb11$@', P2)).toEqual([]);
    expect(checkPassword('AAbb11#%', P2)).toEqual([]);
  });

  it.each([
    ['specialMin', 'Passw0rd', 'special_min'],
    ['digitMin', 'Password$', 'digit_min'],
    ['lowerMin', 'PASSW0RD$', 'lower_min'],
    ['upperMin', 'passw0rd$', 'upper_min'],
  ] as const)('%s 0 disables the rule', (key, password, rule) => {
    expect(rules(password, P)).toEqual([rule]);
    expect(rules(password, { ...P, [key]: 0 })).toEqual([]);
  });

  it('all minimums 0: any allowed composition passes', () => {
    const none = { ...P, specialMin: 0, digitMin: 0, lowerMin: 0, upperMin: 0 };
    expect(rules('中中中中中中中中', none)).toEqual([]);
    expect(rules('12345678', none)).toEqual([]);
  });
});

describe('disallowed characters', () => {
  it.each([
    ['space', ' '],
    ['!', '!'],
    ['tab', '\t'],
    ['NUL', '\0'],
    ['-', '-'],
    ['combining acute U+0301', '\u0301'],
    ['superscript two (No, not Nd)', '²'],
    ['euro sign', '€'],
    ['emoji', '😀'],
    ['unpaired surrogate', '\uD800'],
  ])('%s', (_name, ch) => {
    expect(checkPassword('Passw0rd$' + ch, P)).toEqual([
      { rule: 'disallowed_character', required: 0, actual: 1, message: `1 character is not allowed ${ONLY}` },
    ]);
  });

  it('counts every disallowed character', () => {
    expect(checkPassword('Pass w0rd-$!', P)).toEqual([
      { rule: 'disallowed_character', required: 0, actual: 3, message: `3 characters are not allowed ${ONLY}` },
    ]);
  });

  it('no normalisation: a decomposed accent is disallowed, the precomposed letter counts', () => {
    expect(rules('Passw0rd\u00e9$', { ...P, lowerMin: 7 })).toEqual([]);
    const decomposed = checkPassword('Passw0rde\u0301$', { ...P, maxLength: 11 });
    expect(decomposed.map((v) => [v.rule, v.actual])).toEqual([['disallowed_character', 1]]);
  });

  it('an empty special list allows only letters and digits', () => {
    const noSpecials = { ...P, specialSymbols: [], specialMin: 0 };
    expect(rules('Passw0rd', noSpecials)).toEqual([]);
    expect(checkPassword('Passw0rd$', noSpecials)).toEqual([
      {
        rule: 'disallowed_character',
        required: 0,
        actual: 1,
        message: '1 character is not allowed (only letters and digits)',
      },
    ]);
    expect(checkPassword('Passw0rd', { ...noSpecials, specialMin: 1 })[0]?.message).toBe(
      'at least 1 special character',
    );
  });
});

describe('special symbols list changed to ["!"]', () => {
  const bang: PasswordPolicy = { ...P, specialSymbols: ['!'] };

  it("'!' counts as special", () => {
    expect(checkPassword('Passw0rd!', bang)).toEqual([]);
  });

  it("'$' is disallowed and does not count", () => {
    expect(checkPassword('Passw0rd$', bang)).toEqual([
      {
        rule: 'disallowed_character',
        required: 0,
        actual: 1,
        message: '1 character is not allowed (only letters, digits and !)',
      },
      { rule: 'special_min', required: 1, actual: 0, message: 'at least 1 special character from !' },
    ]);
  });
});

describe('letters of any script count by case', () => {
  it('Cyrillic', () => {
    expect(checkPassword('Пароль1$', P)).toEqual([]);
    expect(rules('пароль1$', P)).toEqual(['upper_min']);
    expect(checkPassword('ПАРОль1$', { ...P, upperMin: 5, lowerMin: 3 }).map((v) => [v.rule, v.actual])).toEqual([
      ['lower_min', 2],
      ['upper_min', 4],
    ]);
  });

  it('Greek', () => {
    expect(checkPassword('Ωμέγα12#', P)).toEqual([]);
    expect(checkPassword('ΩΜΈΓΑ12#', P).map((v) => [v.rule, v.actual])).toEqual([['lower_min', 0]]);
  });

  it('titlecase counts as upper-case', () => {
    expect(/^\p{Lt}$/u.test('ǅ')).toBe(true); // fixture: U+01C5 is Lt
    expect(checkPassword('ǅabcde1$', P)).toEqual([]);
  });

  it('caseless letters are allowed but count toward no class', () => {
    expect(checkPassword('中中中中1$aA', P)).toEqual([]);
    expect(checkPassword('中文ー中中1$a', P)).toEqual([
      { rule: 'upper_min', required: 1, actual: 0, message: 'at least 1 upper-case letter' },
    ]);
    expect(checkPassword('中中中中1$aA', { ...P, lowerMin: 2 }).map((v) => [v.rule, v.actual])).toEqual([
      ['lower_min', 1],
    ]);
  });

  it('decimal digits of any script count as digits', () => {
    expect(checkPassword('Passwor٣$', P)).toEqual([]); // ٣ ARABIC-INDIC DIGIT THREE
    expect(checkPassword('Passwor५$', P)).toEqual([]); // ५ DEVANAGARI DIGIT FIVE
  });
});

describe('several broken rules', () => {
  it('are all listed, in the stable order', () => {
    expect(checkPassword('a b', P)).toEqual([
      { rule: 'min_length', required: 8, actual: 3, message: 'at least 8 characters' },
      { rule: 'disallowed_character', required: 0, actual: 1, message: `1 character is not allowed ${ONLY}` },
      { rule: 'special_min', required: 1, actual: 0, message: 'at least 1 special character from $ @ # %' },
      { rule: 'digit_min', required: 1, actual: 0, message: 'at least 1 digit' },
      { rule: 'upper_min', required: 1, actual: 0, message: 'at least 1 upper-case letter' },
    ]);
    expect(rules('A'.repeat(21) + '\t\t', P)).toEqual([
      'max_length',
      'disallowed_character',
      'special_min',
      'digit_min',
      'lower_min',
    ]);
  });

  it('the empty password breaks every rule that has a minimum', () => {
    expect(rules('', P)).toEqual(['min_length', 'special_min', 'digit_min', 'lower_min', 'upper_min']);
  });
});

describe('messages', () => {
  it('never contain the characters of the password', () => {
    // Characters that no message template uses (space and '-' appear in the templates themselves).
    const secret = ['!', '&', '€', '😀', '\t', '\0', '\u0301', '¿', 'Ж'];
    const violations = checkPassword('xy' + secret.join(''), P);
    expect(violations.map((v) => v.rule)).toContain('disallowed_character');
    for (const { message } of violations) {
      for (const ch of secret) expect(message.includes(ch), `${JSON.stringify(ch)} in ${message}`).toBe(false);
    }
  });
});

describe('blocklist rules: common passwords, the login, the service name (case-insensitive)', () => {
  const blocklist = bundledBlocklist();

  it('a common password that passes every composition rule is refused as common_password', () => {
    for (const p of ['P@ssw0rd', 'Pa$$w0rd', 'Tr@nsf3r', 'G00dpa$$w0rd']) {
      expect(rules(p), p).toEqual([]);
      expect(checkPassword(p, P, { blocklist }), p).toEqual([
        { rule: 'common_password', required: 0, actual: 1, message: 'not one of the most common passwords' },
      ]);
    }
    expect(checkPassword('k7#Vq9$mXz2@', P, { blocklist })).toEqual([]);
  });

  it('the list is checked only when given (the browser has none) and alongside the other rules', () => {
    expect(rules('P@ssw0rd')).toEqual([]);
    const own = BloomFilter.compile(['zebra$lamp42'], 0.001);
    expect(checkPassword('ZEBRA$LAMP42', P, { blocklist: own }).map((v) => v.rule)).toEqual([
      'lower_min',
      'common_password',
    ]);
  });

  it('contains_login: the login anywhere, in any case; the name part of an e-mail login', () => {
    const login = (password: string, l: string) => checkPassword(password, P, { login: l }).map((v) => v.rule);
    expect(login('Xy#1jdoe2024', 'jdoe')).toEqual(['contains_login']);
    expect(login('Xy#1JDoe2024', 'JDOE')).toEqual(['contains_login']);
    expect(login('Xy#1JSmith99', 'jsmith@example.com')).toEqual(['contains_login']);
    expect(login('Xy#1jdo2024e', 'jdoe')).toEqual([]);
    expect(checkPassword('Xy#1jdoe2024', P, { login: 'jdoe' })[0]?.message).toBe('not containing the login');
  });

  it(`contains_login and contains_service_name apply from ${CONTEXT_WORD_MIN} code points`, () => {
    expect(CONTEXT_WORD_MIN).toBe(4);
    expect(checkPassword('Xy#1bob2024a', P, { login: 'bob' })).toEqual([]);
    expect(checkPassword('Xy#1boba2024', P, { login: 'boba' }).map((v) => v.rule)).toEqual(['contains_login']);
    expect(rules('Xy#1Ops2024a', { ...P, serviceName: 'OPS' })).toEqual([]);
  });

  it('contains_service_name: AUTH_PROJECT_NAME in any case', () => {
    expect(checkPassword('My#Auth2024', P)).toEqual([
      { rule: 'contains_service_name', required: 0, actual: 1, message: 'not containing the name of the service' },
    ]);
    expect(rules('Zz#Portal2024', { ...P, serviceName: 'Portal' })).toEqual(['contains_service_name']);
  });

  it('names no password text in a message', () => {
    const v = checkPassword('P@ssw0rdjdoe', P, { login: 'jdoe', blocklist });
    for (const m of v.map((x) => x.message)) expect(m).not.toMatch(/ssw0rd|jdoe/i);
  });
});

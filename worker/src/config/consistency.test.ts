import { describe, expect, it } from 'vitest';
import { checkPassword, passwordPolicy } from '../passwords/policy.js';
import { findConflicts } from './consistency.js';
import { ConfigError } from './parse.js';
import { parseEnvironment } from './resolve.js';
import type { VarName } from './registry.js';

const defaults = parseEnvironment({});
/** The defaults with some values replaced, as a reader. */
const withValues = (values: Partial<Record<VarName, unknown>>) => (n: VarName) =>
  n in values ? values[n] : defaults.get(n);
const namesOf = (values: Partial<Record<VarName, unknown>>) =>
  findConflicts(withValues(values)).map((c) => [...c.names].sort());

describe('findConflicts', () => {
  it('the defaults fit together', () => {
    expect(findConflicts((n) => defaults.get(n))).toEqual([]);
  });

  it('minimum counts above the maximum length: no password can satisfy them (the audit case)', () => {
    const conflicts = findConflicts(withValues({ USER_PASSWORD_SPECIAL_SYM: [], USER_PASSWORD_UPPER_MIN: 30 }));
    expect(conflicts.map((c) => c.message)).toEqual([
      'the minimum counts USER_PASSWORD_SPECIAL_SYM_MIN (1) + USER_PASSWORD_DIGITAL_MIN (1) + ' +
        'USER_PASSWORD_LOWER_MIN (1) + ' +
        'USER_PASSWORD_UPPER_MIN (30) = 33 exceed USER_PASSWORD_MAX_LENGTH (20): no password can satisfy them',
      'USER_PASSWORD_SPECIAL_SYM_MIN (1) requires special characters, but USER_PASSWORD_SPECIAL_SYM lists none',
    ]);
  });

  it('the sum of the counts may equal the maximum length, and special characters may be off with an empty list', () => {
    expect(namesOf({ USER_PASSWORD_UPPER_MIN: 17 })).toEqual([]);
    expect(namesOf({ USER_PASSWORD_UPPER_MIN: 18 })).toEqual([
      [
        'USER_PASSWORD_DIGITAL_MIN',
        'USER_PASSWORD_LOWER_MIN',
        'USER_PASSWORD_MAX_LENGTH',
        'USER_PASSWORD_SPECIAL_SYM_MIN',
        'USER_PASSWORD_UPPER_MIN',
      ],
    ]);
    expect(namesOf({ USER_PASSWORD_SPECIAL_SYM: [], USER_PASSWORD_SPECIAL_SYM_MIN: 0 })).toEqual([]);
  });

  it('ordered pairs: min length and default session count at most their maximum', () => {
    expect(namesOf({ USER_PASSWORD_MIN_LENGTH: 21 })).toEqual([
      ['USER_PASSWORD_MAX_LENGTH', 'USER_PASSWORD_MIN_LENGTH'],
    ]);
    expect(namesOf({ AUTH_SESSIONS_DEFAULT_COUNT: 6 })).toEqual([
      ['AUTH_SESSIONS_DEFAULT_COUNT', 'AUTH_SESSIONS_MAX_COUNT'],
    ]);
    expect(namesOf({ USER_PASSWORD_MIN_LENGTH: 20, AUTH_SESSIONS_DEFAULT_COUNT: 5 })).toEqual([]);
  });

  it('every combination it accepts has a password that passes the policy (and the refused ones have none)', () => {
    for (const [upper, max, min] of [
      [17, 20, 8],
      [4, 4, 1],
      [0, 3, 3],
      [1, 10, 10],
      [2, 4, 4],
    ] as const) {
      const values = { USER_PASSWORD_UPPER_MIN: upper, USER_PASSWORD_MAX_LENGTH: max, USER_PASSWORD_MIN_LENGTH: min };
      const conflicts = findConflicts(withValues(values));
      const counts = 3 + upper; // special, digit, lower: 1 each by default
      expect(conflicts.length > 0, JSON.stringify(values)).toBe(counts > max || min > max);
      if (conflicts.length > 0) continue;
      const policy = passwordPolicy({ get: withValues(values), source: () => 'default' } as never);
      const password = `$1${'A'.repeat(upper)}${'a'.repeat(Math.max(1, min - 2 - upper))}`;
      expect(checkPassword(password, policy), JSON.stringify(values)).toEqual([]);
    }
  });
});

describe('parseEnvironment refuses values that do not fit together (a clear error at start)', () => {
  it('names every conflicting variable and its value', () => {
    try {
      parseEnvironment({
        USER_PASSWORD_SPECIAL_SYM: '',
        USER_PASSWORD_UPPER_MIN: '30',
        AUTH_SESSIONS_DEFAULT_COUNT: '9',
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const e = err as ConfigError;
      expect(e.issues).toHaveLength(3);
      expect(e.message).toContain('AUTH_SESSIONS_DEFAULT_COUNT (9) must not exceed AUTH_SESSIONS_MAX_COUNT (5)');
      expect(e.message).toContain('exceed USER_PASSWORD_MAX_LENGTH (20): no password can satisfy them');
      expect(e.message).toContain('USER_PASSWORD_SPECIAL_SYM_MIN=1, USER_PASSWORD_SPECIAL_SYM=)');
      expect(e.message).toContain('USER_PASSWORD_UPPER_MIN=30');
    }
  });

  it('values that fit together start as before', () => {
    expect(
      parseEnvironment({ USER_PASSWORD_SPECIAL_SYM: '', USER_PASSWORD_SPECIAL_SYM_MIN: '0' }).get(
        'USER_PASSWORD_SPECIAL_SYM',
      ),
    ).toEqual([]);
  });
});

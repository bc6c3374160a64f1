/**
 * Rules between variables that the bounds of each one cannot express: ordered pairs (min ≤ max)
 * and a password policy that some password can satisfy. Checked on the environment at start and
 * on the effective combination (saved, environment, defaults) after every change or reset through
 * /v3/settings, so that no setting can leave every password reset and change failing.
 */
import { formatValue, type ConfigIssue } from './parse.js';
import { REGISTRY, type VarName } from './registry.js';

/** Variables that cannot hold these values together, and why (naming each of them). */
export interface Conflict {
  readonly names: readonly VarName[];
  readonly message: string;
}

/** Reads the effective value of a variable. */
export type ValueReader = (name: VarName) => unknown;

/** Pairs that must stay ordered. */
const ORDERED: readonly [VarName, VarName][] = [
  ['USER_PASSWORD_MIN_LENGTH', 'USER_PASSWORD_MAX_LENGTH'],
  ['AUTH_SESSIONS_DEFAULT_COUNT', 'AUTH_SESSIONS_MAX_COUNT'],
];

/** The minimum counts of the password policy; a password holds them all within its maximum length. */
const COUNTS: readonly VarName[] = [
  'USER_PASSWORD_SPECIAL_SYM_MIN',
  'USER_PASSWORD_DIGITAL_MIN',
  'USER_PASSWORD_LOWER_MIN',
  'USER_PASSWORD_UPPER_MIN',
];

/**
 * Every conflict of the combination `get` reads. With no conflict, a password exists for any
 * policy: max(min length, sum of the counts) characters, the rest filled with lower-case letters.
 */
export function findConflicts(get: ValueReader): Conflict[] {
  const num = (n: VarName) => Number(get(n));
  const out: Conflict[] = [];
  for (const [lo, hi] of ORDERED) {
    if (num(lo) > num(hi)) {
      out.push({ names: [lo, hi], message: `${lo} (${num(lo)}) must not exceed ${hi} (${num(hi)})` });
    }
  }
  const max = 'USER_PASSWORD_MAX_LENGTH';
  const sum = COUNTS.reduce((s, n) => s + num(n), 0);
  if (sum > num(max)) {
    const terms = COUNTS.map((n) => `${n} (${num(n)})`).join(' + ');
    const message = `the minimum counts ${terms} = ${sum} exceed ${max} (${num(max)}): no password can satisfy them`;
    out.push({ names: [...COUNTS, max], message });
  }
  const symbols = get('USER_PASSWORD_SPECIAL_SYM') as readonly string[];
  const specialMin = num('USER_PASSWORD_SPECIAL_SYM_MIN');
  if (specialMin > 0 && symbols.length === 0) {
    out.push({
      names: ['USER_PASSWORD_SPECIAL_SYM_MIN', 'USER_PASSWORD_SPECIAL_SYM'],
      message:
        `USER_PASSWORD_SPECIAL_SYM_MIN (${specialMin}) requires special characters, ` +
        'but USER_PASSWORD_SPECIAL_SYM lists none',
    });
  }
  return out;
}

/**
 * A conflict as a configuration issue of the environment (the variables involved are named as
 * the environment sets them; none of them is a secret).
 */
export function conflictIssue(conflict: Conflict, get: ValueReader): ConfigIssue {
  const envs = conflict.names.map((n) => REGISTRY[n].env);
  const received = conflict.names.map((n) => `${REGISTRY[n].env}=${formatValue(REGISTRY[n], get(n))}`).join(', ');
  return {
    name: conflict.names.join(', '),
    env: envs.join(', '),
    expected: 'values that fit together',
    received,
    message: `${conflict.message} (${received})`,
  };
}

/**
 * Password composition policy (specification, "Password policy"): length bounds and minimum
 * counts of special characters, digits, lower- and upper-case letters. Pure: no I/O, no runtime APIs.
 */
import type { ConfigSnapshot } from '../config/index.js';

export interface PasswordPolicy {
  minLength: number;
  maxLength: number;
  /** The allowed special characters, one code point each. */
  specialSymbols: readonly string[];
  specialMin: number;
  digitMin: number;
  lowerMin: number;
  upperMin: number;
}

export type PolicyRule =
  | 'min_length'
  | 'max_length'
  | 'special_min'
  | 'digit_min'
  | 'lower_min'
  | 'upper_min'
  | 'disallowed_character';

export interface PolicyViolation {
  rule: PolicyRule;
  /** the limit of the rule */
  required: number;
  /** what the password has */
  actual: number;
  message: string;
}

/**
 * Reads the policy from the effective configuration (at request time, so a settings change applies to the next
 * request).
 */
export function passwordPolicy(config: ConfigSnapshot): PasswordPolicy {
  return {
    minLength: config.get('USER_PASSWORD_MIN_LENGTH'),
    maxLength: config.get('USER_PASSWORD_MAX_LENGTH'),
    specialSymbols: config.get('USER_PASSWORD_SPECIAL_SYM'),
    specialMin: config.get('USER_PASSWORD_SPECIAL_SYM_MIN'),
    digitMin: config.get('USER_PASSWORD_DIGITAL_MIN'),
    lowerMin: config.get('USER_PASSWORD_LOWER_MIN'),
    upperMin: config.get('USER_PASSWORD_UPPER_MIN'),
  };
}

// Letters of any script count by case; titlecase (e.g. 'ǅ') counts as upper.
const UPPER = /^[\p{Lu}\p{Lt}]$/u;
const LOWER = /^\p{Ll}$/u;
// Caseless letters (Chinese, modifier letters) are allowed but count toward no class.
const CASELESS = /^[\p{Lo}\p{Lm}]$/u;
const DIGIT = /^\p{Nd}$/u;

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/**
 * Every rule the password breaks (empty when it passes), in the order min_length, max_length,
 * disallowed_character, special_min, digit_min, lower_min, upper_min.
 *
 * The password is NOT normalised: the caller decides (e.g. NFC), so 'e' + U+0301 is a lower-case
 * letter plus a disallowed combining mark, while the precomposed 'é' is one lower-case letter.
 * Length counts Unicode code points, so an emoji or a supplementary-plane letter counts 1.
 */
export function checkPassword(password: string, policy: PasswordPolicy): PolicyViolation[] {
  const chars = [...password]; // code points; an unpaired surrogate is one element (and disallowed)
  const specials = new Set(policy.specialSymbols);
  let special = 0;
  let digit = 0;
  let lower = 0;
  let upper = 0;
  let disallowed = 0;
  for (const ch of chars) {
    if (specials.has(ch)) special++;
    else if (UPPER.test(ch)) upper++;
    else if (LOWER.test(ch)) lower++;
    else if (DIGIT.test(ch)) digit++;
    else if (!CASELESS.test(ch)) disallowed++;
  }

  const list = policy.specialSymbols.join(' ');
  const out: PolicyViolation[] = [];
  const add = (rule: PolicyRule, required: number, actual: number, message: string): void => {
    out.push({ rule, required, actual, message });
  };
  const length = chars.length;
  if (length < policy.minLength)
    add('min_length', policy.minLength, length, `at least ${plural(policy.minLength, 'character', 'characters')}`);
  if (length > policy.maxLength)
    add('max_length', policy.maxLength, length, `at most ${plural(policy.maxLength, 'character', 'characters')}`);
  if (disallowed > 0) {
    // Security: say how many characters are refused, never which ones (no password text in messages or logs).
    const allowed = list ? `letters, digits and ${list}` : 'letters and digits';
    add(
      'disallowed_character',
      0,
      disallowed,
      `${plural(disallowed, 'character is', 'characters are')} not allowed (only ${allowed})`,
    );
  }
  if (special < policy.specialMin) {
    const from = list ? ` from ${list}` : '';
    add(
      'special_min',
      policy.specialMin,
      special,
      `at least ${plural(policy.specialMin, 'special character', 'special characters')}${from}`,
    );
  }
  if (digit < policy.digitMin)
    add('digit_min', policy.digitMin, digit, `at least ${plural(policy.digitMin, 'digit', 'digits')}`);
  if (lower < policy.lowerMin)
    add(
      'lower_min',
      policy.lowerMin,
      lower,
      `at least ${plural(policy.lowerMin, 'lower-case letter', 'lower-case letters')}`,
    );
  if (upper < policy.upperMin)
    add(
      'upper_min',
      policy.upperMin,
      upper,
      `at least ${plural(policy.upperMin, 'upper-case letter', 'upper-case letters')}`,
    );
  return out;
}

/**
 * Password composition policy (specification, "Password policy"): length bounds and minimum
 * counts of special characters, digits, lower- and upper-case letters; and the blocklist rules
 * (docs/security.md, "Password blocklist"): not a common password, not containing the login or the service name. Pure:
 * no I/O, no runtime APIs (the console runs it in the browser, without the blocklist).
 */
import type { ConfigSnapshot } from '../config/index.js';
import type { PasswordSet } from './blocklist/filter.js';

export interface PasswordPolicy {
  minLength: number;
  maxLength: number;
  /** The allowed special characters, one code point each. */
  specialSymbols: readonly string[];
  specialMin: number;
  digitMin: number;
  lowerMin: number;
  upperMin: number;
  /** The service's name (AUTH_PROJECT_NAME), which a password must not contain. */
  serviceName: string;
}

/** What a password is checked against besides the policy. */
export interface PasswordContext {
  /** The account's login, which the password must not contain. */
  login?: string;
  /** The common passwords (absent in the browser: the API checks them when the password is sent). */
  blocklist?: PasswordSet;
}

/**
 * The shortest login (or service name) a password must not contain, in code points: a shorter one
 * ("al", "bob") is a fragment of too many unrelated passwords to refuse them all (docs/security.md, "Password
 * blocklist").
 */
export const CONTEXT_WORD_MIN = 4;

export type PolicyRule =
  | 'min_length'
  | 'max_length'
  | 'special_min'
  | 'digit_min'
  | 'lower_min'
  | 'upper_min'
  | 'disallowed_character'
  | 'common_password'
  | 'contains_login'
  | 'contains_service_name';

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
    serviceName: config.get('PROJECT_NAME'),
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
 * disallowed_character, special_min, digit_min, lower_min, upper_min, common_password, contains_login,
 * contains_service_name. The last three ignore case; common_password is checked only with a blocklist.
 *
 * The password is NOT normalised: the caller decides (e.g. NFC), so 'e' + U+0301 is a lower-case
 * letter plus a disallowed combining mark, while the precomposed 'é' is one lower-case letter.
 * Length counts Unicode code points, so an emoji or a supplementary-plane letter counts 1.
 */
export function checkPassword(
  password: string,
  policy: PasswordPolicy,
  context: PasswordContext = {},
): PolicyViolation[] {
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
  if (password !== '' && context.blocklist?.has(password))
    add('common_password', 0, 1, 'not one of the most common passwords');
  const folded = password.toLowerCase();
  if (contextWords(context.login ?? '').some((w) => folded.includes(w)))
    add('contains_login', 0, 1, 'not containing the login');
  if (contextWords(policy.serviceName ?? '').some((w) => folded.includes(w)))
    add('contains_service_name', 0, 1, 'not containing the name of the service');
  return out;
}

/**
 * The lower-cased words a password must not contain: the login (or name) itself and, for a login like
 * "name@example.com", its part before "@"; each only from CONTEXT_WORD_MIN code points.
 */
function contextWords(name: string): string[] {
  const whole = name.trim().toLowerCase();
  const words = [whole, whole.split('@')[0] ?? ''];
  return [...new Set(words)].filter((w) => [...w].length >= CONTEXT_WORD_MIN);
}

/**
 * What a login may be and the key that makes logins unique, one rule for every source: local
 * accounts (the admin API, the bootstrap), LDAP and OIDC accounts. A login is stored in NFC (the
 * same text, canonically composed) and never changed otherwise; a login that breaks the rule is
 * refused, not altered.
 */
import { z } from '@hono/zod-openapi';

export const LOGIN_MAX_LENGTH = 150;
export const LOGIN_RULE = 'letters, digits and . _ - @, starting with a letter or digit';

const ALLOWED = /^[\p{L}\p{Nd}][\p{L}\p{Nd}._@-]*$/u;
const FIRST = /[\p{L}\p{Nd}]/u;
const NEXT = /[\p{L}\p{Nd}._@-]/u;

/** The stored form of a login: NFC. Nothing else is changed (no trimming, no case, no width). */
export function normaliseLogin(login: string): string {
  return login.normalize('NFC');
}

/** Names a refused character without echoing markup or invisible text: `"<" (U+003C)`. */
function describeChar(ch: string): string {
  const code = `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  if (/\p{Cc}/u.test(ch)) return `a control character (${code}, e.g. a new line)`;
  if (/\p{Cf}/u.test(ch)) return `an invisible formatting character (${code})`;
  if (/\p{Z}/u.test(ch)) return `a space (${code})`;
  if (/\p{M}/u.test(ch)) return `a combining mark (${code})`;
  return /^[\x21-\x7e]$/.test(ch) ? `"${ch}" (${code})` : `the character ${code}`;
}

// Halfwidth and Fullwidth Forms: every character of the block with a decomposition has a <wide> or
// <narrow> one, so NFKC of these characters alone is RFC 8265's width mapping.
const WIDTH_FORMS = /[\uFF01-\uFFEE]/g;

/** RFC 8265 width mapping: full-width and half-width forms to their usual form (`Ａ－` to `A-`). */
function mapWidth(text: string): string {
  return text.replace(WIDTH_FORMS, (ch) => ch.normalize('NFKC')).normalize('NFC');
}

/**
 * Why `login` (normalised with normaliseLogin) is not allowed, or undefined when it is: 1 to 150
 * characters, letters of any script, digits and . _ - @, starting with a letter or digit, judged
 * after width mapping as the key is (so `ＲＯＯＴ－ＡＤＭＩＮ` passes and `＜` does not). This keeps out
 * new lines, invisible characters and markup, whatever the source; then the PRECIS IdentifierClass
 * checks of identifierViolation.
 */
export function loginViolation(login: string): string | undefined {
  const chars = [...login];
  if (chars.length === 0) return 'the login is empty';
  if (chars.length > LOGIN_MAX_LENGTH) return `the login is longer than ${LOGIN_MAX_LENGTH} characters`;
  if (ALLOWED.test(mapWidth(login))) return identifierViolation(login);
  const first = chars[0]!;
  if (!FIRST.test(mapWidth(first))) return `the login starts with ${describeChar(first)}; allowed: ${LOGIN_RULE}`;
  const bad = chars.find((ch) => !NEXT.test(mapWidth(ch)));
  return `the login holds ${bad ? describeChar(bad) : 'a character that is not allowed'}; allowed: ${LOGIN_RULE}`;
}

// Conjoining Hangul jamo left over after NFC (old Hangul): PRECIS's OldHangulJamo, disallowed.
const OLD_HANGUL_JAMO = /[\u1100-\u11FF\uA960-\uA97F\uD7B0-\uD7FF]/u;
// Phonetic Extensions (and their supplement): small capitals and other phonetic letters (`ᴀ`, `ᴢ`), of
// Identifier_Type Technical in Unicode TR #39, written in no language's names and many of them absent
// from confusables.txt although they look like Latin letters.
const PHONETIC = /[\u1D00-\u1DBF]/u;
const KEY_CHARS = /^[\p{L}\p{Nd}._@-]+$/u;

/**
 * Why a login already made of allowed characters is still refused (docs/security.md, "Look-alike
 * logins): PRECIS IdentifierClass (RFC 8264 §4.2, as RFC 8265 applies it after width mapping) refuses
 * compatibility characters (NFKC changes them: `𝟏`, `ﬁ`, `ſ`), title-case letters and old Hangul
 * jamo; phonetic letters are refused as technical; and a character whose case folding is not letters
 * or digits alone (`İ` folds to `i` and a combining dot) would make a key that breaks the rule.
 */
function identifierViolation(login: string): string | undefined {
  const precis = ' (PRECIS IdentifierClass, RFC 8264)';
  for (const ch of mapWidth(login)) {
    const compat = ch.normalize('NFKC');
    let why: string | undefined;
    if (compat !== ch) {
      const plain = KEY_CHARS.test(compat) ? ` "${compat}"` : '';
      why = `a compatibility form of${plain || ' another character'}${precis}; write${plain || ' that'} instead`;
    } else if (/\p{Lt}/u.test(ch)) {
      why = `a title-case letter${precis}`;
    } else if (OLD_HANGUL_JAMO.test(ch)) {
      why = `an old Hangul jamo${precis}`;
    } else if (PHONETIC.test(ch)) {
      why = 'a phonetic letter (small capital, ...) of no language (Unicode TR #39: technical)';
    } else if (!KEY_CHARS.test(loginKey(ch))) {
      why = 'a letter whose lower case adds a combining mark (as `İ`)';
    }
    if (why) return `the login holds ${describeChar(ch)}, ${why}`;
  }
  return undefined;
}

// Characters a directory's matching rules ignore (RFC 4518 §2.2 maps them to nothing): soft hyphen,
// zero-width characters, variation selectors, byte order mark, ...
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const WHITE_SPACE = /\p{White_Space}+/gu;

/**
 * The key that makes logins unique (and case-insensitive) for every source and every lookup:
 * NFC, full-width and half-width forms mapped to their usual form (RFC 8265 width mapping, so
 * `ＡＤＭＩＮ` is `admin`), then full case folding (lower, upper, lower: `ß` and `SS` are `ss`, `ς` is
 * `σ`), then NFC again. The same login always gives the same key, whatever its case or width.
 * Invisible (default-ignorable) characters are dropped, white space is trimmed and its runs count
 * as one space, as an LDAP directory matches (RFC 4518 insignificant space handling): otherwise
 * `bob `, ` bob` and `b\u200Bob` would bind as `bob` at the directory while each had a lockout
 * counter of its own, unlimited guesses (a valid login holds neither, so stored keys stay as they were).
 */
export function loginKey(login: string): string {
  const visible = login.normalize('NFC').replace(IGNORABLE, '').replace(WHITE_SPACE, ' ').trim();
  const folded = mapWidth(visible).toLowerCase().toUpperCase().toLowerCase();
  return folded.replace(/ς/g, 'σ').normalize('NFC');
}

/** Logins: the login rule of every source (accounts/login-name.ts), checked on the NFC form. */
export const LoginSchema = z
  .string()
  .superRefine((value, ctx) => {
    const why = loginViolation(normaliseLogin(value));
    if (why) ctx.addIssue({ code: 'custom', message: why });
  })
  .openapi({
    example: 'j.doe',
    minLength: 1,
    maxLength: LOGIN_MAX_LENGTH,
    description:
      `1 to ${LOGIN_MAX_LENGTH} characters: ${LOGIN_RULE}; no compatibility characters (\`𝟏\`, \`ﬁ\`) or ` +
      'phonetic letters (`ᴀ`). Stored in NFC; unique ignoring case and width (`Admin`, `ADMIN` and `ＡＤＭＩＮ` are ' +
      'one login), and a login that looks like another live or reserved one (`аdmin` with a Cyrillic `а`, ' +
      'Unicode TR #39 skeleton) is refused with 409.',
  });

/**
 * Parsing of `Authorization` credentials (RFC 7617 Basic, RFC 6750 Bearer). Malformed headers are
 * refused before any account is looked up or any attempt is counted.
 */
import { ProblemError } from '../http/problem.js';
import type { TokenRule } from '../accounts/token-scopes.js';

export const MAX_LOGIN_LENGTH = 256;
export const MAX_PASSWORD_LENGTH = 1024;
const MAX_HEADER_LENGTH = 4096;

export type Scheme = 'Basic' | 'Bearer' | 'Cookie';

/** What a protected route asks of the authentication middleware (authentication/middleware.ts). */
export interface AuthenticateOptions {
  schemes: readonly Scheme[];
  /**
   * Let an expired password (or one to be changed) through: `true` for the self password change;
   * `'session'` for a session only (the caller's own profile, which a client reads to learn that it must
   * change the password; Basic stays refused).
   */
  allowExpiredPassword?: boolean | 'session';
  /**
   * Logout is idempotent: a token we signed whose session has already ended (or is unknown) gets
   * 204 at once, ending nothing else. A forged token or no credential stays a 401.
   */
  endedSessionIsLoggedOut?: boolean;
  /**
   * Open to a session of a role that must use a second factor but has none yet (MFA_REQUIRED_ROLES):
   * the profile, logout and enrolment routes (docs/security-mfa.md, "Enforcement").
   */
  enrolment?: boolean;
  /**
   * A session credential (cookie or access token) is enough as signed, without reading its session:
   * the route only ends that session by its signed id (logout: one round trip, architecture.md §6).
   * The middleware then sets `signedSession` instead of `principal`; other credentials as usual.
   */
  signedSessionSuffices?: boolean;
  /**
   * What an API token must carry to call the route (accounts/token-scopes.ts): a scope, or `none` (no API
   * token may). Required of every route that takes Bearer; checked as the token is read.
   */
  tokenScope?: TokenRule;
}

/** The WWW-Authenticate challenge of each scheme (a session cookie has no standard challenge). */
export const CHALLENGES: Record<Scheme, string> = {
  Basic: 'Basic realm="auth", charset="UTF-8"',
  Bearer: 'Bearer realm="auth"',
  Cookie: 'Bearer realm="auth"',
};

/** The challenge header value for a set of schemes. */
export function challengeFor(schemes: readonly Scheme[]): string {
  return [...new Set(schemes.map((s) => CHALLENGES[s]))].join(', ');
}

/** A 401 for a malformed header, with the challenges the endpoint accepts. */
export function malformed(detail: string, schemes: readonly Scheme[]): ProblemError {
  return new ProblemError('UNAUTHENTICATED', {
    detail,
    headers: { 'WWW-Authenticate': challengeFor(schemes) },
  });
}

/** Splits `Scheme value`; the scheme is case-insensitive. */
export function splitAuthorization(header: string | undefined): { scheme: string; value: string } | undefined {
  if (!header) return undefined;
  const m = /^([A-Za-z]+) +(\S+) *$/.exec(header);
  if (!m) return { scheme: header.split(' ', 1)[0] ?? '', value: '' };
  return { scheme: m[1]!, value: m[2]! };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a Basic credential into login and password, or throws a 401 naming what is wrong. */
export function parseBasic(
  header: string,
  schemes: readonly Scheme[] = ['Basic'],
): { login: string; password: string } {
  if (header.length > MAX_HEADER_LENGTH) throw malformed('the Authorization header is too long', schemes);
  const parts = splitAuthorization(header);
  if (!parts || parts.scheme.toLowerCase() !== 'basic' || parts.value === '')
    throw malformed('expected "Authorization: Basic <base64(login:password)>"', schemes);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(parts.value) || parts.value.length % 4 !== 0)
    throw malformed('the Basic credential is not valid base64', schemes);
  let text: string;
  try {
    const binary = atob(parts.value);
    text = UTF8.decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)));
  } catch {
    throw malformed('the Basic credential is not valid base64-encoded UTF-8', schemes);
  }
  const colon = text.indexOf(':');
  if (colon < 0) throw malformed('the Basic credential has no ":" between login and password', schemes);
  const login = text.slice(0, colon);
  const password = text.slice(colon + 1);
  if (login.trim() === '') throw malformed('the login is empty', schemes);
  if (password === '') throw malformed('the password is empty', schemes);
  if (/[\p{Cc}]/u.test(login)) throw malformed('the login contains control characters', schemes);
  if ([...login].length > MAX_LOGIN_LENGTH)
    throw malformed(`the login is longer than ${MAX_LOGIN_LENGTH} characters`, schemes);
  if ([...password].length > MAX_PASSWORD_LENGTH)
    throw malformed(`the password is longer than ${MAX_PASSWORD_LENGTH} characters`, schemes);
  return { login, password };
}

/** Extracts a Bearer token, or throws a 401 naming what is wrong. */
export function parseBearer(header: string, schemes: readonly Scheme[] = ['Bearer']): string {
  if (header.length > MAX_HEADER_LENGTH) throw malformed('the Authorization header is too long', schemes);
  const parts = splitAuthorization(header);
  if (!parts || parts.scheme.toLowerCase() !== 'bearer' || parts.value === '')
    throw malformed('expected "Authorization: Bearer <token>"', schemes);
  // RFC 6750 b64token syntax.
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(parts.value) || parts.value.length > 512)
    throw malformed('the Bearer token is malformed', schemes);
  return parts.value;
}

/** The key of a login (NFC, width-mapped, case-folded): defined with the login rule. */
export { loginKey } from '../accounts/login-name.js';

/**
 * The challenge of a 401 as a page's script may see it. Browsers answer a 401 carrying a Basic
 * challenge to fetch() with their own login prompt (even when the script sent Authorization
 * itself), and the request hangs until the person answers it. So a page's script gets the other
 * challenges, or the Bearer one: a request with `Sec-Fetch-Dest: empty` (browsers send it with
 * fetch and XMLHttpRequest, over HTTPS and on localhost) or `X-Requested-With: XMLHttpRequest` (the
 * usual convention, which the web console also sends). API clients and navigations keep Basic.
 */
export function challengeForCaller(challenge: string, request: { fetchDest?: string; requestedWith?: string }): string {
  const script = request.fetchDest === 'empty' || request.requestedWith?.toLowerCase() === 'xmlhttprequest';
  if (!script || !challenge.includes(CHALLENGES.Basic)) return challenge;
  const rest = challenge
    .split(CHALLENGES.Basic)
    .map((part) => part.replace(/^[\s,]+|[\s,]+$/g, ''))
    .filter((part) => part !== '');
  return rest.length > 0 ? rest.join(', ') : CHALLENGES.Bearer;
}

/**
 * The credential a proxied request carries (docs/integration.md, "Credentials"): the session cookie,
 * a Bearer token (a session's access token or an API token) or, for a service that allows it, Basic.
 * Sessions and API tokens are read through the credential caches with the revocation bound of every
 * other route (architecture.md §6), so a warm decision makes no database round trip.
 */
import type { Context } from 'hono';
import { passwordChangeReason } from '../accounts/login-rule.js';
import { revocationCheckMs } from '../accounts/sessions.js';
import { accountOfToken, touchToken } from '../accounts/tokens.js';
import { groupNamesOf } from '../accounts/model.js';
import { CHALLENGES, parseBasic, splitAuthorization } from '../auth/credentials.js';
import { authenticateLocalPassword } from '../auth/password-login.js';
import type { AppEnv, Principal } from '../http/context.js';
import { cookieValue, SESSION_COOKIE } from '../http/cookies.js';
import { requestHeader } from '../http/node-messages.js';
import { ProblemError } from '../http/problem.js';
import { SESSION_AUDIENCE, sessionFromToken } from '../accounts/session-token.js';
import type { GateAccount, GateCredential, ServiceRule } from './decision.js';

/** A checked credential with the principal behind it, if any. */
export interface ReadCredential {
  credential: GateCredential;
  principal?: Principal;
}

/** The views made so far of account rows (a cached credential's row is the same object each time). */
const accountOfRow = new WeakMap<Principal['user'], GateAccount>();

/**
 * The decision's view of a principal: its groups are `principal.groups`, else the row's. Made once per
 * row, so that the identity headers made for it are found again (decision.ts `identityHeaders`).
 */
export function gateAccount(p: Principal): GateAccount {
  const u = p.user;
  const view = (groups: readonly string[]): GateAccount =>
    Object.freeze({ id: u.id, login: u.login, displayName: u.displayName, email: u.email, role: u.role, groups });
  if (p.groups) return view(p.groups);
  let account = accountOfRow.get(u);
  if (!account) {
    // The groups come with the account's row (accounts/model.ts groupNamesOf): no query of their own.
    account = view(groupNamesOf(u));
    accountOfRow.set(u, account);
  }
  return account;
}

function asCredential(
  p: Principal,
  method: 'session' | 'token' | 'basic',
  audiences?: readonly string[] | null,
): ReadCredential {
  const s = p.session;
  const secondFactor = s !== undefined && (s.secondFactorAt !== null || s.authMethod === 'passkey');
  return { credential: { kind: 'account', account: gateAccount(p), method, secondFactor, audiences }, principal: p };
}

/**
 * Whether an API token may be presented to a protected service at all (docs/api.md, "API token
 * audiences"): one with audiences, for those (the decision checks which); one made without scopes,
 * wherever its owner may enter; one narrowed to scopes of this service's API only, nowhere.
 */
export function tokenForServices(t: { scopes: readonly string[] | null; audiences: readonly string[] | null }) {
  return t.audiences !== null || t.scopes === null;
}

const INVALID: ReadCredential = { credential: { kind: 'invalid' } };
const SECURE_SESSION_COOKIE = `__Secure-${SESSION_COOKIE}`;

async function fromSessionToken(c: Context<AppEnv>, token: string): Promise<ReadCredential> {
  const { scope } = c.var;
  const found = await sessionFromToken(scope, token, SESSION_AUDIENCE);
  if (!found) return INVALID;
  // A session whose password must be changed may only change it (authentication/middleware.ts): not enter.
  if (passwordChangeReason(found.user, scope.config, scope.now())) return INVALID;
  return asCredential(
    { user: found.user, method: 'session', sessionId: found.session.id, session: found.session },
    'session',
  );
}

/** The credential of the request for `service` (a password is checked only where the service takes it). */
export async function readCredential(c: Context<AppEnv>, service: ServiceRule): Promise<ReadCredential> {
  const { scope } = c.var;
  const header = requestHeader(c, 'Authorization');
  const parts = splitAuthorization(header);
  if (header && parts) {
    const scheme = parts.scheme.toLowerCase();
    if (scheme === 'bearer') {
      const token = parts.value.trim();
      if (token.includes('.')) return fromSessionToken(c, token);
      const now = scope.now();
      const found = await accountOfToken(scope.db, token, now, revocationCheckMs(scope.config));
      if (!found) return INVALID;
      if (!tokenForServices(found)) return INVALID;
      const touch = touchToken(scope.db, found, now, scope.request.ip);
      if (touch) scope.inBackground(touch);
      return asCredential({ user: found.user, method: 'bearer', tokenId: found.tokenId }, 'token', found.audiences);
    }
    if (scheme === 'basic') {
      // A password is checked (and counted against the lockout) only for a service that takes it.
      if (!service.allowBasic) return { credential: { kind: 'basic-refused' } };
      const { login, password } = parseBasic(header!, ['Basic']);
      try {
        const result = await authenticateLocalPassword(scope, login, password, { challenge: CHALLENGES.Basic });
        // A password alone never opens an account with a second factor, nor one whose password expired.
        if (result.secondFactor || result.passwordExpired) return INVALID;
        return asCredential({ user: result.user, method: 'basic' }, 'basic');
      } catch (err) {
        if (err instanceof ProblemError && err.status === 401) return INVALID;
        throw err;
      }
    }
    // Another scheme is the upstream's own business: the cookie may still say who the caller is.
  }
  const cookies = requestHeader(c, 'Cookie');
  // The cookie is named by the scheme the browser reached this service with (http/cookies.ts), which
  // may differ from the protected service's: either name, the `__Secure-` one first. Both carry a
  // signed session token, so neither can be forged.
  // Read by name, not by parsing every cookie of the platform's hosts (AUTH_COOKIE_DOMAIN) each decision.
  const value = cookies
    ? (cookieValue(cookies, SECURE_SESSION_COOKIE) ?? cookieValue(cookies, SESSION_COOKIE))
    : undefined;
  if (!value) return { credential: { kind: 'none' } };
  return fromSessionToken(c, value);
}

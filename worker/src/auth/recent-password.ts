/**
 * Issuing an API token needs a recent proof of the password (docs/security.md, "API tokens"): a token outlives sessions
 * and password changes, so it must not be minted by whatever holds a session cookie for long, by
 * an OAuth access token (it leaks more easily: docs pages, scripts) or by an OIDC login (the
 * provider, not the password, vouched for it).
 */
import type { Principal } from '../http/context.js';
import { ProblemError } from '../http/problem.js';

/** How long after a password login its session may issue API tokens: 15 minutes. */
export const RECENT_PASSWORD_LOGIN_MS = 15 * 60_000;

/**
 * Passes Basic (the password itself) and a cookie session started by a local or LDAP password
 * login within RECENT_PASSWORD_LOGIN_MS; anything else is 403 REAUTHENTICATION_REQUIRED.
 */
export function assertRecentPassword(p: Principal, now: number): void {
  if (p.method === 'basic') return;
  const s = p.session;
  let reason: string;
  if (p.method !== 'session' || !s) reason = 'not_a_password';
  else if (s.kind === 'oauth') reason = 'oauth_access_token';
  else if (s.authMethod === 'oidc') reason = 'oidc_session';
  else if (s.authMethod !== 'local_password' && s.authMethod !== 'ldap_password') reason = 'not_a_password';
  else if (s.authenticatedAt === null || now - s.authenticatedAt > RECENT_PASSWORD_LOGIN_MS) reason = 'stale_login';
  else return;
  throw new ProblemError('REAUTHENTICATION_REQUIRED', {
    detail:
      're-authenticate with the password: send it with Basic, or log in with the password (/v3/login) and use ' +
      `that session within ${RECENT_PASSWORD_LOGIN_MS / 60_000} minutes; OAuth access tokens and OIDC logins cannot ` +
      'issue API tokens',
    extensions: { reason },
  });
}

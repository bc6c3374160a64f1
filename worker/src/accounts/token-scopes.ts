/**
 * The scopes of API tokens (docs/api.md, "API token scopes"): what a token may be used for, declared
 * once per operation beside its access (`tokenScope` of protectedRoute). A token's rights are its
 * scopes intersected with its owner's current rights, decided at each request: the scope here, the
 * role by the route's role check on the owner's account as it is now. A token without scopes (made
 * before scopes existed, or made without choosing) may do everything its owner may. No token may
 * manage tokens, second factors or passwords (`none`), whatever its scopes.
 */
import { ProblemError } from '../http/problem.js';

/** The vocabulary: a scope and what it opens. */
export const TOKEN_SCOPES = {
  'account:read': "the caller's own account: its profile, sessions, second factors and notifications listed",
  'account:write': "the caller's own account: its preferences, ending its own sessions",
  'users:read':
    'other accounts (an administrator): accounts, groups, their sessions, tokens, factors, mails, the overview',
  'users:write':
    'other accounts (an administrator): create, change, block, unblock, unlock, delete, end sessions, lend ' +
    'admin rights, groups and memberships',
  'settings:read': 'the settings, identity providers, LDAP server records and webhook subscriptions',
  'settings:write': 'change the settings and records, test an LDAP server, send a test mail or webhook',
  'logs:read': "the audit log: its types, searches, events, exports, the shipping pipeline's health",
} as const;

export type TokenScope = keyof typeof TOKEN_SCOPES;
export const TOKEN_SCOPE_NAMES = Object.keys(TOKEN_SCOPES) as [TokenScope, ...TokenScope[]];

/** What an operation asks of an API token: one scope, or `none` (no API token may call it). */
export type TokenRule = TokenScope | 'none';

/** Whether a token with `scopes` (null: every scope) may call an operation of `rule`. */
export function tokenAllows(scopes: readonly string[] | null, rule: TokenRule): boolean {
  return rule !== 'none' && (scopes === null || scopes.includes(rule));
}

/** RFC 6750 §3.1: the 403 of an API token without the operation's scope. */
export function insufficientScope(rule: TokenRule): ProblemError {
  const detail =
    rule === 'none'
      ? 'API tokens cannot manage tokens, second factors or passwords: use a session or Basic'
      : `this API token lacks the scope ${rule}`;
  const scope = rule === 'none' ? '' : `, scope="${rule}"`;
  return new ProblemError('INSUFFICIENT_SCOPE', {
    detail,
    headers: { 'WWW-Authenticate': `Bearer realm="auth", error="insufficient_scope"${scope}` },
    extensions: rule === 'none' ? {} : { scope: rule },
  });
}

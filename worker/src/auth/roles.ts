/**
 * Role checks (architecture.md §4): admin (everything), auditor (audit logs), user (own account); and
 * what super-access, the administrator rights lent for a while, may do with each admin operation.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import { effectiveRole, type Role, type UserRow } from '../accounts/model.js';
import { findLiveAccount } from '../accounts/lookup.js';

/**
 * What super-access may do with an admin operation: everything (`allowed`), only on unprivileged
 * accounts (`unprivilegedTargets`, the `{userId}` of the path: see `isProtectedTarget`), or nothing.
 */
export type SuperAccessRule =
  | { allowed: true; unprivilegedTarget?: undefined }
  | {
      allowed: true;
      unprivilegedTarget: string;
      /** The target account's id, when the path names another record of it (default: the `{userId}` of the path). */
      targetOf?: TargetOf;
    }
  | { allowed: false; refusal: string };

/** The account a request acts on: its id, or undefined when there is no such record (the route answers 404). */
export type TargetOf = (c: Context<AppEnv>) => Promise<string | null | undefined>;

/** Rules of `protectedRoute`'s `superAccess`; the refusal texts complete "super-access cannot ...". */
export const superAccess = {
  allowed: { allowed: true } as SuperAccessRule,
  /**
   * `verb` completes "super-access cannot <verb> an account with administrator or auditor rights";
   * `targetOf` names the account where the path names another record of it.
   */
  unprivilegedTargets: (verb: string, targetOf?: TargetOf): SuperAccessRule => ({
    allowed: true,
    unprivilegedTarget: verb,
    ...(targetOf ? { targetOf } : {}),
  }),
  refused: (what: string): SuperAccessRule => ({ allowed: false, refusal: what }),
};

/**
 * Accounts lent rights may not change (docs/security.md, "Super-access"): those with administrator rights (the
 * role, or super-access of their own) and auditors, who read the audit trail that records what
 * super-access did. A holder who could reset their password or change their address could keep the
 * account (and mint API tokens as it) after the loan ends.
 */
export function isProtectedTarget(target: UserRow, now: number): boolean {
  return effectiveRole(target, now) === 'admin' || target.role === 'auditor';
}

/**
 * Middleware admitting only principals whose role is one of `roles` (after `authenticate`). A
 * caller admitted only by lent admin rights (super-access) gets what `rule` allows: a route that
 * declares no rule stays closed to them.
 *
 * Lent rights exist to help users, never to make themselves lasting: an account that holds admin
 * rights (its role, or super-access of its own) or the auditor role could otherwise be taken over
 * (a password reset) and used after the loan ends, and another holder's account would pass the loan on.
 */
export function authorize(roles: readonly Role[], rule?: SuperAccessRule): MiddlewareHandler<AppEnv> {
  if (roles.length === 0) throw new TypeError('authorize: name at least one role');
  return createMiddleware<AppEnv>(async (c, next) => {
    const user = c.var.principal.user;
    if (roles.includes(user.role)) return next();
    const now = c.var.scope.now();
    if (!roles.includes(effectiveRole(user, now))) {
      throw new ProblemError('FORBIDDEN', { detail: `requires the role ${roles.join(' or ')}` });
    }
    if (!rule) throw new ProblemError('FORBIDDEN', { detail: 'super-access cannot use this operation' });
    if (!rule.allowed) throw new ProblemError('FORBIDDEN', { detail: `super-access cannot ${rule.refusal}` });
    if (rule.unprivilegedTarget !== undefined) {
      // An unknown record passes: the route answers 404 as it would to an administrator. A record of no
      // live account (its account deleted) is refused: lent rights reach unprivileged accounts' only.
      const id = rule.targetOf ? await rule.targetOf(c) : (c.req.param('userId') ?? '');
      if (id === undefined) return next();
      const target = id === null ? undefined : await findLiveAccount(c.var.scope.db, id);
      if ((id === null || rule.targetOf) && !target) {
        throw new ProblemError('FORBIDDEN', { detail: `super-access cannot ${rule.unprivilegedTarget} this account` });
      }
      if (target && isProtectedTarget(target, now)) {
        const detail = `super-access cannot ${rule.unprivilegedTarget} an account with administrator or auditor rights`;
        throw new ProblemError('FORBIDDEN', { detail });
      }
    }
    return next();
  });
}

/** The sentence of an operation's OpenAPI description that states its super-access rule. */
export function describeSuperAccess(rule: SuperAccessRule): string {
  if (!rule.allowed) return 'Super-access: refused (403).';
  if (rule.unprivilegedTarget !== undefined) {
    return 'Super-access: allowed, except on an account with administrator or auditor rights (403).';
  }
  return 'Super-access: allowed.';
}

/** Role checks (DESIGN.md §5): admin (everything), auditor (audit logs), user (own account). */
import type { MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import type { Role } from '../users/model.js';
import { effectiveRole } from '../users/accounts.js';

/** Middleware admitting only principals with one of `roles` (after `authenticate`). */
export function requireRole(...roles: Role[]): MiddlewareHandler<AppEnv> {
  if (roles.length === 0) throw new TypeError('requireRole: name at least one role');
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!roles.includes(effectiveRole(c.var.principal.user, c.var.deps.clock()))) {
      throw new ProblemError('FORBIDDEN', { detail: `requires the role ${roles.join(' or ')}` });
    }
    return next();
  });
}

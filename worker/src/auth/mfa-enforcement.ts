/**
 * Enforcement and step-up (docs/security-mfa.md, "Enforcement", "Step-up"):
 * - MFA_REQUIRED_ROLES: a session of an account of such a role that passed no second factor (it has
 *   none yet) may only use the routes declared `enrolment` (its profile, logout, enrolment); Basic
 *   is refused likewise; API tokens (issued only after a step-up) are not affected.
 * - Step-up: routes declared `stepUp` need, for an account with a second factor, a session whose
 *   last second-factor verification is at most MFA_STEP_UP_MIN minutes old.
 */
import { createMiddleware } from 'hono/factory';
import type { AppEnv, Principal } from '../http/context.js';
import { ProblemError } from '../http/problem.js';
import type { ConfigSnapshot } from '../config/index.js';
import { factorsOf } from '../accounts/factors.js';

/** Throws 403 MFA_ENROLMENT_REQUIRED when the principal's role requires a second factor it has not passed. */
export function assertEnrolled(config: ConfigSnapshot, p: Principal): void {
  if (p.method === 'bearer' && !p.sessionId) return;
  if (!config.get('MFA_REQUIRED_ROLES').includes(p.user.role)) return;
  if (p.method === 'session' && p.session?.secondFactorAt) return;
  const root = config.get('ROOT_PATH');
  throw new ProblemError('MFA_ENROLMENT_REQUIRED', {
    detail:
      `the role ${p.user.role} must use a second factor (MFA_REQUIRED_ROLES): with a session, enrol one ` +
      `(POST ${root}/v4/users/me/totp, then ${root}/v4/users/me/totp/confirm); nothing else is allowed until then`,
    extensions: { enrol: `${root}/v4/users/me/totp` },
  });
}

/** Middleware: the step-up rule of a sensitive route (after authentication and the role check). */
export const requireStepUp = createMiddleware<AppEnv>(async (c, next) => {
  const p = c.var.principal;
  const factors = await factorsOf(c.var.scope.db, p.user.id);
  if (factors.length === 0) return next();
  const windowMs = c.var.scope.config.get('MFA_STEP_UP_MIN') * 60_000;
  const at = p.method === 'session' ? p.session?.secondFactorAt : undefined;
  if (at && c.var.scope.now() - at <= windowMs) return next();
  const root = c.var.scope.config.get('ROOT_PATH');
  throw new ProblemError('STEP_UP_REQUIRED', {
    detail:
      `this operation needs a second-factor verification of this session within ${windowMs / 60_000} minutes: ` +
      `POST a code to ${root}/v4/users/me/second-factor with the session, then retry`,
    extensions: {
      reason: p.method === 'session' ? 'stale_second_factor' : 'not_a_session',
      stepUp: `${root}/v4/users/me/second-factor`,
    },
  });
});

/**
 * Enforcement and step-up (docs/security-mfa.md, "Enforcement", "Step-up"):
 * - MFA_REQUIRED_ROLES: a session of an account of such a role that passed no second factor (it has
 *   none yet) may only use the routes declared `enrolment` (its profile, logout, enrolment); Basic
 *   is refused likewise; API tokens (issued only after a step-up) are not affected.
 * - Step-up: routes declared `stepUp` need, for an account with a second factor, a session whose
 *   last second-factor verification is at most MFA_STEP_UP_MIN minutes old.
 * - Changing factors: routes declared `stepUp: 'factors'` (adding, confirming, renaming or removing a
 *   factor) need the step-up of an account with a factor, and of an account without one a recent
 *   sign-in (docs/security-mfa.md, "Changing factors"): else a stolen session could plant a passkey or an
 *   authenticator of its own, or lock the owner out.
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
      `the role ${p.user.role} must use a second factor (MFA_REQUIRED_ROLES): with a session, enrol one (an ` +
      `authenticator app: POST ${root}/v4/users/me/totp, then ${root}/v4/users/me/totp/confirm; or a passkey: ` +
      `POST ${root}/v4/users/me/passkeys/registration-options, then ${root}/v4/users/me/passkeys); nothing else ` +
      'is allowed until then',
    extensions: { enrol: `${root}/v4/users/me/totp` },
  });
}

/** Middleware: the step-up rule of a sensitive route (after authentication and the role check). */
export const requireStepUp = createMiddleware<AppEnv>(async (c, next) => {
  if ((await factorsOf(c.var.scope.db, c.var.principal.user.id)).length === 0) return next();
  assertSteppedUp(c.var.scope, c.var.principal);
  return next();
});

/**
 * Middleware: the rule of a route that changes the caller's own second factors. With a factor, the
 * step-up; without one, the proof of a recent sign-in (ASVS 5.0 V6.4.3, V7.5.1: re-authentication
 * before a change of authentication factors): Basic (the password itself), or a session whose login
 * (`authenticatedAt`) is at most MFA_STEP_UP_MIN minutes old. An API token proves neither.
 */
export const requireFactorChangeProof = createMiddleware<AppEnv>(async (c, next) => {
  const { scope, principal: p } = c.var;
  if ((await factorsOf(scope.db, p.user.id)).length > 0) {
    assertSteppedUp(scope, p);
    return next();
  }
  if (p.method === 'basic') return next();
  const windowMs = scope.config.get('MFA_STEP_UP_MIN') * 60_000;
  const at = p.method === 'session' ? p.session?.authenticatedAt : undefined;
  if (typeof at === 'number' && scope.now() - at <= windowMs) return next();
  throw new ProblemError('REAUTHENTICATION_REQUIRED', {
    detail:
      `setting up a first second factor needs a sign-in of at most ${windowMs / 60_000} minutes ago: sign in ` +
      'again, then retry (docs/security-mfa.md, "Changing factors")',
    extensions: { reason: p.method === 'session' ? 'stale_login' : 'not_a_session', change: 'factors' },
  });
});

/** Throws 403 STEP_UP_REQUIRED unless the principal is a session that verified a second factor recently. */
function assertSteppedUp(scope: AppEnv['Variables']['scope'], p: Principal): void {
  const windowMs = scope.config.get('MFA_STEP_UP_MIN') * 60_000;
  const at = p.method === 'session' ? p.session?.secondFactorAt : undefined;
  if (at && scope.now() - at <= windowMs) return;
  const root = scope.config.get('ROOT_PATH');
  throw new ProblemError('STEP_UP_REQUIRED', {
    detail:
      `this operation needs a second-factor verification of this session within ${windowMs / 60_000} minutes: ` +
      `POST a code to ${root}/v4/users/me/second-factor with the session, then retry`,
    extensions: {
      reason: p.method === 'session' ? 'stale_second_factor' : 'not_a_session',
      stepUp: `${root}/v4/users/me/second-factor`,
    },
  });
}

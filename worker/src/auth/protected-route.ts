/**
 * A protected route, declared once (in the spirit of Unkey's `createAuthenticatedRoute`): its
 * credentials, roles and, for admin operations, what super-access may do. Everything else follows
 * from that one declaration, so the documented rule is the enforced one:
 * - `security` (the OpenAPI schemes, in the order given) and, through it, the shared 401 and 403
 *   responses (docs/shared-responses.ts adds them to every operation with a security requirement);
 * - the middleware: `authenticate` with those schemes, then the role check and the super-access rule;
 * - `x-required-roles`, `x-super-access`, `x-super-access-target`, read by the permission table
 *   (test/http/permissions.test.ts);
 * - the first paragraph of the description, saying the same in words.
 * Public routes use `publicRoute`, which declares `security: []` (no credential) and nothing else.
 * Both require an `operationId`: the camelCase verb phrase that generated clients name their methods
 * by (docs/architecture.md, "The API description").
 */
import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv, StepUpRules } from '../http/context.js';
import { ROLES, type Role } from '../accounts/model.js';
import type { AuthenticateOptions, Scheme } from './credentials.js';
import { authorize, describeSuperAccess, type SuperAccessRule } from './roles.js';
import type { TokenRule } from '../accounts/token-scopes.js';

/** Every role: any authenticated caller. */
export const ANY_ROLE: readonly Role[] = ROLES;
/** Every credential: the session cookie (or its access token), Basic, an API token. */
export const ANY_CREDENTIAL: readonly Scheme[] = ['Cookie', 'Basic', 'Bearer'];

/** Who may call a protected route, with which credentials. */
export type Access = Omit<AuthenticateOptions, 'schemes'> & {
  schemes: readonly Scheme[];
  /**
   * A sensitive operation: an account with a second factor needs a recent verification (step-up).
   * `'factors'`: a change of the caller's own second factors, which an account without one may make only
   * after a recent sign-in (mfa/enforcement.ts, `requireFactorChangeProof`).
   */
  stepUp?: boolean | 'factors';
} & (
    | { roles: readonly Role[]; superAccess?: undefined }
    | {
        /**
         * Roles without `user` but with `admin` (admin only, or admin and auditor): what lent admin
         * rights may do with the operation is then part of the declaration.
         */
        roles: readonly Role[];
        superAccess: SuperAccessRule;
      }
  );

/** Any authenticated caller, with any credential (a route adds the `tokenScope` it needs). */
export const ANYONE = { schemes: ANY_CREDENTIAL, roles: ANY_ROLE } as const satisfies Partial<Access>;

/**
 * Administrators, with any credential; `superAccess` says what lent admin rights may do, `tokenScope`
 * what an API token must carry.
 */
export function adminOnly(superAccess: SuperAccessRule, tokenScope: TokenRule): Access {
  return { schemes: ANY_CREDENTIAL, roles: ['admin'], superAccess, tokenScope };
}

const SCHEME_NAMES: Record<Scheme, string> = { Cookie: 'cookie', Basic: 'basic', Bearer: 'bearer' };
const SCHEME_WORDS: Record<Scheme, string> = { Cookie: 'Session cookie', Basic: 'Basic', Bearer: 'Bearer' };

/** Whether lent admin rights (super-access) could be what admits a caller: admin without user. */
const lendable = (roles: readonly Role[]) => roles.includes('admin') && !roles.includes('user');

/**
 * The authentication step of a protected route: the app's one authentication middleware
 * (`c.var.authenticate`, authentication/middleware.ts), bound to `options` at the route's first request.
 * It is handed over rather than imported because it checks the credentials of capabilities above
 * this module (sessions, LDAP logins), whose routes are protected routes (architecture.md §2).
 */
function authenticated(options: AuthenticateOptions): MiddlewareHandler<AppEnv> {
  let bound: MiddlewareHandler<AppEnv> | undefined;
  return (c, next) => {
    bound ??= c.var.authenticate(options);
    return bound(c, next);
  };
}

/**
 * The step-up rule of a sensitive route (`c.var.stepUpRules`, mfa/enforcement.ts), handed over like
 * `authenticate`: the second factors sit above this module (architecture.md §2).
 */
const stepUpRule =
  (kind: keyof StepUpRules): MiddlewareHandler<AppEnv> =>
  (c, next) =>
    c.var.stepUpRules[kind](c, next);
const STEP_UP = stepUpRule('sensitive');
const FACTOR_CHANGE = stepUpRule('factors');

function checkAccess(a: Access): void {
  if (a.schemes.length === 0) throw new TypeError('protectedRoute: name at least one scheme');
  if (a.schemes.includes('Bearer') !== (a.tokenScope !== undefined))
    throw new TypeError(
      "protectedRoute: routes taking Bearer declare the API token's scope (tokenScope), and only they",
    );
  if (a.roles.length === 0) throw new TypeError('protectedRoute: name at least one role');
  if (lendable(a.roles) !== (a.superAccess !== undefined)) {
    throw new TypeError('protectedRoute: routes open to admin but not user declare superAccess, and only they');
  }
}

/** The access rule in words: the first paragraph of the route's description. */
export function describeAccess(a: Access): string {
  const words = a.schemes.map((s) => SCHEME_WORDS[s]);
  const schemes = words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
  const all = ANY_ROLE.every((r) => a.roles.includes(r));
  const adminOnly = a.roles.length === 1 && a.roles[0] === 'admin';
  const roles = all ? 'Any role.' : adminOnly ? 'Admin only.' : `Roles: ${a.roles.join(', ')}.`;
  const stepUp = a.stepUp
    ? [
        'Step-up: an account with a second factor needs a session that verified it within MFA_STEP_UP_MIN ' +
          'minutes (else 403 STEP_UP_REQUIRED; docs/security-mfa.md).',
        ...(a.stepUp === 'factors'
          ? [
              'An account without one needs Basic or a session signed in within MFA_STEP_UP_MIN minutes (else 403 ' +
                'REAUTHENTICATION_REQUIRED).',
            ]
          : []),
      ]
    : [];
  const token =
    a.tokenScope === undefined
      ? []
      : [
          a.tokenScope === 'none'
            ? 'Not with an API token (tokens, second factors and passwords are managed with a session or Basic).'
            : `An API token needs the scope ${a.tokenScope}.`,
        ];
  return [
    `${schemes}.`,
    roles,
    ...token,
    ...(a.superAccess ? [describeSuperAccess(a.superAccess)] : []),
    ...stepUp,
  ].join(' ');
}

/**
 * What a protected route adds to its `createRoute` configuration: security, middleware and the
 * `x-` extensions (the description is composed by `protectedRoute`).
 */
export function accessDeclaration(a: Access) {
  checkAccess(a);
  const { schemes, roles, superAccess, stepUp, ...options } = a;
  const all = ANY_ROLE.every((r) => roles.includes(r));
  const middleware: MiddlewareHandler<AppEnv>[] = [authenticated({ schemes, ...options })];
  // Any role: every authenticated caller passes, so no role check runs on the request path.
  if (!all) middleware.push(authorize(roles, superAccess));
  // A sensitive operation: a recent second-factor verification (docs/security-mfa.md, "Step-up").
  if (stepUp) middleware.push(stepUp === 'factors' ? FACTOR_CHANGE : STEP_UP);
  const scopes = (s: Scheme) =>
    s === 'Bearer' && options.tokenScope && options.tokenScope !== 'none' ? [options.tokenScope] : [];
  return {
    security: schemes.map((s) => ({ [SCHEME_NAMES[s]]: scopes(s) })),
    // Read by the test that walks every operation with a token lacking its scope (test/http/token-scopes.test.ts).
    ...(options.tokenScope ? { 'x-token-scope': options.tokenScope } : {}),
    middleware,
    'x-required-roles': [...roles],
    // Read by the tests that walk every sensitive operation (test/http/factor-changes.test.ts).
    ...(stepUp ? { 'x-step-up': stepUp === 'factors' ? 'factors' : 'second-factor' } : {}),
    ...(superAccess ? { 'x-super-access': superAccess.allowed } : {}),
    ...(superAccess?.allowed && superAccess.unprivilegedTarget !== undefined
      ? { 'x-super-access-target': 'unprivileged' }
      : {}),
  };
}

import type { Identified } from '../http/public-route.js';

type ProtectedConfig = Omit<RouteConfig, 'security' | 'middleware'> & {
  /** The route's own middleware, run after authentication and the role check. */
  middleware?: MiddlewareHandler<AppEnv>[];
} & Identified;

/** `createRoute` for a protected route: the route's own configuration plus what `access` implies. */
export function protectedRoute<R extends ProtectedConfig>(access: Access, route: R) {
  const description = [describeAccess(access), route.description].filter(Boolean).join('\n\n');
  const declared = accessDeclaration(access);
  const middleware = [...declared.middleware, ...(route.middleware ?? [])];
  return createRoute({ ...route, description, ...declared, middleware });
}

export { publicRoute } from '../http/public-route.js';

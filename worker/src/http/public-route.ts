/** Route declarations that need no credential (the protected ones: auth/protected-route.ts). */
import { createRoute, type RouteConfig } from '@hono/zod-openapi';

/** What every route declares: its operationId, stable once published (clients' method names). */
export type Identified = { operationId: string };

/** `createRoute` for a public route: no credential (`security: []`), so no 401 or 403 either. */
export function publicRoute<R extends Omit<RouteConfig, 'security'> & Identified>(route: R) {
  return createRoute({ ...route, security: [] });
}

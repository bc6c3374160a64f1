/** The error-tracking endpoints: GET /v3/client-config, POST /v3/sentry-tunnel, and the page. */
import type { App } from '../http/context.js';
import { ClientConfigSchema, clientConfig } from './client-config.js';
import { registerErrtrackPage } from './page-routes.js';
import { registerSentryTunnel } from './tunnel-routes.js';
import { publicRoute } from '../http/public-route.js';

const route = publicRoute({
  method: 'get',
  operationId: 'getClientConfig',
  path: '/v3/client-config',
  tags: ['errtrack'],
  summary: 'Browser error-tracking configuration',
  description:
    'No authentication. Requested by the web interface at page load. `{"sentry": null}` while ' +
    'FRONTEND_ERRTRACK_DSN or ERRTRACK_ENV is empty. Changes to these variables apply after a restart.',
  responses: {
    200: { description: 'the configuration', content: { 'application/json': { schema: ClientConfigSchema } } },
  },
});

/** Registers the error-tracking endpoints. */
export function registerErrtrack(app: App): void {
  app.openapi(route, (c) => {
    // Hidden variables: the environment snapshot, so they change only with a restart.
    const tunnelPath = `${c.var.deps.config.env.get('ROOT_PATH')}/v3/sentry-tunnel`;
    // PROFILE is UI-editable but restart-only: the snapshot keeps the value seen at start.
    return c.json(clientConfig(c.var.deps.config.env, tunnelPath, c.var.scope.config.get('PROFILE')), 200);
  });
  registerSentryTunnel(app);
  registerErrtrackPage(app);
}

/**
 * The edge host (Cloudflare Workers / workerd): libSQL over HTTP (sqld or Turso), static files from
 * the Workers assets binding, the same app as the Node host. The app is built once per isolate,
 * lazily from the bindings of the first request (never at import time).
 */
import { createClient } from '@libsql/client/web';
import { createApp } from './app.js';
import { ConfigService, parseEnvironment } from './config/index.js';
import type { App, StaticFiles } from './http/context.js';
import { createLogger, toLevel } from './http/logger.js';
import { runScheduledJobs } from './jobs/index.js';
import { createDb, loadSavedSettings, type Db } from './store/index.js';

/** Bindings: the static-assets fetcher plus every configuration variable as a var or a secret. */
export interface Env {
  ASSETS?: Fetcher;
  [variable: string]: unknown;
}

interface Instance {
  app: App;
  db: Db;
  config: ConfigService;
}

let instance: Instance | undefined;

function assetFiles(assets: Fetcher | undefined): StaticFiles {
  return async (rel) => {
    if (!assets) return null;
    const res = await assets.fetch(new Request(`https://assets.invalid/${rel}`));
    return res.ok ? new Response(res.body, res) : null;
  };
}

function build(env: Env): Instance {
  const config = parseEnvironment(env);
  const url = config.get('LIBSQL_URL');
  if (url.startsWith('file:')) {
    throw new Error('LIBSQL_URL: the edge host needs an http(s):// or libsql:// URL (sqld or Turso), not a file: URL');
  }
  const db = createDb(createClient({ url, authToken: config.get('LIBSQL_AUTH_TOKEN') || undefined }));
  const logger = createLogger({ threshold: () => toLevel(config.get('LOG_LEVEL')) });
  const service = new ConfigService({
    env: config,
    load: () => loadSavedSettings(db),
    onIssue: (issue) => logger.warning('ignoring a bad saved setting', { setting: issue.name, problem: issue.message }),
  });
  const app = createApp({ db, config: service, clock: Date.now, staticFiles: assetFiles(env.ASSETS) });
  return { app, db, config: service };
}

function instanceFor(env: Env): Instance {
  instance ??= build(env);
  return instance;
}

export default {
  fetch(request, env, ctx) {
    return instanceFor(env).app.fetch(request, env, ctx);
  },
  async scheduled(controller, env, ctx) {
    const { db, config } = instanceFor(env);
    ctx.waitUntil(runScheduledJobs({ db, config: await config.current(), now: controller.scheduledTime }));
  },
} satisfies ExportedHandler<Env>;

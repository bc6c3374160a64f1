/** The logs endpoints (tag `logs`): types, query DSL, the simple form and export, pipeline health. */
import type { App } from '../http/context.js';
import { registerLogEvents } from './events-routes.js';
import { registerLogPipeline } from './pipeline-routes.js';
import { registerLogQueries } from './query-routes.js';

/** Registers every logs endpoint. */
export function registerLogs(app: App): void {
  // Fixed paths first: /v3/logs/pipeline and /audit_log_types are not log types.
  registerLogPipeline(app);
  registerLogQueries(app);
  registerLogEvents(app);
}

/**
 * One query of the logs endpoints, through the bridge (architecture.md §1): the worker adds what
 * the caller must not choose — the stream's index pattern from the configuration, the effective
 * LOGSTORE_* values, the server-side timeout, the proxy-authentication identity — and turns the
 * store's answer into the endpoint's: 2xx passed back as it is, anything else one problem.
 */
import {
  AUDIT_INDEX_PREFIX,
  IndexPatternSchema,
  LogstoreQueryResponseSchema,
  type LogstoreQueryRequest,
  type LogstoreQueryResponse,
} from '../../../schema/bridge/index.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Principal } from '../http/context.js';
import type { RequestScope } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { localFieldCaps, localSearch } from './local-store.js';
import { proxyIdentity } from './proxy-identity.js';
import { logstoreTarget } from './target.js';
import { STREAMS, streamPattern, type StreamName } from './streams.js';

/** Whether LOGSTORE_URLS holds real addresses. */
export function logstoreConfigured(config: ConfigSnapshot): boolean {
  return logstoreTarget(config) !== null;
}

/** The store's server-side `timeout` of a search: 80% of LOGSTORE_TIMEOUT, so partial results come back in time. */
export function searchTimeout(config: ConfigSnapshot): string {
  return `${Math.max(100, Math.floor(config.get('LOGSTORE_TIMEOUT') * 800))}ms`;
}

export interface StoreQuery {
  operation: 'search' | 'field_caps';
  body: Record<string, unknown>;
  fields?: string;
}

/** The index pattern of a stream, refused (503) when the configured value could reach other indices. */
function patternOf(config: ConfigSnapshot, stream: StreamName): string {
  const pattern = streamPattern(config, stream);
  // Saved values are checked when saved; one from before the prefix rule never leaves the worker.
  if (!IndexPatternSchema.safeParse(pattern).success) {
    throw new ProblemError('SERVICE_UNAVAILABLE', {
      detail:
        `${STREAMS[stream].variable} is not a single index pattern starting with ${AUDIT_INDEX_PREFIX} ` +
        '(lower case letters, digits, . _ + - and *)',
      extensions: { cause: 'LOGSTORE_MISCONFIGURED' },
    });
  }
  return pattern;
}

/**
 * Runs one query on `stream`'s pattern through the bridge, as `caller` (proxy identity); the
 * store's own answer, any status. Without a log store, the embedded audit log's answer.
 */
export async function queryStore(
  scope: RequestScope,
  caller: Principal,
  stream: StreamName,
  q: StoreQuery,
): Promise<LogstoreQueryResponse> {
  const config = scope.config;
  const target = logstoreTarget(config);
  if (!target) {
    // No log store: the embedded audit log answers, from the outbox (docs/audit-logs-embedded.md).
    const pattern = patternOf(config, stream);
    const body =
      q.operation === 'search'
        ? await localSearch(scope.db, stream, pattern, q.body, scope.now())
        : localFieldCaps(pattern, q.fields ?? '*', q.body);
    return { status: 200, body };
  }
  const bridge = scope.bridge;
  if (!bridge) {
    throw new ProblemError('SERVICE_UNAVAILABLE', {
      detail: 'no bridge configured (AUTH_BRIDGE_URL): the log store is reached through the bridge',
      // A configuration state, not a failure: one INFO line (the start says it too).
      log: { msg: 'log query refused: LOGSTORE_URLS is set but no bridge is (AUTH_BRIDGE_URL)', level: 'INFO' },
      extensions: { cause: 'BRIDGE_NOT_CONFIGURED' },
    });
  }
  const request: LogstoreQueryRequest = {
    ...target,
    operation: q.operation,
    index: patternOf(config, stream),
    body: q.body,
    ...(q.fields !== undefined ? { fields: q.fields } : {}),
    ...proxyIdentity(caller, config.get('LOGSTORE_USER_ROLE_ATTRIBUTE'), scope.now()),
  };
  // The bridge tries every node in turn, each within LOGSTORE_TIMEOUT: wait for all of them.
  return bridge.call(
    '/v1/logstore/query',
    request,
    LogstoreQueryResponseSchema,
    target.timeoutMs * target.urls.length + 2000,
  );
}

/** The store's error type and reason, from its usual `{error: {type, reason, root_cause}}` body. */
function storeError(body: unknown): { type: string; reason: string } | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return { type: 'error', reason: error.slice(0, 1000) };
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { type?: unknown; reason?: unknown; root_cause?: Array<{ type?: unknown; reason?: unknown }> };
  const root = Array.isArray(e.root_cause) ? e.root_cause[0] : undefined;
  const type = String(root?.type ?? e.type ?? 'error');
  const reason = String(root?.reason ?? e.reason ?? '');
  return { type, reason: reason.slice(0, 1000) };
}

/**
 * The store's answer as the endpoint's: a 2xx body passes back as it is; a 400 (the store could
 * not parse or run the query) is a 400 QUERY_REJECTED naming the store's reason; 403 (the proxy
 * role may not read these indices), 404 (no such index) and 429 keep their status; any other
 * status is a 502 naming it (`upstreamStatus`), since it is the store's or the bridge's failure.
 */
export function storeAnswer(answer: LogstoreQueryResponse): { status: number; body: Record<string, unknown> } {
  const { status, body } = answer;
  if (status >= 200 && status < 300) {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new ProblemError('BAD_GATEWAY', { detail: 'the log store answered something other than a JSON object' });
    return { status, body: body as Record<string, unknown> };
  }
  const error = storeError(body);
  // The store's reason helps the caller fix a query it refused (4xx); a failure of its own (401, 5xx)
  // may name its nodes or internals, so only its status passes.
  const extensions = {
    upstreamStatus: status,
    ...(error && status !== 401 && status < 500 ? { storeError: error } : {}),
  };
  switch (status) {
    case 400:
      throw new ProblemError('QUERY_REJECTED', {
        detail: error ? `${error.type}: ${error.reason}` : 'the log store rejected the query',
        extensions,
      });
    case 403:
      throw new ProblemError('FORBIDDEN', {
        detail: 'the log store refused this query for your role (x-proxy-roles)',
        extensions,
      });
    case 404:
      throw new ProblemError('NOT_FOUND', { detail: 'the log store has no index of this log type', extensions });
    case 429:
      throw new ProblemError('TOO_MANY_REQUESTS', {
        detail: 'the log store is overloaded; try again later',
        extensions,
      });
    case 401:
      throw new ProblemError('BAD_GATEWAY', {
        detail:
          "the log store refused the bridge's credentials (LOGSTORE_USERNAME/LOGSTORE_PASSWORD or LOGSTORE_API_KEY)",
        extensions,
      });
    default:
      throw new ProblemError('BAD_GATEWAY', { detail: `the log store answered ${status}`, extensions });
  }
}

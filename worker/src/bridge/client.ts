/**
 * The worker's client of the bridge's internal API (architecture.md §1.2). The transport is the host's:
 * on Node an undici Agent presenting the client certificate, on the edge the `mtls_certificates`
 * binding. A bridge that is down, slow or refuses TLS is a 502/503/504 problem, never a hang.
 *
 * A bridge that cannot be used is classified (problem `cause`, docs/operations-bridge.md §5):
 * BRIDGE_DOWN (connection refused, host not found), BRIDGE_CERT_UNTRUSTED (its server certificate is
 * not trusted or does not name the host), BRIDGE_CLIENT_CERT_REFUSED (it refused the service's client
 * certificate: the TLS handshake, or its CN is not in BRIDGE_ALLOWED_CLIENTS), BRIDGE_TIMEOUT (no
 * answer in time), BRIDGE_UNREACHABLE (a failure the host cannot tell apart: on the edge, the binding
 * reports most of them as one generic fetch error). Each is logged once, at WARNING, with the bridge
 * URL and the reason (the app's error handler writes the problem's `log` line).
 */
import type { z } from 'zod';
import { BridgeProblemSchema } from '../../../schema/bridge/index.js';
import { ProblemError, type ProblemCode } from '../http/problem.js';

/** Sends a request to the bridge (the host adds the client certificate). */
export type BridgeFetch = (path: string, init: RequestInit & { timeoutMs: number }) => Promise<Response>;

/** Why the bridge could not be used (the problem's `cause`). */
export type BridgeFailureCause =
  | 'BRIDGE_DOWN'
  | 'BRIDGE_CERT_UNTRUSTED'
  | 'BRIDGE_CLIENT_CERT_REFUSED'
  | 'BRIDGE_TIMEOUT'
  | 'BRIDGE_UNREACHABLE';

/** What callers are told for each cause (the reason, naming hosts and TLS codes, goes to the log only). */
const FAILURES: Record<BridgeFailureCause, { code: ProblemCode; detail: string }> = {
  BRIDGE_DOWN: { code: 'SERVICE_UNAVAILABLE', detail: 'the bridge is down (the connection was refused)' },
  BRIDGE_CERT_UNTRUSTED: {
    code: 'SERVICE_UNAVAILABLE',
    detail: "the bridge's server certificate is not trusted by the service",
  },
  BRIDGE_CLIENT_CERT_REFUSED: {
    code: 'SERVICE_UNAVAILABLE',
    detail: "the bridge refused the service's client certificate",
  },
  BRIDGE_TIMEOUT: { code: 'GATEWAY_TIMEOUT', detail: 'the bridge did not answer in time' },
  BRIDGE_UNREACHABLE: { code: 'SERVICE_UNAVAILABLE', detail: 'the bridge is unreachable' },
};

/** A transport's classified failure (the Node transport tells the classes apart; see worker/node). */
export class BridgeTransportError extends Error {
  override name = 'BridgeTransportError';
  constructor(
    readonly failure: BridgeFailureCause,
    /** For the log: what happened, e.g. "connection refused (ECONNREFUSED)". */
    readonly reason: string,
  ) {
    super(reason);
  }
}

export interface BridgeProbe {
  state: 'ok' | 'down';
  /** Why it is down (a BridgeFailureCause, or BRIDGE_NOT_HEALTHY when /health answered otherwise). */
  cause?: string;
}

export interface BridgeClient {
  /** The bridge's URL as logs and readiness show it (no credentials); absent for test doubles. */
  readonly url?: string;
  /** GET /health of the bridge: ok, or down (unreachable, TLS refused, not healthy). */
  status(): Promise<'ok' | 'down'>;
  /** As status(), with the cause when down (absent for test doubles). */
  probe?(): Promise<BridgeProbe>;
  /**
   * POSTs `body` as JSON and parses the answer with `schema`. The bridge's own problems (the
   * directory or upstream down, slow, TLS refused) pass on with their status and detail; a bridge
   * that cannot be used is 503 (504 when it does not answer within `timeoutMs`) with the cause above.
   */
  call<S extends z.ZodType>(path: string, body: unknown, schema: S, timeoutMs: number): Promise<z.infer<S>>;
}

const BY_STATUS: Record<number, ProblemCode> = {
  400: 'BAD_GATEWAY',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

/**
 * Answers that are not the bridge's own: 403 is its refusal of the client certificate's CN
 * (BRIDGE_ALLOWED_CLIENTS); 521-526 are Cloudflare's answers about an origin it could not use, when
 * the edge reaches the bridge through Cloudflare.
 */
const NOT_THE_BRIDGES: Record<number, BridgeFailureCause> = {
  403: 'BRIDGE_CLIENT_CERT_REFUSED',
  521: 'BRIDGE_DOWN',
  522: 'BRIDGE_TIMEOUT',
  523: 'BRIDGE_DOWN',
  524: 'BRIDGE_TIMEOUT',
  525: 'BRIDGE_CLIENT_CERT_REFUSED',
  526: 'BRIDGE_CERT_UNTRUSTED',
};

/** A URL without user or password, for logs and readiness. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href.replace(/\/$/, '');
  } catch {
    return '(not a URL)';
  }
}

/** The cause and the log's reason of a failed send. */
export function classifyBridgeError(err: unknown): { failure: BridgeFailureCause; reason: string } {
  if (err instanceof BridgeTransportError) return { failure: err.failure, reason: err.reason };
  const name = err instanceof Error ? err.name : '';
  if (name === 'TimeoutError' || name === 'AbortError')
    return { failure: 'BRIDGE_TIMEOUT', reason: 'no answer within the timeout' };
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return { failure: 'BRIDGE_UNREACHABLE', reason: `the host could not tell why (${message})` };
}

/** The problem of a failure, with the WARNING line the error handler writes for it. */
function failureProblem(url: string, path: string, failure: BridgeFailureCause, reason: string): ProblemError {
  const { code, detail } = FAILURES[failure];
  return new ProblemError(code, {
    detail,
    extensions: { cause: failure },
    log: { msg: `bridge ${url}: ${reason}`, fields: { bridge: url, path, cause: failure, reason } },
  });
}

/** Builds the client over a transport; `url` names the bridge in logs (AUTH_BRIDGE_URL). */
export function createBridgeClient(send: BridgeFetch, url = '(bridge)'): BridgeClient {
  const shown = url === '(bridge)' ? url : displayUrl(url);
  const probe = async (): Promise<BridgeProbe> => {
    try {
      const res = await send('/health', { method: 'GET', timeoutMs: 2000 });
      await res.arrayBuffer();
      if (res.ok) return { state: 'ok' };
      return { state: 'down', cause: NOT_THE_BRIDGES[res.status] ?? 'BRIDGE_NOT_HEALTHY' };
    } catch (err) {
      return { state: 'down', cause: classifyBridgeError(err).failure };
    }
  };
  return {
    url: shown,
    probe,
    async status() {
      return (await probe()).state;
    },
    async call(path, body, schema, timeoutMs) {
      let res: Response;
      let text: string;
      try {
        res = await send(path, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
          timeoutMs,
        });
        text = await res.text();
      } catch (err) {
        const { failure, reason } = classifyBridgeError(err);
        throw failureProblem(shown, path, failure, reason);
      }
      const json = parseJson(text);
      if (!res.ok) {
        const problem = BridgeProblemSchema.safeParse(json);
        if (problem.success) {
          throw new ProblemError(BY_STATUS[problem.data.status] ?? 'BAD_GATEWAY', {
            detail: problem.data.detail,
            extensions: { cause: problem.data.code },
          });
        }
        const failure = NOT_THE_BRIDGES[res.status];
        if (failure === 'BRIDGE_CLIENT_CERT_REFUSED' && res.status === 403)
          throw failureProblem(
            shown,
            path,
            failure,
            'answered 403: the client certificate CN is not in BRIDGE_ALLOWED_CLIENTS',
          );
        if (failure) throw failureProblem(shown, path, failure, `answered ${res.status} (Cloudflare: origin error)`);
        throw new ProblemError('BAD_GATEWAY', { detail: `the bridge answered ${res.status}` });
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success)
        throw new ProblemError('BAD_GATEWAY', { detail: `the bridge answered ${path} outside its contract` });
      return parsed.data;
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The worker's client of the bridge's internal API (architecture.md §1.2). The transport is the host's:
 * on Node an undici Agent presenting the client certificate, on the edge the `mtls_certificates`
 * binding. A bridge that is down, slow or refuses TLS is a 502/503/504 problem, never a hang.
 */
import type { z } from 'zod';
import { BridgeProblemSchema } from '../../../schema/bridge/index.js';
import { ProblemError, type ProblemCode } from '../http/problem.js';

/** Sends a request to the bridge (the host adds the client certificate). */
export type BridgeFetch = (path: string, init: RequestInit & { timeoutMs: number }) => Promise<Response>;

export interface BridgeClient {
  /** GET /health of the bridge: ok, or down (unreachable, TLS refused, not healthy). */
  status(): Promise<'ok' | 'down'>;
  /**
   * POSTs `body` as JSON and parses the answer with `schema`. The bridge's own problems (the
   * directory or upstream down, slow, TLS refused) pass on with their status and detail; a bridge
   * that cannot be reached is 503, one that does not answer within `timeoutMs` 504.
   */
  call<S extends z.ZodType>(path: string, body: unknown, schema: S, timeoutMs: number): Promise<z.infer<S>>;
}

const BY_STATUS: Record<number, ProblemCode> = {
  400: 'BAD_GATEWAY',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

/** Builds the client over a transport. */
export function createBridgeClient(send: BridgeFetch): BridgeClient {
  return {
    async status() {
      try {
        const res = await send('/health', { method: 'GET', timeoutMs: 2000 });
        await res.arrayBuffer();
        return res.ok ? 'ok' : 'down';
      } catch {
        return 'down';
      }
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
        const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
        throw new ProblemError(timedOut ? 'GATEWAY_TIMEOUT' : 'SERVICE_UNAVAILABLE', {
          detail: timedOut ? 'the bridge did not answer in time' : 'the bridge is unreachable',
          cause: err,
        });
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

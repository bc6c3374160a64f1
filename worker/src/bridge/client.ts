/**
 * The worker's client of the bridge's internal API (DESIGN.md §1). The transport is the host's:
 * on Node an undici Agent presenting the client certificate, on the edge the `mtls_certificates`
 * binding. A bridge that is down, slow or refuses TLS is a 502/503/504 problem, never a hang.
 */
import { ProblemError } from '../http/problem.js';

/** Sends a request to the bridge (the host adds the client certificate). */
export type BridgeFetch = (path: string, init: RequestInit & { timeoutMs: number }) => Promise<Response>;

export interface BridgeClient {
  /** GET /health of the bridge: ok, or down (unreachable, TLS refused, not healthy). */
  status(): Promise<'ok' | 'down'>;
  /** POSTs JSON and returns the JSON answer; failures become problems. */
  post(path: string, body: unknown, timeoutMs: number): Promise<unknown>;
}

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
    async post(path, body, timeoutMs) {
      let res: Response;
      try {
        res = await send(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), timeoutMs });
      } catch (err) {
        const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
        throw new ProblemError(timedOut ? 'GATEWAY_TIMEOUT' : 'SERVICE_UNAVAILABLE', { detail: timedOut ? 'the bridge did not answer in time' : 'the bridge is unreachable', cause: err });
      }
      if (!res.ok) throw new ProblemError('BAD_GATEWAY', { detail: `the bridge answered ${res.status}` });
      return res.json();
    },
  };
}

/**
 * Delivers one envelope to the error-tracking system. The path is chosen by ERRTRACK_CA alone:
 * - ERRTRACK_CA set: through the bridge (POST /v1/errtrack/relay), which verifies the system's
 *   certificate with that CA; the worker itself never needs a custom CA (architecture.md §1). No bridge
 *   configured then is a 503, never a silent fallback to an unverified or unreachable path.
 * - ERRTRACK_CA empty: the platform's own fetch, with its system roots (a public Sentry).
 */
import { ErrtrackRelayResponseSchema, type ErrtrackRelayResponse } from '../../../schema/bridge/index.js';
import type { BridgeClient } from '../bridge/client.js';
import { ProblemError } from '../http/problem.js';

export interface Delivery {
  /** The ingest URL, computed from configuration only (never from what a caller sent). */
  url: string;
  bytes: Uint8Array<ArrayBuffer>;
  timeoutMs: number;
}

export interface DeliveryPath {
  /** ERRTRACK_CA ('' when unset). */
  ca: string;
  bridge: BridgeClient | undefined;
  fetch?: typeof fetch;
}

/** Extra time the worker gives the bridge beyond the relay's own timeout, so the bridge's 504 comes first. */
const BRIDGE_MARGIN_MS = 1500;

/** base64 without Buffer (runtime-neutral), in chunks that fit String.fromCharCode's argument limit. */
export function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** Sends the envelope; answers the upstream's status (and rate-limit headers) or throws a 5xx problem. */
export async function deliverEnvelope(path: DeliveryPath, d: Delivery): Promise<ErrtrackRelayResponse> {
  if (path.ca !== '') {
    if (!path.bridge) {
      throw new ProblemError('SERVICE_UNAVAILABLE', {
        detail:
          'ERRTRACK_CA is set, so events are relayed through the bridge, but no bridge is configured (AUTH_BRIDGE_URL)',
      });
    }
    return path.bridge.call(
      '/v1/errtrack/relay',
      { url: d.url, envelope: toBase64(d.bytes), caCert: path.ca, timeoutMs: d.timeoutMs },
      ErrtrackRelayResponseSchema,
      d.timeoutMs + BRIDGE_MARGIN_MS,
    );
  }
  let res: Response;
  try {
    res = await (path.fetch ?? fetch)(d.url, {
      method: 'POST',
      body: d.bytes,
      headers: { 'Content-Type': 'application/x-sentry-envelope' },
      signal: AbortSignal.timeout(d.timeoutMs),
      redirect: 'manual',
    });
    // Read and dropped: the upstream's body never reaches the caller.
    await res.arrayBuffer();
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    throw new ProblemError(timedOut ? 'GATEWAY_TIMEOUT' : 'BAD_GATEWAY', {
      detail: timedOut
        ? 'the error-tracking system did not answer in time'
        : 'the error-tracking system is unreachable',
      cause: err,
    });
  }
  return {
    status: res.status,
    retryAfter: res.headers.get('Retry-After'),
    rateLimits: res.headers.get('X-Sentry-Rate-Limits'),
  };
}

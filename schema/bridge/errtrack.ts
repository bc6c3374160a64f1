/**
 * The bridge's error-tracking relay (architecture.md §1, §4): the worker hands the bridge one Sentry
 * envelope and the ingest URL computed from the configured DSN; the bridge POSTs it over HTTPS,
 * verifying the error-tracking system's certificate with ERRTRACK_CA (the worker never needs a
 * custom CA). The envelope travels as base64, so binary items (session replays) arrive byte-exact.
 *
 * Failures of the upstream are not outcomes: the bridge answers them as problem+json with 502
 * (UPSTREAM_UNAVAILABLE: refused, reset; UPSTREAM_TLS: certificate not verified) or 504
 * (UPSTREAM_TIMEOUT). Any HTTP answer of the upstream, 2xx or not, is an outcome: its status.
 */
import { z } from 'zod';

/** Largest envelope the relay takes: FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE's upper bound (100 MiB). */
export const ERRTRACK_RELAY_MAX_BYTES = 104_857_600;

/** POST /v1/errtrack/relay. */
export const ErrtrackRelayRequestSchema = /* @__PURE__ */ (() =>
  z.object({
    /**
     * The ingest endpoint, `https://host[:port][/prefix]/api/{projectId}/envelope/`, computed by the
     * worker from its own configuration only. Plain http:// is refused: the relay exists to verify TLS.
     */
    url: z
      .string()
      .max(2048)
      .regex(/^https:\/\/[^\s/?#]+(\/[^\s#]*)?$/i, 'an https:// URL'),
    /** The envelope bytes, base64 (standard alphabet, padded). */
    envelope: z
      .string()
      .max(Math.ceil(ERRTRACK_RELAY_MAX_BYTES / 3) * 4)
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
    /** ERRTRACK_CA: PEM certificate(s) that verify the upstream; null: the system's roots. */
    caCert: z.string().max(65_536).nullable(),
    /** FRONTEND_ERRTRACK_TUNNEL_TIMEOUT (or the reporter's own), in milliseconds: connect to last byte. */
    timeoutMs: z.number().int().min(100).max(600_000),
  }))();
export type ErrtrackRelayRequest = z.infer<typeof ErrtrackRelayRequestSchema>;

/** The upstream's answer: its status, and the rate-limit headers the browser SDK obeys. Never its body. */
export const ErrtrackRelayResponseSchema = z.object({
  status: z.number().int().min(100).max(599),
  /** Retry-After of the upstream, when present. */
  retryAfter: z.string().max(256).nullable(),
  /** X-Sentry-Rate-Limits of the upstream, when present. */
  rateLimits: z.string().max(4096).nullable(),
});
export type ErrtrackRelayResponse = z.infer<typeof ErrtrackRelayResponseSchema>;

/**
 * Mutual TLS for the bridge (architecture.md §1.2): the listener requires a client certificate signed by
 * the internal CA (anything else fails the TLS handshake), and may pin the allowed client subjects
 * (common names); a certificate of the right CA with another subject gets 403. Each refusal is logged
 * (client address and reason) at WARNING, at most REFUSALS_PER_MINUTE lines a minute
 * (docs/operations-bridge.md §5).
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { sendBridgeProblem } from './problem.js';

/** At most this many refusal lines a minute; the next line after a quiet spell says how many were left out. */
export const REFUSALS_PER_MINUTE = 20;

/** Logs refusals at a bounded rate: `log(suppressed)` is called for the lines that fit. */
export function refusalLimiter(perMinute = REFUSALS_PER_MINUTE, now: () => number = Date.now) {
  let windowStart = -Infinity;
  let written = 0;
  let suppressed = 0;
  return (log: (suppressedBefore: number) => void) => {
    const t = now();
    if (t - windowStart >= 60_000) {
      windowStart = t;
      written = 0;
    }
    if (written >= perMinute) {
      suppressed++;
      return;
    }
    written++;
    log(suppressed);
    suppressed = 0;
  };
}

/** What a handshake refusal means, from the client-certificate check's code. */
function handshakeReason(code: string | undefined): string {
  switch (code) {
    case 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE':
      return 'no client certificate';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return `client certificate not signed by BRIDGE_TLS_CA (${code})`;
    case 'CERT_HAS_EXPIRED':
      return 'client certificate expired (CERT_HAS_EXPIRED)';
    case 'CERT_NOT_YET_VALID':
      return 'client certificate not yet valid (CERT_NOT_YET_VALID)';
    case undefined:
    case 'ECONNRESET':
      return 'the connection closed during the TLS handshake';
    default:
      return /ALERT/.test(code)
        ? `the client ended the handshake (${code}: it may not trust the bridge's certificate)`
        : `TLS handshake failed (${code})`;
  }
}

/** Logs every refused TLS handshake (client address, reason), at a bounded rate. */
export function logRefusedHandshakes(app: FastifyInstance, limit: ReturnType<typeof refusalLimiter>): void {
  // The TLS socket may be destroyed by the time a refusal is reported, and its address gone with it:
  // each TCP connection's address is read when it arrives.
  const addresses = new WeakMap<Socket, string>();
  app.server.on('connection', (raw: Socket) => {
    if (raw.remoteAddress) addresses.set(raw, raw.remoteAddress);
  });
  app.server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
    const raw = (socket as TLSSocket & { _parent?: Socket | null })._parent;
    const client = (raw && addresses.get(raw)) ?? socket.remoteAddress ?? 'unknown';
    const code = (socket as TLSSocket & { authorizationError?: string }).authorizationError ?? err.code;
    const reason = handshakeReason(code);
    limit((suppressedBefore) =>
      app.log.warn(
        { client, reason, ...(suppressedBefore ? { suppressedBefore } : {}) },
        `refused a TLS client: ${reason}`,
      ),
    );
  });
}

export interface MtlsOptions {
  key: string | Buffer;
  cert: string | Buffer;
  /** The internal CA that signs the worker's client certificates (and only those are trusted). */
  ca: string | Buffer;
  /** Allowed client subject CNs; empty or absent: any certificate of the CA. */
  allowedSubjects?: readonly string[];
}

/** Node https options that require and verify a client certificate. */
export function httpsOptions(o: MtlsOptions) {
  return {
    key: o.key,
    cert: o.cert,
    ca: o.ca,
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2' as const,
  };
}

/** Refuses requests whose (already verified) client certificate has a subject not in the list. */
export function pinSubjects(
  app: FastifyInstance,
  allowed: readonly string[] | undefined,
  limit: ReturnType<typeof refusalLimiter> = refusalLimiter(),
): void {
  if (!allowed || allowed.length === 0) return;
  const set = new Set(allowed);
  app.addHook('onRequest', async (req, reply) => {
    const cn = (req.raw.socket as TLSSocket).getPeerCertificate?.()?.subject?.CN;
    const subject = Array.isArray(cn) ? cn[0] : cn;
    if (!subject || !set.has(subject)) {
      const client = req.raw.socket.remoteAddress ?? 'unknown';
      const reason = `client certificate CN ${JSON.stringify(subject ?? '')} is not in BRIDGE_ALLOWED_CLIENTS`;
      limit((suppressedBefore) =>
        req.log.warn(
          { client, reason, ...(suppressedBefore ? { suppressedBefore } : {}) },
          `refused a client: ${reason}`,
        ),
      );
      await sendBridgeProblem(reply, 403, 'FORBIDDEN', 'Forbidden', 'this client certificate is not allowed');
    }
  });
}

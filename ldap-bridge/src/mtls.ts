/**
 * Mutual TLS for the bridge (architecture.md §1.2): the listener requires a client certificate signed by
 * the internal CA (anything else fails the TLS handshake), and may pin the allowed client subjects
 * (common names); a certificate of the right CA with another subject gets 403.
 */
import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';

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
export function pinSubjects(app: FastifyInstance, allowed: readonly string[] | undefined): void {
  if (!allowed || allowed.length === 0) return;
  const set = new Set(allowed);
  app.addHook('onRequest', async (req, reply) => {
    const cn = (req.raw.socket as TLSSocket).getPeerCertificate?.()?.subject?.CN;
    const subject = Array.isArray(cn) ? cn[0] : cn;
    if (!subject || !set.has(subject)) {
      await reply.code(403).type('application/problem+json').send({
        type: 'urn:auth-service:problem:forbidden',
        title: 'Forbidden',
        status: 403,
        detail: 'this client certificate is not allowed',
      });
    }
  });
}

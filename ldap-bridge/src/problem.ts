/** The bridge's problem answers (RFC 9457, BridgeProblemSchema of schema/bridge), one shape for every capability. */
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { problemType, type BridgeProblem } from '../../schema/bridge/index.js';

const TITLES: Record<BridgeProblem['code'], string> = {
  DIRECTORY_UNAVAILABLE: 'Directory unavailable',
  DIRECTORY_TIMEOUT: 'Directory timeout',
  DIRECTORY_TLS: 'Directory TLS failure',
  DIRECTORY_ERROR: 'Directory error',
  UPSTREAM_UNAVAILABLE: 'Upstream unavailable',
  UPSTREAM_TIMEOUT: 'Upstream timeout',
  UPSTREAM_TLS: 'Upstream TLS failure',
  STORE_UNAVAILABLE: 'Log store unavailable',
  STORE_TIMEOUT: 'Log store timeout',
  STORE_TLS: 'Log store TLS failure',
  LOGSTORE_URL_NOT_ALLOWED: "Log store URL outside the bridge's LOGSTORE_ALLOWED_URLS",
  MAIL_UNAVAILABLE: 'Mail server unavailable',
  MAIL_TIMEOUT: 'Mail server timeout',
  MAIL_TLS: 'Mail server TLS failure',
  WEBHOOK_TARGET_REFUSED: "Webhook receiver outside the bridge's BRIDGE_WEBHOOK_HOSTS",
  BAD_REQUEST: 'Bad request',
  INTERNAL: 'Internal error',
};

/** Sends a problem with `code`'s title. */
export function sendProblem(
  reply: FastifyReply,
  status: number,
  code: BridgeProblem['code'],
  detail: string,
): FastifyReply {
  const body: BridgeProblem = {
    type: problemType(code),
    title: TITLES[code],
    status,
    detail,
    code,
  };
  return reply.code(status).type('application/problem+json').send(body);
}

/**
 * Sends a problem of the bridge itself rather than of a capability's contract (an unexpected failure,
 * a refused client certificate, an unknown path): the same shape without the contract's `code`.
 */
export function sendBridgeProblem(
  reply: FastifyReply,
  status: 403 | 404 | 500,
  code: 'FORBIDDEN' | 'NOT_FOUND' | 'INTERNAL',
  title: string,
  detail: string,
): FastifyReply {
  return reply
    .code(status)
    .type('application/problem+json')
    .send({ type: problemType(code), title, status, detail });
}

/** Names every invalid field (paths and messages only: zod issues do not carry input values). */
export function invalidBody(error: z.ZodError): string {
  return `invalid request body: ${error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}`;
}

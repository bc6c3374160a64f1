/**
 * The error-tracking relay of the bridge (architecture.md §1, §4): POST /v1/errtrack/relay takes one
 * Sentry envelope (base64) and the ingest URL the worker computed from its configured DSN, and
 * POSTs the envelope there over HTTPS, verifying the upstream's certificate with the given CA
 * (ERRTRACK_CA) or the system's roots. It answers the upstream's status, never its body.
 */
import type { FastifyInstance } from 'fastify';
import { Agent, request } from 'undici';
import { createPoolCache } from './pool-cache.js';
import { invalidBody, sendProblem } from './problem.js';
import {
  ERRTRACK_RELAY_MAX_BYTES,
  ErrtrackRelayRequestSchema,
  type BridgeProblem,
  type ErrtrackRelayResponse,
} from '../../schema/bridge/index.js';

/** The JSON body of the largest envelope (base64) plus room for the other members. */
const ROUTE_BODY_LIMIT = Math.ceil(ERRTRACK_RELAY_MAX_BYTES / 3) * 4 + 128 * 1024;

/** How many distinct CA sets keep a connection pool (one in practice: ERRTRACK_CA). */
const MAX_AGENTS = 8;

type ProblemCode = BridgeProblem['code'];

/** Node's error codes of a refused certificate (verification, name, validity). */
const TLS_CODES = /CERT|SELF_SIGNED|SIGNATURE|ALTNAME|UNABLE_TO_(GET|VERIFY)|ERR_SSL|ERR_TLS|HOSTNAME_MISMATCH/;

/** How a classification names the upstream and the setting of its CA. */
export interface UpstreamWords {
  what: string;
  caSetting: string;
}

const ERRTRACK_WORDS: UpstreamWords = { what: 'the error-tracking system', caSetting: 'ERRTRACK_CA' };

/**
 * Classifies a failed upstream request: TLS refused, timed out, or unreachable. With `withCode`, the detail
 * ends with Node's error code (ECONNREFUSED, UNABLE_TO_VERIFY_LEAF_SIGNATURE: never a secret).
 */
export function classifyUpstreamError(
  err: unknown,
  words: UpstreamWords = ERRTRACK_WORDS,
  withCode = false,
): { status: 502 | 504; code: ProblemCode; detail: string } {
  const chain: unknown[] = [];
  for (let e: unknown = err; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  const names = chain.map((e) => `${(e as Error).name ?? ''} ${(e as { code?: string }).code ?? ''}`).join(' ');
  const code = chain.map((e) => (e as { code?: unknown }).code).find((c) => typeof c === 'string');
  const shown = withCode && typeof code === 'string' && /^[A-Z0-9_]{2,60}$/.test(code) ? code : null;
  if (/TimeoutError|AbortError|UND_ERR_(CONNECT|HEADERS|BODY)_TIMEOUT/.test(names)) {
    return { status: 504, code: 'UPSTREAM_TIMEOUT', detail: `${words.what} did not answer in time` };
  }
  if (TLS_CODES.test(names)) {
    return {
      status: 502,
      code: 'UPSTREAM_TLS',
      detail: `the TLS certificate of ${words.what} was not verified (${shown ? `${shown}; ` : ''}${words.caSetting})`,
    };
  }
  return {
    status: 502,
    code: 'UPSTREAM_UNAVAILABLE',
    detail: `${words.what} is unreachable${shown ? ` (${shown})` : ''}`,
  };
}

export interface ErrtrackRelayOptions {
  /** Connect timeout cap, in milliseconds (the request's own timeoutMs applies as well). */
  connectTimeoutMs?: number;
}

/** The relay as a Fastify plugin: registers POST /v1/errtrack/relay; closes its pools on close. */
export async function errtrackPlugin(app: FastifyInstance, o: ErrtrackRelayOptions = {}): Promise<void> {
  // One pool per CA, so connections to the upstream are reused; a CA never seen is a new pool.
  const agents = createPoolCache<Agent>(MAX_AGENTS);
  const agentFor = (ca: string | null): Agent =>
    // rejectUnauthorized is the default and stays on: an unverified upstream is refused.
    agents.get(
      ca ?? '',
      () =>
        new Agent({
          connect: { ...(ca ? { ca } : {}), rejectUnauthorized: true, timeout: o.connectTimeoutMs ?? 10_000 },
        }),
    );
  app.addHook('onClose', async () => {
    await agents.closeAll();
  });

  app.post('/v1/errtrack/relay', { bodyLimit: ROUTE_BODY_LIMIT }, async (req, reply) => {
    const parsed = ErrtrackRelayRequestSchema.safeParse(req.body);
    if (!parsed.success) {
      return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    }
    const { url, envelope, caCert, timeoutMs } = parsed.data;
    const bytes = Buffer.from(envelope, 'base64');
    try {
      const res = await request(url, {
        method: 'POST',
        body: bytes,
        headers: { 'content-type': 'application/x-sentry-envelope', 'content-length': String(bytes.length) },
        dispatcher: agentFor(caCert),
        signal: AbortSignal.timeout(timeoutMs),
      });
      // The upstream's body is read (to free the connection) and dropped: it never goes back.
      await res.body.dump({ limit: 64 * 1024 });
      const header = (name: string) => {
        const v = res.headers[name];
        return (Array.isArray(v) ? v[0] : v) ?? null;
      };
      const out: ErrtrackRelayResponse = {
        status: res.statusCode,
        retryAfter: header('retry-after'),
        rateLimits: header('x-sentry-rate-limits'),
      };
      return reply.code(200).send(out);
    } catch (err) {
      const c = classifyUpstreamError(err);
      req.log.warn({ err, code: c.code }, 'errtrack relay failed');
      return sendProblem(reply, c.status, c.code, c.detail);
    }
  });
}

/**
 * POST /v3/sentry-tunnel (specification, Endpoints rule 4; architecture.md §4): the browser SDK posts
 * envelopes here instead of to the error-tracking system. The body is read up to
 * FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE (413 past it), its header's `dsn` must name the project of
 * FRONTEND_ERRTRACK_DSN (403 otherwise), and it is relayed to the ingest URL computed from
 * FRONTEND_ERRTRACK_DSN alone, so a caller can never choose where the relay connects.
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ErrtrackRelayResponse } from '../../../schema/bridge/index.js';
import type { App, AppEnv } from '../http/context.js';
import { ProblemError, problemResponses } from '../http/problem.js';
import { deliverEnvelope } from './deliver.js';
import { envelopeEndpoint, parseDsn, sameProject } from './dsn.js';
import { MalformedEnvelopeError, readEnvelope } from './envelope.js';
import { readBodyLimited } from './read-limited.js';
import { requestHeader } from '../http/node-messages.js';
import { publicRoute } from '../http/public-route.js';

/** The body's media types; a body without Content-Type (the SDK's binary envelopes) passes too. */
const ENVELOPE_TYPES = ['application/x-sentry-envelope', 'text/plain'];

const Envelope = z.string().openapi({
  format: 'binary',
  description: 'a Sentry envelope whose header carries the `dsn` of FRONTEND_ERRTRACK_DSN',
});

export const TunnelResultSchema = z
  .object({
    relayed: z.literal(true),
    status: z.number().int().openapi({ description: "the error-tracking system's status (2xx)" }),
  })
  .openapi('SentryTunnelResult');

export const tunnelRoute = publicRoute({
  method: 'post',
  operationId: 'relayErrorEnvelope',
  path: '/v3/sentry-tunnel',
  tags: ['errtrack'],
  summary: 'Relay a browser error-tracking envelope',
  description: [
    'No authentication; any role. Used by the web interface only when FRONTEND_ERRTRACK_TUNNEL is True (404 ' +
      'otherwise, and while FRONTEND_ERRTRACK_DSN or ERRTRACK_ENV is empty).',
    "The envelope's header `dsn` must name the project of FRONTEND_ERRTRACK_DSN (same host, port and project " +
      'id): 403 otherwise; a body that is not an envelope: 400; a Content-Type other than text/plain or ' +
      'application/x-sentry-envelope (none is accepted): 415; over FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE bytes: 413 ' +
      '(checked while reading).',
    'The envelope goes, byte for byte, to the ingest endpoint of FRONTEND_ERRTRACK_DSN, through the bridge ' +
      '(which verifies TLS with ERRTRACK_CA) when ERRTRACK_CA is set, else directly. The answer carries the ' +
      "system's status only, never its body: 200 when it accepted the event, 429 with its Retry-After and " +
      'X-Sentry-Rate-Limits when it rate-limits, 502 for any other refusal or when it is unreachable or its ' +
      'certificate is not verified, 503 when the bridge is needed but not configured or unreachable, 504 past ' +
      'FRONTEND_ERRTRACK_TUNNEL_TIMEOUT.',
  ].join('\n\n'),
  request: {
    body: {
      required: true,
      content: { 'application/x-sentry-envelope': { schema: Envelope }, 'text/plain': { schema: Envelope } },
    },
  },
  responses: {
    200: { description: 'relayed and accepted', content: { 'application/json': { schema: TunnelResultSchema } } },
    ...problemResponses(400, 403, 404, 413, 429, 502, 503, 504),
  },
});

/** Registers POST /v3/sentry-tunnel. */
export function registerSentryTunnel(app: App): void {
  app.openapi(tunnelRoute, async (c) => {
    const answer = await relayEnvelope(c);
    // The SDK honours these headers to back off; they carry no secret of the system.
    const headers: Record<string, string> = {};
    if (answer.rateLimits) headers['X-Sentry-Rate-Limits'] = answer.rateLimits;
    if (answer.retryAfter) headers['Retry-After'] = answer.retryAfter;
    if (answer.status >= 200 && answer.status < 300)
      return c.json({ relayed: true as const, status: answer.status }, 200, headers);
    if (answer.status === 429)
      throw new ProblemError('TOO_MANY_REQUESTS', {
        detail: 'the error-tracking system rate-limits these events',
        headers,
      });
    throw new ProblemError('BAD_GATEWAY', {
      detail: `the error-tracking system refused the event (status ${answer.status})`,
      extensions: { upstreamStatus: answer.status },
    });
  });
}

/** Checks one envelope and delivers it; answers the upstream's status. */
async function relayEnvelope(c: Context<AppEnv>): Promise<ErrtrackRelayResponse> {
  // Restart-only variables: the environment snapshot (the specification: they apply after a restart).
  const env = c.var.deps.config.env;
  const configured = parseDsn(env.get('FRONTEND_ERRTRACK_DSN'));
  if (!env.get('FRONTEND_ERRTRACK_TUNNEL') || !configured || env.get('ERRTRACK_ENV') === '') {
    throw new ProblemError('NOT_FOUND', {
      detail: 'the sentry tunnel is off (FRONTEND_ERRTRACK_TUNNEL, FRONTEND_ERRTRACK_DSN, ERRTRACK_ENV)',
    });
  }
  const bytes = await readBodyLimited(c.req.raw, env.get('FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE'));
  // Checked after reading, so the connection stays usable (read-limited.ts).
  const type = requestHeader(c, 'content-type');
  if (type !== undefined && !ENVELOPE_TYPES.includes(type.split(';')[0]!.trim().toLowerCase())) {
    throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', {
      detail: `send the envelope as ${ENVELOPE_TYPES.join(' or ')} (Content-Type)`,
    });
  }
  let header: Record<string, unknown>;
  try {
    header = readEnvelope(bytes).header;
  } catch (err) {
    if (err instanceof MalformedEnvelopeError)
      throw new ProblemError('MALFORMED_REQUEST', { detail: `not a Sentry envelope: ${err.message}` });
    throw err;
  }
  const claimed = typeof header.dsn === 'string' ? parseDsn(header.dsn) : null;
  if (!claimed) throw new ProblemError('MALFORMED_REQUEST', { detail: 'the envelope header has no valid dsn' });
  // Only the project of FRONTEND_ERRTRACK_DSN: the tunnel must not become an open relay.
  if (!sameProject(claimed, configured))
    throw new ProblemError('FORBIDDEN', {
      detail: 'the envelope is addressed to another project than FRONTEND_ERRTRACK_DSN',
    });

  return deliverEnvelope(
    { ca: env.get('ERRTRACK_CA'), bridge: c.var.scope.bridge },
    {
      url: envelopeEndpoint(configured),
      bytes,
      timeoutMs: Math.round(env.get('FRONTEND_ERRTRACK_TUNNEL_TIMEOUT') * 1000),
    },
  );
}

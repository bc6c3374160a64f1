/**
 * The service's own error reports (specification: ERRTRACK_DSN, SENDER_ERRTRACK_DSN, ERRTRACK_ENV,
 * ERRTRACK_CA): one error becomes one Sentry event envelope for the DSN the caller chooses, built
 * with @sentry/core's envelope helpers and delivered like the tunnel's envelopes (through the bridge
 * when ERRTRACK_CA is set). Nothing is sent while the DSN or ERRTRACK_ENV is empty.
 *
 * Events carry the error's type, message and stack, the method and path of the request and its
 * request id; never headers, cookies, bodies or query strings, and every value of a secret
 * configuration variable, credential-looking text and API token is masked in the message and stack.
 */
import {
  createEventEnvelope,
  dsnFromString,
  getEnvelopeEndpointWithUrlEncodedAuth,
  serializeEnvelope,
  uuid4,
  type Event,
  type StackFrame,
} from '@sentry/core';
import type { BridgeClient } from '../bridge/client.js';
import { REGISTRY, VAR_NAMES, type ConfigSnapshot } from '../config/index.js';
import { deliverEnvelope } from './deliver.js';

export interface ReporterOptions {
  /** The DSN of the events (ERRTRACK_DSN for the worker; SENDER_ERRTRACK_DSN for mail sending). */
  dsn: string;
  /** ERRTRACK_ENV: empty means no events at all. */
  environment: string;
  /** ERRTRACK_CA ('' when unset): set, events go through the bridge. */
  ca: string;
  bridge: BridgeClient | undefined;
  /** Text to mask wherever it appears (secret configuration values). */
  secrets: readonly string[];
  /** Logger name on the event, e.g. auth-service or auth-service.mail. */
  logger: string;
  clock: () => number;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface ErrorContext {
  method?: string;
  /** Origin and path only (the query string is never reported). */
  url?: string;
  requestId?: string;
}

const SDK = { name: 'auth-service.errtrack', version: '1.0.0' };
const MASK = '[masked]';

/** Values of the secret configuration variables, for masking. */
export function secretValues(config: ConfigSnapshot): string[] {
  return VAR_NAMES.filter((n) => REGISTRY[n].secret)
    .map((n) => config.get(n))
    .filter((v): v is string => typeof v === 'string' && v.length >= 4);
}

/** Masks secrets and credential-looking text. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join(MASK);
  return out
    .replace(/\b(Basic|Bearer)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${MASK}`)
    .replace(/\bast_[A-Za-z0-9_-]+/g, MASK)
    .replace(
      /\b(password|passwd|secret|token|authorization|cookie)(["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,;&]+)/gi,
      `$1$2${MASK}`,
    );
}

/** V8 stack lines ("at fn (file:line:col)" / "at file:line:col") as Sentry frames, oldest first. */
function framesOf(stack: string | undefined, secrets: readonly string[]): StackFrame[] {
  if (!stack) return [];
  const frames: StackFrame[] = [];
  for (const line of stack.split('\n').slice(1, 51)) {
    const m = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    frames.push({
      function: m[1] ? maskSecrets(m[1], secrets) : '?',
      filename: maskSecrets(m[2]!, secrets),
      lineno: Number(m[3]),
      colno: Number(m[4]),
      in_app: !m[2]!.includes('node_modules'),
    });
  }
  return frames.reverse();
}

/** The event of an error. */
export function errorEvent(
  err: unknown,
  o: Pick<ReporterOptions, 'environment' | 'secrets' | 'logger' | 'clock'>,
  ctx: ErrorContext,
): Event {
  const e = err instanceof Error ? err : new Error(typeof err === 'string' ? err : 'a non-Error value was thrown');
  const frames = framesOf(e.stack, o.secrets);
  return {
    event_id: uuid4(),
    timestamp: o.clock() / 1000,
    platform: 'javascript',
    level: 'error',
    logger: o.logger,
    environment: o.environment,
    exception: {
      values: [
        {
          type: e.name,
          value: maskSecrets(e.message, o.secrets),
          mechanism: { type: 'auth-service.onError', handled: false },
          ...(frames.length > 0 ? { stacktrace: { frames } } : {}),
        },
      ],
    },
    ...(ctx.method || ctx.url
      ? { request: { ...(ctx.method ? { method: ctx.method } : {}), ...(ctx.url ? { url: ctx.url } : {}) } }
      : {}),
    ...(ctx.requestId ? { tags: { request_id: ctx.requestId } } : {}),
  };
}

/**
 * Reports one error to `o.dsn`; resolves to the event id, or null when nothing is sent (no DSN or
 * no ERRTRACK_ENV). Throws when delivery fails (callers in the background log it).
 */
export async function reportError(o: ReporterOptions, err: unknown, ctx: ErrorContext = {}): Promise<string | null> {
  if (o.dsn === '' || o.environment === '') return null;
  const dsn = dsnFromString(o.dsn);
  if (!dsn) return null;
  const event = errorEvent(err, o, ctx);
  const body = serializeEnvelope(createEventEnvelope(event, dsn, { sdk: SDK }));
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : new Uint8Array(body);
  const answer = await deliverEnvelope(
    { ca: o.ca, bridge: o.bridge, fetch: o.fetch },
    { url: getEnvelopeEndpointWithUrlEncodedAuth(dsn, undefined, SDK), bytes, timeoutMs: o.timeoutMs ?? 10_000 },
  );
  if (answer.status < 200 || answer.status >= 300)
    throw new Error(`the error-tracking system answered ${answer.status}`);
  return event.event_id ?? null;
}

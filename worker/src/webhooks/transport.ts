/**
 * How a webhook leaves the service (docs/webhooks.md, "Targets"). A host may hand over its own transport
 * (`Scope.webhookFetch`): the Node host's resolves the name itself and connects to the address it checked
 * (worker/node/webhook-transport.ts). Without one (the edge), `fetch` sends it: Cloudflare's fetch reaches
 * only public addresses for a public name, and IP addresses are checked here (targets.ts) before any call.
 * Either way: no redirect is followed, the answer is read up to ANSWER_BYTES, and a call ends at its timeout.
 * A subscription with `delivery: bridge` (a receiver behind a private CA) goes through the bridge instead
 * (bridge-transport.ts), whatever the host.
 */
import { checkTarget, type TargetRules } from './targets.js';

/** The bytes of an answer kept (the attempts list shows them). */
export const ANSWER_BYTES = 1024;

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  rules: TargetRules;
}

/** An answer: its status, its Retry-After, and its first bytes. */
export interface WebhookAnswer {
  status: number;
  retryAfter: string | null;
  body: string;
  /** How long the receiver took, when measured nearer to it than the sender can (the bridge). */
  durationMs?: number;
}

/**
 * Sends one webhook: an answer, or a thrown error (refused target, timeout, connection failure) whose
 * message says why, without the secret or the body.
 */
export type WebhookFetch = (req: WebhookRequest) => Promise<WebhookAnswer>;

/** Reads at most `limit` bytes of a body, then lets the rest go. */
export async function firstBytes(body: ReadableStream<Uint8Array> | null, limit = ANSWER_BYTES): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    void reader.cancel().catch(() => {});
  }
  const all = new Uint8Array(Math.min(size, limit));
  let at = 0;
  for (const c of chunks) {
    const part = c.subarray(0, all.length - at);
    all.set(part, at);
    at += part.length;
  }
  return new TextDecoder().decode(all);
}

/** The transport of a host without its own (the edge): `fetch`, after the URL's checks. */
export const fetchWebhook: WebhookFetch = async (req) => {
  const target = checkTarget(req.url, req.rules);
  if ('refused' in target) throw new Error(`refused: ${target.refused}`);
  const res = await fetch(target.url, {
    method: 'POST',
    headers: req.headers,
    body: req.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(req.timeoutMs),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await firstBytes(res.body) };
};

/**
 * Reads a request body up to a byte limit, counting while it streams in (DESIGN.md §9): a body
 * over the limit is refused as soon as the limit is passed, whether Content-Length announced it,
 * understated it or was absent (chunked uploads), so it is never buffered whole.
 *
 * Past the limit, up to `max` more bytes are read and dropped (never kept) before the answer, so
 * that the connection stays usable for the next request: a response that leaves a request body
 * unread makes the connection unusable, and proxies in front of the worker (wrangler dev's, for
 * one) then fail the next request on it. A body longer still is cut off: the stream is cancelled.
 */
import { ProblemError } from '../http/problem.js';

function tooLarge(max: number): ProblemError {
  return new ProblemError('PAYLOAD_TOO_LARGE', { detail: `the body is larger than ${max} bytes (FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE)`, extensions: { maxBytes: max } });
}

/** Reads and drops up to `budget` more bytes; cancels the stream if it goes on beyond that. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let left = budget;
  while (left >= 0) {
    const { done, value } = await reader.read();
    if (done) return;
    left -= value.byteLength;
  }
  await reader.cancel().catch(() => {});
}

/** The body's bytes, or a 413 problem past `max` bytes. */
export async function readBodyLimited(req: Request, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = req.headers.get('content-length');
  const length = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
  // Announced larger than the limit plus what would be drained: refused without reading a byte.
  if (length !== null && length > 2 * max) throw tooLarge(max);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await drain(reader, 2 * max - size);
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

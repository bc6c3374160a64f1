/**
 * Reads a request body up to a byte limit, counting while it streams in (DESIGN.md §9): a body
 * over the limit is refused as soon as the limit is passed, whether Content-Length announced it,
 * understated it or was absent (chunked uploads), so it is never buffered whole.
 */
import { ProblemError } from '../http/problem.js';

function tooLarge(max: number): ProblemError {
  return new ProblemError('PAYLOAD_TOO_LARGE', { detail: `the body is larger than ${max} bytes (FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE)`, extensions: { maxBytes: max } });
}

/** The body's bytes, or a 413 problem past `max` bytes. */
export async function readBodyLimited(req: Request, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = req.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > max) throw tooLarge(max);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
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

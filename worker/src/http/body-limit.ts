/**
 * Request body limits: a body is never buffered past its limit, so an anonymous caller cannot make
 * the service hold (or parse) a body of any size. A Content-Length over the limit is refused before
 * a byte is read; a chunked body is counted while it streams in and refused once it passes the
 * limit, whatever it announced.
 *
 * Past the limit, up to the limit again is read and dropped (never kept) before the 413, so that
 * the connection stays usable for the next request: a response that leaves a request body unread
 * makes the connection unusable, and proxies in front of the worker (wrangler dev's, for one) then
 * fail the next request on it. A longer body is cut off (the stream is cancelled): the service stops
 * reading, and the host closes the connection.
 *
 * A JSON body within the limit is also measured for its nesting (json-depth.ts) here, the one place
 * every body passes before a handler parses it.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './context.js';
import { ProblemError } from './problem.js';
import { requestHeader } from './node-messages.js';
import { checkJsonDepth, isJsonType } from './json-depth.js';

/** The 413 problem of a body over `max` bytes; `variable` names the setting that sets the limit. */
export function bodyTooLarge(max: number, variable: string): ProblemError {
  const detail = `the body is larger than ${max} bytes (${variable})`;
  return new ProblemError('PAYLOAD_TOO_LARGE', { detail, extensions: { maxBytes: max } });
}

/** The announced length, when Content-Length is present, well-formed and not overridden by chunking. */
function declaredLength(contentLength: string | null | undefined, chunked: boolean): number | null {
  if (contentLength == null || chunked || !/^\d+$/.test(contentLength)) return null;
  return Number(contentLength);
}

/** Reads and drops up to `budget` more bytes; cancels the stream if it goes on beyond that. */
async function drainOrCut(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let left = budget;
  while (left >= 0) {
    const { done, value } = await reader.read();
    if (done) return;
    left -= value.byteLength;
  }
  await reader.cancel().catch(() => {});
}

/**
 * Refuses a body whose Content-Length is over `max` without keeping any of it: one within twice
 * the limit is read and dropped (the connection stays usable), a longer one is not read at all.
 */
async function refuseDeclared(body: ReadableStream<Uint8Array>, length: number, max: number, variable: string) {
  if (length <= 2 * max) await drainOrCut(body.getReader(), length);
  else await body.cancel().catch(() => {});
  throw bodyTooLarge(max, variable);
}

/** `chunks` (of `size` bytes in all) as one array. */
function joinChunks(chunks: Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** The body's bytes, or a 413 problem past `max` bytes (counted while reading). */
export async function readBodyLimited(req: Request, max: number, variable: string): Promise<Uint8Array<ArrayBuffer>> {
  const length = declaredLength(req.headers.get('content-length'), req.headers.has('transfer-encoding'));
  if (!req.body) return new Uint8Array(0);
  if (length !== null && length > max) await refuseDeclared(req.body, length, max, variable);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await drainOrCut(reader, 2 * max - size);
      throw bodyTooLarge(max, variable);
    }
    chunks.push(value);
  }
  return joinChunks(chunks, size);
}

/**
 * The paths (below ROOT_PATH) that bound their bodies themselves, by the variable that sets their
 * limit: limitBody leaves them alone, and the OpenAPI description documents their 413 with it
 * (docs/shared-responses.ts). Every other request, whatever its method and whether its operation
 * takes a body or not, is bounded by AUTH_MAX_BODY_SIZE.
 */
export const SELF_LIMITED_BODIES: Readonly<Record<string, string>> = {
  '/v3/sentry-tunnel': 'FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE',
};

/** What limitBody bounds, and which paths it leaves to their own limit. */
export interface BodyLimitOptions {
  /** Bytes. */
  max: number;
  /** The variable that sets `max`, named in the 413. */
  variable: string;
  /** Paths that bound their bodies themselves (the Sentry tunnel, with its own limit). */
  exempt: (path: string) => boolean;
}

/**
 * The Node host's body of an announced length within the limit, read from the Node request itself
 * (node:http stops at Content-Length): building the Fetch Request, its stream and its abort signal
 * only to read a login's few bytes cost more than the rest of the request (architecture.md §6).
 */
async function readAnnounced(incoming: AsyncIterable<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of incoming) {
      chunks.push(chunk);
      size += chunk.byteLength;
    }
  } catch {
    throw new ProblemError('MALFORMED_REQUEST', { detail: 'the body ended before its Content-Length' });
  }
  return joinChunks(chunks, size);
}

/** Hands a body read here to the handler through Hono's body cache (c.req.json, text, parseBody...). */
function keepBody(c: Context<AppEnv>, bytes: Uint8Array<ArrayBuffer>): void {
  // The cache holds promises (HonoRequest calls `.then` on its entries), whatever its type says.
  const cache = c.req.bodyCache as Record<string, Promise<unknown>>;
  cache.arrayBuffer = Promise.resolve(bytes.buffer);
  // Decoded as Response.text() does (UTF-8, a leading BOM dropped), once, for JSON and forms.
  cache.text = Promise.resolve(new TextDecoder().decode(bytes));
}

/** Refuses a JSON body nested too deep; its text stays in Hono's body cache for the handler. */
async function boundJson(c: Context<AppEnv>): Promise<void> {
  if (isJsonType(requestHeader(c, 'content-type'))) checkJsonDepth(await c.req.text());
}

/**
 * Bounds every request body before a handler sees it (and the nesting of a JSON one). A body with a Content-Length
 * within the limit passes untouched on the edge (the runtime enforces the announced length), and is read here
 * from the Node request on Node (readAnnounced); a chunked one is read here, counted, and handed on
 * as bytes.
 */
export function limitBody(o: BodyLimitOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // A request without a body passes without touching `body`, which spares the Node host building
    // a full Request, with its stream and its abort signal (architecture.md §6). Without Content-Length and
    // Transfer-Encoding, an HTTP/1.1 request has no body (RFC 9112 §6.3): every request the Node
    // host gets (node:http speaks HTTP/1.1). The edge may get HTTP/2 bodies, which announce neither,
    // so there only a GET or HEAD passes that way (no handler reads their bodies). Content-Length: 0
    // is an empty body on both.
    const method = c.req.method;
    const readOnly = method === 'GET' || method === 'HEAD';
    const node = c.var.deps?.nodeMessages?.(c);
    const announced = requestHeader(c, 'content-length');
    const chunked = requestHeader(c, 'transfer-encoding') !== undefined;
    const length = declaredLength(announced, chunked);
    if (length === 0 || (announced === undefined && !chunked && (readOnly || node))) return next();
    if (o.exempt(c.req.path)) return next();
    if (node && length !== null && length <= o.max) {
      keepBody(c, await readAnnounced(node.incoming));
      await boundJson(c);
      return next();
    }
    const body = c.req.raw.body;
    if (!body) return next();
    if (length !== null) {
      if (length > o.max) await refuseDeclared(body, length, o.max, o.variable);
      if (!readOnly) await boundJson(c);
      return next();
    }
    const bytes = await readBodyLimited(c.req.raw, o.max, o.variable);
    // A GET or HEAD Request cannot carry a body (the constructor throws: a 500 on workerd, where a
    // chunked GET arrives with one): counted and bounded above, then dropped, as no handler reads it.
    const raw = c.req.raw;
    c.req.raw = readOnly
      ? new Request(raw.url, { method, headers: raw.headers, signal: raw.signal })
      : new Request(raw, { body: bytes });
    if (!readOnly) await boundJson(c);
    return next();
  };
}

/**
 * Reads a tunnel envelope up to FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE (architecture.md §4), counting while it
 * streams in: the shared reader of ../http/body-limit.ts, which refuses a body over the limit as
 * soon as it passes it (announced or not), keeps the connection usable for a body within twice the
 * limit and cuts a longer one off. The tunnel is exempt from the service-wide AUTH_MAX_BODY_SIZE.
 */
import { readBodyLimited as readLimited } from '../http/body-limit.js';

/** The body's bytes, or a 413 problem past `max` bytes. */
export function readBodyLimited(req: Request, max: number): Promise<Uint8Array<ArrayBuffer>> {
  return readLimited(req, max, 'FRONTEND_ERRTRACK_TUNNEL_MAX_SIZE');
}

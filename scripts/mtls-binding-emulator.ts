/**
 * The local equivalent of the edge host's `mtls_certificates` binding (architecture.md §1.1): workerd under
 * `wrangler dev` has no such binding, so this Node server listens on loopback over plain HTTP and
 * forwards every request to the bridge presenting the worker's client certificate, exactly as the
 * Node host's transport does. Development and tests only; production uses the binding.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ConfigSnapshot } from '../worker/src/config/index.js';
import { nodeBridgeTransport } from '../worker/node/bridge-transport.js';

export interface MtlsBindingEmulator {
  /** The plain-HTTP loopback URL to give the edge host as BRIDGE_URL. */
  url: string;
  close(): Promise<void>;
}

/** Starts the emulator for the bridge named by `config` (BRIDGE_URL and BRIDGE_TLS_*). */
export async function startMtlsBindingEmulator(config: ConfigSnapshot, port = 0): Promise<MtlsBindingEmulator> {
  const send = nodeBridgeTransport(config);
  if (!send) throw new Error('BRIDGE_URL is unset: nothing to emulate');
  const server: Server = createServer(async (req, res) => {
    try {
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : (Readable.toWeb(req) as ReadableStream);
      const upstream = await send(req.url ?? '/', {
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/octet-stream' },
        body,
        duplex: 'half',
        // The worker's own AbortSignal ends the request; this only bounds a forgotten one.
        timeoutMs: 600_000,
      } as RequestInit & { timeoutMs: number });
      // `Connection: close`: the worker never reuses a socket this server may be closing (a
      // keep-alive race that would surface as a spurious "bridge unreachable").
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream',
        connection: 'close',
      });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch {
      // The bridge is unreachable or refused the TLS handshake: the connection fails, as it would
      // through the binding, and the worker reports the bridge as unreachable.
      req.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

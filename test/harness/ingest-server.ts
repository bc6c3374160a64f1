/**
 * A stand-in for the error-tracking system's ingest endpoint: an HTTPS server with a certificate
 * from its own test CA (handed to the bridge as ERRTRACK_CA), recording every request it receives
 * byte for byte. Switches: answer slowly (a slow upstream), answer another status, or present a
 * certificate of another CA (a CA mismatch). An optional plain-HTTP listener serves the same store.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCert, makeCa } from '../../scripts/dev-certs.js';

export interface ReceivedRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Which listener: https or http. */
  scheme: 'https' | 'http';
}

export interface IngestServer {
  /** https://127.0.0.1:port */
  origin: string;
  /** http://127.0.0.1:port (the plain listener) */
  httpOrigin: string;
  /** PEM of the CA that signs the server's certificate (ERRTRACK_CA). */
  caPem: string;
  /** PEM of another CA, which does not sign the server's certificate. */
  otherCaPem: string;
  received: ReceivedRequest[];
  /** TCP connections accepted (by either listener) since the start. */
  connections: number;
  /** Milliseconds to wait before answering (0: at once). */
  delayMs: number;
  /** Status of the answers (200 by default) and extra headers. */
  status: number;
  headers: Record<string, string>;
  /** The body of the answers (null: a JSON document the relays must never pass on). */
  answerBody: string | null;
  /** Presents a certificate of the other CA (true) or of its own (false). */
  useOtherCa(on: boolean): void;
  /** Resolves once `n` requests have been received, or rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  reset(): void;
  stop(): Promise<void>;
}

/** Starts the ingest server on loopback (HTTPS and plain HTTP), on 127.0.0.1 or `host`. */
export async function startIngestServer(o: { host?: string } = {}): Promise<IngestServer> {
  const host = o.host ?? '127.0.0.1';
  const dir = mkdtempSync(join(tmpdir(), 'ingest-'));
  const ca = makeCa(dir, 'ingest-ca');
  const other = makeCa(dir, 'other-ca');
  const hosts = [...new Set(['127.0.0.1', 'localhost', host])];
  const own = issueCert(dir, ca, 'ingest', { cn: 'ingest', usage: 'server', hosts });
  const foreign = issueCert(dir, other, 'ingest-foreign', { cn: 'ingest', usage: 'server', hosts });
  const read = (p: string) => readFileSync(p, 'utf8');
  const ownCtx = { key: read(own.key), cert: read(own.cert) };
  const foreignCtx = { key: read(foreign.key), cert: read(foreign.cert) };
  const sockets = new Set<import('node:net').Socket>();

  const handle = (scheme: 'https' | 'http') => (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      server.received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        scheme,
      });
      notify();
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(server.status, { 'content-type': 'application/json', ...server.headers });
        res.end(server.answerBody ?? JSON.stringify({ id: 'ingest-secret-body-never-relayed' }));
      };
      if (server.delayMs > 0) setTimeout(answer, server.delayMs);
      else answer();
    });
  };
  const https: HttpsServer = createHttpsServer(ownCtx, handle('https'));
  const http: HttpServer = createHttpServer(handle('http'));
  for (const s of [https, http])
    s.on('connection', (sock) => {
      server.connections += 1;
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
  await Promise.all([https, http].map((s) => new Promise<void>((r) => s.listen(0, host, r))));

  let waiters: Array<() => void> = [];
  const notify = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };

  const server: IngestServer = {
    origin: `https://${host}:${(https.address() as AddressInfo).port}`,
    httpOrigin: `http://${host}:${(http.address() as AddressInfo).port}`,
    connections: 0,
    caPem: read(ca.cert),
    otherCaPem: read(other.cert),
    received: [],
    delayMs: 0,
    status: 200,
    headers: {},
    answerBody: null,
    useOtherCa(on) {
      https.setSecureContext(on ? foreignCtx : ownCtx);
      // Connections kept alive by a client were made with the old certificate: drop them.
      for (const s of sockets) s.destroy();
    },
    waitFor(n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`ingest server: ${server.received.length} of ${n} requests after ${timeoutMs} ms`)),
          timeoutMs,
        );
        const check = () => {
          if (server.received.length >= n) {
            clearTimeout(timer);
            resolve(server.received);
          } else waiters.push(check);
        };
        check();
      });
    },
    reset() {
      server.received.length = 0;
      server.delayMs = 0;
      server.status = 200;
      server.headers = {};
      server.answerBody = null;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await Promise.all([https, http].map((s) => new Promise<void>((r) => s.close(() => r()))));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

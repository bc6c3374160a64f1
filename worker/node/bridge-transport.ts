/**
 * The Node host's bridge transport: undici with the client certificate (mutual TLS). A failed request
 * is classified from the TLS and socket error codes Node reports (BridgeTransportError; the causes:
 * worker/src/bridge/client.ts, docs/operations-bridge.md §5).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { connect } from 'node:tls';
import { Agent, fetch } from 'undici';
import { BridgeTransportError, type BridgeFailureCause, type BridgeFetch } from '../src/bridge/client.js';
import type { ConfigSnapshot } from '../src/config/index.js';

interface Tls {
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

/** The transport, or undefined while BRIDGE_URL is unset. Throws naming an unreadable file. */
export function nodeBridgeTransport(config: ConfigSnapshot): BridgeFetch | undefined {
  const base = config.get('BRIDGE_URL');
  if (base === '') return undefined;
  if (!base.startsWith('https://'))
    throw new Error(
      `AUTH_BRIDGE_URL ${base}: the Node host reaches the bridge over mutual TLS, so it needs an https:// URL`,
    );
  const read = (name: 'BRIDGE_TLS_CERT' | 'BRIDGE_TLS_KEY' | 'BRIDGE_TLS_CA') => {
    try {
      return readFileSync(config.get(name));
    } catch {
      // The variable as the operator sets it (the AUTH_ prefix); the bridge's own are BRIDGE_TLS_*.
      throw new Error(
        `cannot read AUTH_${name} (${config.get(name)}): the service needs its client certificate, its key and ` +
          "the CA of the bridge's certificate to reach AUTH_BRIDGE_URL",
      );
    }
  };
  const tls: Tls = { cert: read('BRIDGE_TLS_CERT'), key: read('BRIDGE_TLS_KEY'), ca: read('BRIDGE_TLS_CA') };
  const dispatcher = new Agent({ connect: tls });
  return async (path, { timeoutMs, ...init }) => {
    try {
      return (await fetch(`${base}${path}`, {
        ...(init as Parameters<typeof fetch>[1]),
        dispatcher,
        signal: AbortSignal.timeout(timeoutMs),
      })) as unknown as Response;
    } catch (err) {
      throw await classify(err, base, tls);
    }
  };
}

/** The server-certificate checks that failed: the service does not trust the bridge's certificate. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_PURPOSE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const DOWN: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** The classified error of a failed fetch (a timeout stays as it is: the client names it). */
async function classify(err: unknown, base: string, tls: Tls): Promise<unknown> {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return err;
  const inner = (err as { cause?: unknown }).cause ?? err;
  const code = String((inner as { code?: unknown }).code ?? '');
  const message = inner instanceof Error ? inner.message : String(inner);
  const fail = (failure: BridgeFailureCause, reason: string) => new BridgeTransportError(failure, reason);
  if (DOWN[code]) return fail('BRIDGE_DOWN', `${DOWN[code]} (${code})`);
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT')
    return fail('BRIDGE_TIMEOUT', `the connection was not established in time (${code})`);
  if (UNTRUSTED.has(code))
    return fail('BRIDGE_CERT_UNTRUSTED', `the bridge's server certificate is not trusted: ${message} (${code})`);
  if (/^ERR_SSL_.*ALERT/.test(code))
    return fail('BRIDGE_CLIENT_CERT_REFUSED', `the bridge refused the TLS handshake: ${code}`);
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE') {
    // A Node bridge refusing a client certificate under TLS 1.3 just closes the connection after the
    // handshake (no alert): a fresh connection tells that apart from a connection that dropped.
    const seen = await probe(base, tls);
    if (seen === 'closed')
      return fail(
        'BRIDGE_CLIENT_CERT_REFUSED',
        'the bridge closed the connection after the TLS handshake without answering: it refuses this client ' +
          "certificate (its CA is not the bridge's BRIDGE_TLS_CA; the bridge logs the refusal)",
      );
    if (seen === 'refused') return fail('BRIDGE_DOWN', 'connection refused (ECONNREFUSED)');
    return fail('BRIDGE_UNREACHABLE', `the connection dropped (${code}: ${message})`);
  }
  return fail('BRIDGE_UNREACHABLE', `${message}${code ? ` (${code})` : ''}`);
}

/**
 * One diagnostic request on a fresh TLS connection: `answers` (the bridge answers this client),
 * `closed` (closed after the handshake with no answer), `refused` (nothing listens) or `unknown`.
 */
function probe(base: string, tls: Tls): Promise<'answers' | 'closed' | 'refused' | 'unknown'> {
  const url = new URL(base);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    let answered = false;
    let settled = false;
    const done = (v: 'answers' | 'closed' | 'refused' | 'unknown') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    const socket = connect({
      host,
      port: Number(url.port || 443),
      ...tls,
      ...(isIP(host) ? {} : { servername: host }),
    });
    const timer = setTimeout(() => done(answered ? 'answers' : 'unknown'), 2000);
    socket.on('secureConnect', () =>
      socket.write(`GET /health HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`),
    );
    socket.on('data', () => {
      answered = true;
      done('answers');
    });
    socket.on('error', (e: NodeJS.ErrnoException) =>
      done(e.code === 'ECONNREFUSED' ? 'refused' : e.code === 'ECONNRESET' ? 'closed' : 'unknown'),
    );
    socket.on('close', () => done(answered ? 'answers' : 'closed'));
  });
}

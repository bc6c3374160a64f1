/**
 * Connections to a directory for the bridge's LDAP capability: one session per URL, made by us
 * (TCP, TLS or StartTLS within connectTimeoutMs) and handed to ldapts, every operation bounded by
 * searchTimeoutMs; failures classified as DirectoryError (502/504 problems, never wrong passwords).
 */
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { Client, ResultCodeError } from 'ldapts';
import type { LdapConnection } from '../../../schema/bridge/index.js';

type DirectoryCode = 'DIRECTORY_UNAVAILABLE' | 'DIRECTORY_TIMEOUT' | 'DIRECTORY_TLS' | 'DIRECTORY_ERROR';

/** A failure of the directory (not of the user's credentials): a 502/504 problem. */
export class DirectoryError extends Error {
  constructor(
    readonly code: DirectoryCode,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = 'DirectoryError';
  }
  get status(): 502 | 504 {
    return this.code === 'DIRECTORY_TIMEOUT' ? 504 : 502;
  }
}

// ---- connections -------------------------------------------------------------------------------

/** Node's TLS verification and handshake failures. */
function isTlsError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^(ERR_SSL_|ERR_TLS_)|CERT|UNABLE_TO_|SELF_SIGNED|ALTNAME/.test(code);
}

/** Turns a socket, TLS or protocol failure into a DirectoryError (already-classified ones pass). */
export function classify(err: unknown, what: string): DirectoryError {
  if (err instanceof DirectoryError) return err;
  if (isTlsError(err))
    return new DirectoryError('DIRECTORY_TLS', `${what}: TLS verification failed (${(err as Error).message})`, {
      cause: err,
    });
  if (err instanceof ResultCodeError)
    return new DirectoryError('DIRECTORY_ERROR', `${what}: the directory answered ${err.name} (${err.code})`, {
      cause: err,
    });
  const code = (err as { code?: unknown })?.code;
  if (
    typeof code === 'string' &&
    /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|ETIMEDOUT|EADDRNOTAVAIL)$/.test(code)
  ) {
    return new DirectoryError('DIRECTORY_UNAVAILABLE', `${what}: ${code}`, { cause: err });
  }
  if (
    err instanceof Error &&
    /Connection closed|Socket error|connection was closed|socket hang up/i.test(err.message)
  ) {
    return new DirectoryError('DIRECTORY_UNAVAILABLE', `${what}: the directory closed the connection`, { cause: err });
  }
  return new DirectoryError(
    'DIRECTORY_ERROR',
    `${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    { cause: err },
  );
}

/** Rejects with DIRECTORY_TIMEOUT after `ms` (calling `onTimeout`, which closes the connection). */
function withTimeout<T>(work: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new DirectoryError('DIRECTORY_TIMEOUT', `${what}: no answer within ${ms} ms`));
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** One connection to one URL; every operation is bounded by the connection's timeouts. */
export interface Session {
  url: string;
  client: Client;
  /** Runs one LDAP operation within searchTimeoutMs; failures come out classified. */
  op<T>(what: string, fn: (c: Client) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Times and records each step (the test endpoint); authenticate runs the steps unrecorded. */
export type StepRunner = <T>(step: string, fn: () => Promise<T>, detail?: (r: T) => string) => Promise<T>;
const unrecorded: StepRunner = (_step, fn) => fn();

function tlsOptions(conn: LdapConnection, host: string): ConnectionOptions {
  return {
    host,
    // SNI is for names only (RFC 6066 §3); an IP is checked against the certificate's IP SANs.
    ...(isIP(host) ? {} : { servername: host }),
    ...(conn.caCert ? { ca: conn.caCert } : {}),
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  };
}

/**
 * Opens a session to `url`: TCP (and TLS for ldaps://) within connectTimeoutMs, then StartTLS
 * (also within connectTimeoutMs) when asked on ldap://. The socket is made here and handed to
 * ldapts, so "connect" is a step of its own and nothing can wait on it beyond the timeout.
 */
export async function openSession(url: string, conn: LdapConnection, step: StepRunner = unrecorded): Promise<Session> {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'ldaps:';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const port = parsed.port ? Number(parsed.port) : secure ? 636 : 389;
  const socket = await step(
    'connect',
    () =>
      new Promise<Socket | TLSSocket>((resolve, reject) => {
        const s = secure ? tlsConnect({ ...tlsOptions(conn, host), port }) : netConnect({ host, port });
        const timer = setTimeout(() => {
          s.destroy();
          reject(new DirectoryError('DIRECTORY_TIMEOUT', `${url}: no connection within ${conn.connectTimeoutMs} ms`));
        }, conn.connectTimeoutMs);
        s.once(secure ? 'secureConnect' : 'connect', () => {
          clearTimeout(timer);
          s.removeAllListeners('error');
          resolve(s);
        });
        s.once('error', (err) => {
          clearTimeout(timer);
          s.destroy();
          reject(classify(err, url));
        });
      }),
    () => url,
  );
  // Hand the socket over once; should ldapts try to reconnect later, it gets an error, not a hang.
  let handed = false;
  const handOver = () => {
    if (handed) throw new Error('Connection closed: the directory connection was lost');
    handed = true;
    return socket;
  };
  const client = new Client({
    url,
    createConnection: handOver as unknown as typeof netConnect,
    createSecureConnection: ((...args: Parameters<typeof tlsConnect>) =>
      secure ? handOver() : tlsConnect(...args)) as typeof tlsConnect,
  });
  socket.on('error', () => {}); // ldapts listens too; this only keeps a late error from being unhandled
  const destroy = () => socket.destroy();
  const session: Session = {
    url,
    client,
    op: (what, fn) =>
      withTimeout(
        fn(client).catch((err: unknown) => {
          throw err instanceof ResultCodeError ? err : classify(err, what);
        }),
        conn.searchTimeoutMs,
        what,
        destroy,
      ),
    async close() {
      // Unbind politely (RFC 4511 §4.3) but never wait on it: the socket goes either way.
      await withTimeout(client.unbind(), 500, 'unbind', destroy).catch(() => {});
      destroy();
    },
  };
  if (conn.startTls && !secure) {
    try {
      await step('starttls', () =>
        withTimeout(
          client.startTLS(tlsOptions(conn, host)).catch((err: unknown) => {
            if (err instanceof ResultCodeError)
              throw new DirectoryError('DIRECTORY_TLS', `${url}: the directory refused StartTLS (${err.name})`, {
                cause: err,
              });
            throw classify(err, `${url} StartTLS`);
          }),
          conn.connectTimeoutMs,
          `${url} StartTLS`,
          destroy,
        ),
      );
    } catch (err) {
      destroy();
      throw err;
    }
  }
  return session;
}

/** Tries the URLs in order; the first that connects wins, else the last failure is thrown. */
export async function openFirst(conn: LdapConnection, step: StepRunner = unrecorded): Promise<Session> {
  let last: unknown;
  for (const url of conn.urls) {
    try {
      return await openSession(url, conn, step);
    } catch (err) {
      last = err;
    }
  }
  throw classify(last, 'connect');
}

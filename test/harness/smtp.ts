/**
 * A real SMTP server for the tests (`smtp-server` from npm) on a loopback port: plain, STARTTLS or
 * implicit TLS with a certificate of a test CA (`ca` is what the bridge gets as MAIL_CA_FILE),
 * optional AUTH PLAIN/LOGIN, and failure injection (reject or drop a share of the messages). It
 * records every accepted message, raw and parsed (mailparser), so tests read what a mailbox would.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { issueCert, makeCa } from '../../scripts/dev-certs.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
  /** The authenticated user of the session, if any. */
  user: string | null;
  /** Whether the session was over TLS (STARTTLS or implicit). */
  secure: boolean;
  at: number;
}

export interface TestSmtpOptions {
  /** plain: no STARTTLS offered; starttls: offered with the test-CA certificate; implicit: TLS from the first byte. */
  tls?: 'plain' | 'starttls' | 'implicit';
  /** Require AUTH with these credentials (PLAIN and LOGIN offered). */
  auth?: { user: string; pass: string };
  /** Per message, before it is accepted: 'reject' answers 451, 'drop' closes the connection, undefined accepts. */
  fault?: () => 'reject' | 'drop' | undefined;
  /** Milliseconds to wait before answering the DATA (a slow server). */
  delayMs?: number;
  /** AUTH methods offered (default PLAIN and LOGIN). */
  authMethods?: string[];
}

export interface TestSmtp {
  host: string;
  port: number;
  /** PEM of the CA that signed the server's certificate (the bridge's MAIL_CA_FILE). */
  ca: string;
  /** The file holding `ca`. */
  caFile: string;
  received: ReceivedMail[];
  /** Waits until `n` messages were accepted (or fails after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** AUTH attempts that failed. */
  authFailures: number;
  stop(): Promise<void>;
}

/** Starts the test mail server. */
export async function startTestSmtp(o: TestSmtpOptions = {}): Promise<TestSmtp> {
  const dir = mkdtempSync(join(tmpdir(), 'test-smtp-'));
  const ca = makeCa(dir, 'smtp-ca');
  const cert = issueCert(dir, ca, 'smtp-server', { cn: 'localhost', usage: 'server' });
  const tls = o.tls ?? 'starttls';
  const received: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  const state = { authFailures: 0 };
  const options: SMTPServerOptions = {
    secure: tls === 'implicit',
    key: readFileSync(cert.key),
    cert: readFileSync(cert.cert),
    disabledCommands: [...(tls === 'plain' ? ['STARTTLS'] : []), ...(o.auth ? [] : ['AUTH'])],
    authMethods: o.authMethods ?? ['PLAIN', 'LOGIN'],
    // Tests authenticate over plain connections too (the bridge refuses that only when TLS is required).
    allowInsecureAuth: true,
    authOptional: !o.auth,
    logger: false,
    size: 10 * 1024 * 1024,
    onAuth(auth, _session, callback) {
      if (o.auth && auth.username === o.auth.user && auth.password === o.auth.pass)
        return callback(null, { user: auth.username });
      state.authFailures++;
      return callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      // Recipients whose local part starts with "unknown" do not exist here (550).
      if (address.address.startsWith('unknown')) {
        const err = new Error('No such user here') as Error & { responseCode: number };
        err.responseCode = 550;
        return callback(err);
      }
      return callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const finish = async () => {
          const fault = o.fault?.();
          if (fault === 'drop') {
            // No reply to the DATA: the client never learns whether the message was taken.
            server.connections.forEach((conn) => {
              const c = conn as unknown as { id?: string; _socket?: { destroy(): void } };
              if (c.id === session.id) c._socket?.destroy();
            });
            return;
          }
          if (fault === 'reject') {
            const err = new Error('Try again later') as Error & { responseCode: number };
            err.responseCode = 451;
            return callback(err);
          }
          if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
          const raw = Buffer.concat(chunks).toString('utf8');
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            parsed: await simpleParser(raw),
            user: typeof session.user === 'string' ? session.user : null,
            secure: session.secure,
            at: Date.now(),
          });
          callback();
          for (const w of waiters.splice(0)) w();
        };
        void finish();
      });
    },
  };
  const server = new SMTPServer(options);
  server.on('error', () => {
    // Dropped connections and TLS failures of tests are expected.
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  const port = (server.server.address() as AddressInfo).port;
  const caPem = readFileSync(ca.cert, 'utf8');
  return {
    host: '127.0.0.1',
    port,
    ca: caPem,
    caFile: ca.cert,
    received,
    get authFailures() {
      return state.authFailures;
    },
    async waitFor(n, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} mails, the server got ${received.length}`);
        await new Promise<void>((res) => {
          const t = setTimeout(res, 100);
          waiters.push(() => {
            clearTimeout(t);
            res();
          });
        });
      }
      return received;
    },
    async stop() {
      await new Promise<void>((res) => server.close(() => res()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

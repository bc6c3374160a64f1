/**
 * The mail capability of the bridge (architecture.md §1): POST /v1/mail/send sends one message with
 * nodemailer over SMTP, to the server the worker names in the call (its effective Mail settings).
 *
 * - EMAIL_USE_TLS true means TLS is required: implicit TLS on port 465, STARTTLS with `requireTLS`
 *   on any other port, so a server that does not offer STARTTLS (or a man in the middle that strips
 *   it) fails the send instead of carrying it in plain text. The certificate is verified, with the CA
 *   of MAIL_CA_FILE (the bridge's environment) or the system's roots.
 * - Credentials (a user) without TLS are refused before connecting: never AUTH over plain text.
 * - Connection, greeting and socket timeouts bound every send.
 * - Credentials are never logged: nodemailer's own logger is off, and failures are logged by code.
 * - Connections are pooled per server settings (a change of settings is a new pool; the old one is
 *   closed once MAX_POOLS others were used since), so a burst of mails does not pay a TLS handshake
 *   and an AUTH per message.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { createTransport } from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { invalidBody, sendProblem } from './problem.js';
import {
  MailSendRequestSchema,
  MailTestRequestSchema,
  type MailMessage,
  type MailSendResponse,
  type MailServer,
  type MailTestResponse,
  type MailTestStage,
} from '../../schema/bridge/index.js';

/** What the bridge's environment says about mail: the CA of the mail server (MAIL_CA_FILE). */
export interface MailOptions {
  /** PEM of the CA that signs the mail server's certificate (else the system's roots). */
  ca?: string;
}

/** Reads the mail options from the bridge's environment. */
export function mailOptionsFromEnv(env: NodeJS.ProcessEnv, readFile: (path: string) => string): MailOptions {
  return { ca: env.MAIL_CA_FILE ? readFile(env.MAIL_CA_FILE) : undefined };
}

type Transporter = ReturnType<typeof createTransport>;
type MailProblem = { status: 502 | 504; code: 'MAIL_UNAVAILABLE' | 'MAIL_TIMEOUT' | 'MAIL_TLS'; detail: string };
type SmtpError = Error & { code?: string; command?: string; responseCode?: number; response?: string };

const MAX_POOLS = 4;
const MAX_CONNECTIONS = 3;

/** The nodemailer options of a server: TLS required when `useTls`, never a silent plain-text send. */
export function transportOptions(s: MailServer, ca: string | undefined) {
  const implicit = s.useTls && s.port === 465;
  return {
    pool: true as const,
    maxConnections: MAX_CONNECTIONS,
    maxMessages: 500,
    host: s.host,
    port: s.port,
    secure: implicit,
    requireTLS: s.useTls && !implicit,
    connectionTimeout: s.connectTimeoutMs,
    greetingTimeout: s.greetingTimeoutMs,
    socketTimeout: s.socketTimeoutMs,
    ...(s.user !== '' ? { auth: { user: s.user, pass: s.password } } : {}),
    tls: { ...(ca ? { ca } : {}), rejectUnauthorized: true, minVersion: 'TLSv1.2' as const },
    logger: false,
    debug: false,
  };
}

/** The stage of an SMTP refusal, from nodemailer's failing command. */
function stageOf(err: SmtpError): 'connect' | 'auth' | 'envelope' | 'message' {
  const command = (err.command ?? '').toUpperCase();
  if (err.code === 'EAUTH' || command.startsWith('AUTH')) return 'auth';
  if (command.startsWith('MAIL') || command.startsWith('RCPT') || err.code === 'EENVELOPE') return 'envelope';
  if (command.startsWith('DATA') || command === '' || err.code === 'EMESSAGE') return 'message';
  return 'connect';
}

/** Classifies a failure that got no SMTP reply (refused, dropped, TLS, timeout). */
export function classifyMailError(err: SmtpError): MailProblem {
  const text = `${err.code ?? ''} ${err.message}`;
  if (err.code === 'ETLS' || /STARTTLS/i.test(err.command ?? '')) {
    return {
      status: 502,
      code: 'MAIL_TLS',
      detail: 'the mail server does not offer TLS (STARTTLS), which EMAIL_USE_TLS requires',
    };
  }
  if (/ETIMEDOUT|timeout|timed out/i.test(text)) {
    return { status: 504, code: 'MAIL_TIMEOUT', detail: 'the mail server did not answer in time' };
  }
  if (
    err.code === 'ETLS' ||
    /certificate|self.signed|CERT_|UNABLE_TO_(GET|VERIFY)|ERR_SSL|ERR_TLS|altname|wrong version/i.test(text)
  ) {
    return {
      status: 502,
      code: 'MAIL_TLS',
      detail: 'TLS with the mail server failed (not offered, or its certificate not verified: MAIL_CA_FILE)',
    };
  }
  return {
    status: 502,
    code: 'MAIL_UNAVAILABLE',
    detail: 'the mail server could not be reached or dropped the connection',
  };
}

/**
 * The nodemailer message of a request: the one composition of every mail, sent over SMTP here and
 * written as an .eml by the Node host's development outbox (worker/node/mail-outbox.ts).
 */
export function messageOptions(m: MailMessage) {
  return {
    from: m.from.name ? { name: m.from.name, address: m.from.address } : m.from.address,
    to: m.to.name ? { name: m.to.name, address: m.to.address } : m.to.address,
    subject: m.subject,
    text: m.text,
    html: m.html,
    messageId: m.messageId,
    // RFC 3834: an automatic message; no auto-replies to it.
    headers: { 'Content-Language': m.language, 'Auto-Submitted': 'auto-generated' },
    // Addresses come from the checked fields only, never parsed out of names.
    envelope: { from: m.from.address, to: [m.to.address] },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/** The message of a request as the bytes DATA carries (RFC 5322, MIME). */
export function composeMessage(m: MailMessage): Promise<Buffer> {
  return new MailComposer(messageOptions(m)).compile().build();
}

/**
 * "Send a test mail": one message over a connection of its own (never a pooled one, so the result is
 * this server's answer now), stage by stage, with the stage reached and the server's reply. Never
 * throws for the server's failures; the password is never part of the result or a log line.
 */
export async function testSend(s: MailServer, m: MailMessage, ca: string | undefined): Promise<MailTestResponse> {
  const o = transportOptions(s, ca);
  const conn = new SMTPConnection({
    host: o.host,
    port: o.port,
    secure: o.secure,
    requireTLS: o.requireTLS,
    connectionTimeout: o.connectionTimeout,
    greetingTimeout: o.greetingTimeout,
    socketTimeout: o.socketTimeout,
    tls: o.tls,
    logger: false,
    debug: false,
  });
  let stage: MailTestStage = 'connect';
  // A dropped connection or a timeout is an 'error' event (no step's callback runs then).
  let broke: (err: Error) => void = () => {};
  const broken = new Promise<never>((_, reject) => (broke = reject));
  broken.catch(() => {});
  conn.on('error', (err: Error) => broke(err));
  const step = <T>(run: (done: (err: Error | null, value?: T) => void) => void) =>
    Promise.race([
      new Promise<T>((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value as T)))),
      broken,
    ]);
  try {
    await step<void>((done) => conn.connect(() => done(null)));
    if (s.user !== '') {
      stage = 'auth';
      await step<unknown>((done) => conn.login({ user: s.user, pass: s.password }, done));
    }
    stage = 'mail_from';
    const raw = await composeMessage(m);
    const info = await step<{ response: string }>((done) =>
      conn.send({ from: m.from.address, to: [m.to.address] }, raw, (err, i) => done(err, i)),
    );
    conn.quit();
    return {
      ok: true,
      stage: 'data',
      responseCode: replyCode(info.response),
      response: clip(info.response),
      code: null,
    };
  } catch (e) {
    conn.close();
    const err = e as SmtpError;
    const command = (err.command ?? '').toUpperCase();
    if (stage === 'mail_from' && command.startsWith('RCPT')) stage = 'rcpt';
    else if (stage === 'mail_from' && !command.startsWith('MAIL')) stage = 'data';
    const tls = err.code === 'ETLS' || command === 'STARTTLS' || classifyMailError(err).code === 'MAIL_TLS';
    if (stage === 'connect' && tls) stage = 'tls';
    if (!tls && typeof err.responseCode === 'number' && err.responseCode >= 400) {
      const code = `SMTP_${Math.floor(err.responseCode / 100)}XX`;
      return { ok: false, stage, responseCode: err.responseCode, response: clip(err.response ?? err.message), code };
    }
    const c = classifyMailError(err);
    return { ok: false, stage, responseCode: null, response: c.detail, code: c.code };
  }
}

const clip = (s: unknown) => String(s ?? '').slice(0, 1000);
const replyCode = (response: string) => {
  const n = Number(/^(\d{3})/.exec(response)?.[1]);
  return n >= 100 && n <= 599 ? n : null;
};

/** The mail capability as a Fastify plugin; closes its pools on close. */
export async function mailPlugin(app: FastifyInstance, o: { options?: MailOptions } = {}): Promise<void> {
  const ca = o.options?.ca;
  const pools = new Map<string, Transporter>();
  const poolFor = (s: MailServer): Transporter => {
    // The key holds the password's hash only, and lives in memory.
    const key = createHash('sha256').update(JSON.stringify(s)).digest('hex');
    let pool = pools.get(key);
    if (pool) {
      pools.delete(key);
      pools.set(key, pool);
      return pool;
    }
    if (pools.size >= MAX_POOLS) {
      const [oldestKey, oldest] = pools.entries().next().value as [string, Transporter];
      pools.delete(oldestKey);
      oldest.close();
    }
    pool = createTransport(transportOptions(s, ca));
    pools.set(key, pool);
    return pool;
  };
  app.addHook('onClose', async () => {
    for (const pool of pools.values()) pool.close();
    pools.clear();
  });

  app.post('/v1/mail/test', { bodyLimit: 4 * 1024 * 1024 }, async (req, reply) => {
    const parsed = MailTestRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const { server, ...message } = parsed.data;
    if (!server.useTls && server.user !== '') {
      const out: MailTestResponse = {
        ok: false,
        stage: 'connect',
        responseCode: null,
        response: 'credentials are never sent without TLS: EMAIL_USE_TLS is off',
        code: 'MAIL_TLS',
      };
      return reply.code(200).send(out);
    }
    const out = await testSend(server, message, ca);
    req.log.info({ ok: out.ok, stage: out.stage, responseCode: out.responseCode, code: out.code }, 'mail test');
    return reply.code(200).send(out);
  });

  app.post('/v1/mail/send', { bodyLimit: 4 * 1024 * 1024 }, async (req, reply) => {
    const parsed = MailSendRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const m = parsed.data;
    // Credentials never go in clear, whatever the caller asks: no plain connection with AUTH at all.
    if (!m.server.useTls && m.server.user !== '') {
      req.log.warn({ code: 'MAIL_TLS' }, 'mail refused: credentials without TLS');
      return sendProblem(reply, 502, 'MAIL_TLS', 'credentials are never sent without TLS: EMAIL_USE_TLS is off');
    }
    try {
      const info = await poolFor(m.server).sendMail(messageOptions(m));
      const out: MailSendResponse = { outcome: 'sent', response: String(info.response ?? '').slice(0, 1000) };
      return reply.code(200).send(out);
    } catch (e) {
      const err = e as SmtpError;
      // A refused or failed STARTTLS is a TLS failure, whatever the server replied: never plain text.
      const tlsFailed = err.code === 'ETLS' || /STARTTLS/i.test(err.command ?? '');
      if (!tlsFailed && typeof err.responseCode === 'number' && err.responseCode >= 400) {
        const stage = stageOf(err);
        req.log.warn({ code: err.code, stage, responseCode: err.responseCode }, 'mail refused by the server');
        const out: MailSendResponse = {
          outcome: 'rejected',
          stage,
          responseCode: err.responseCode,
          response: String(err.response ?? err.message).slice(0, 1000),
        };
        return reply.code(200).send(out);
      }
      const c = classifyMailError(err);
      req.log.warn({ code: c.code, smtpCode: err.code, command: err.command }, 'mail send failed');
      return sendProblem(reply, c.status, c.code, c.detail);
    }
  });
}

// The bridge's mail plugin against real SMTP servers (smtp-server from npm, test/harness/smtp.ts):
// plain, STARTTLS with a test-CA certificate, AUTH PLAIN and LOGIN, refusals, drops, timeouts, and
// header-injection attempts.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSmtp, type TestSmtp } from '../../test/harness/smtp.js';
import { buildBridge } from './app.js';
import { transportOptions } from './mail.js';

const servers: TestSmtp[] = [];
const bridges: FastifyInstance[] = [];

async function smtp(o: Parameters<typeof startTestSmtp>[0]) {
  const s = await startTestSmtp(o);
  servers.push(s);
  return s;
}
async function bridge(ca?: string) {
  const app = buildBridge({ mail: { ca } });
  await app.ready();
  bridges.push(app);
  return app;
}
afterAll(async () => {
  await Promise.all(bridges.map((b) => b.close()));
  await Promise.all(servers.map((s) => s.stop()));
});

const server = (
  s: TestSmtp,
  o: Partial<{ useTls: boolean; user: string; password: string; socketTimeoutMs: number }> = {},
) => ({
  host: s.host,
  port: s.port,
  useTls: o.useTls ?? false,
  user: o.user ?? '',
  password: o.password ?? '',
  connectTimeoutMs: 2000,
  greetingTimeoutMs: 2000,
  socketTimeoutMs: o.socketTimeoutMs ?? 5000,
});
let n = 0;
const message = (s: TestSmtp, o: Record<string, unknown> = {}) => ({
  server: server(s),
  from: { address: 'noreply@example.com', name: 'Сервис авторизации' },
  to: { address: 'alice@example.com', name: 'Alice Liddell' },
  subject: 'Account locked',
  text: 'Your account was locked.',
  html: '<p>Your account was locked.</p>',
  messageId: `<n${++n}@auth-service>`,
  language: 'en',
  ...o,
});

async function send(app: FastifyInstance, payload: unknown) {
  const res = await app.inject({ method: 'POST', url: '/v1/mail/send', payload: payload as object });
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

describe('POST /v1/mail/send', () => {
  let plain: TestSmtp;
  let starttls: TestSmtp;
  let app: FastifyInstance;
  let withCa: FastifyInstance;
  beforeAll(async () => {
    plain = await smtp({ tls: 'plain' });
    starttls = await smtp({ tls: 'starttls', auth: { user: 'mailer', pass: 'M@il-pass' } });
    app = await bridge();
    withCa = await bridge(starttls.ca);
  });

  it('sends over plain SMTP with the headers and both bodies', async () => {
    const res = await send(app, message(plain));
    expect(res).toMatchObject({ status: 200, body: { outcome: 'sent' } });
    const [mail] = await plain.waitFor(1);
    expect(mail!.secure).toBe(false);
    expect(mail!.to).toEqual(['alice@example.com']);
    expect(mail!.from).toBe('noreply@example.com');
    const p = mail!.parsed;
    expect(p.subject).toBe('Account locked');
    expect(p.from!.value).toEqual([{ address: 'noreply@example.com', name: 'Сервис авторизации' }]);
    expect(p.to).toMatchObject({ value: [{ address: 'alice@example.com', name: 'Alice Liddell' }] });
    expect(p.messageId).toBe(`<n${n}@auth-service>`);
    expect(p.headers.get('content-language')).toBe('en');
    expect(p.headers.get('auto-submitted')).toBe('auto-generated');
    expect(p.text!.trim()).toBe('Your account was locked.');
    expect(p.html).toContain('<p>Your account was locked.</p>');
    // Non-ASCII names are encoded words, never raw bytes in the header.
    expect(mail!.raw).toMatch(/^From: =\?UTF-8\?/m);
  });

  it('with EMAIL_USE_TLS, a server that does not offer STARTTLS is refused, never used in plain text', async () => {
    const before = plain.received.length;
    const res = await send(app, { ...message(plain), server: server(plain, { useTls: true }) });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('MAIL_TLS');
    expect(plain.received.length).toBe(before);
  });

  it('credentials without EMAIL_USE_TLS are refused before connecting: never AUTH over plain text', async () => {
    const before = plain.received.length;
    const res = await send(app, {
      ...message(plain),
      server: server(plain, { useTls: false, user: 'mailer', password: 'M@il-pass' }),
    });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('MAIL_TLS');
    expect(JSON.stringify(res.body)).not.toContain('M@il-pass');
    expect(plain.received.length).toBe(before);
  });

  it('STARTTLS with the test CA (MAIL_CA_FILE) and AUTH PLAIN; without the CA the certificate is refused', async () => {
    const creds = { useTls: true, user: 'mailer', password: 'M@il-pass' };
    const res = await send(withCa, { ...message(starttls), server: server(starttls, creds) });
    expect(res).toMatchObject({ status: 200, body: { outcome: 'sent' } });
    const [mail] = await starttls.waitFor(1);
    expect(mail!.secure).toBe(true);
    expect(mail!.user).toBe('mailer');
    const untrusted = await send(app, { ...message(starttls), server: server(starttls, creds) });
    expect(untrusted.status).toBe(502);
    expect(untrusted.body.code).toBe('MAIL_TLS');
    expect(starttls.received).toHaveLength(1);
  });

  it(
    'a wrong password is the server refusing at the auth stage (an outcome), ' + 'and the password is never echoed',
    async () => {
      const res = await send(withCa, {
        ...message(starttls),
        server: server(starttls, { useTls: true, user: 'mailer', password: 'Wr0ng-secret' }),
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ outcome: 'rejected', stage: 'auth', responseCode: 535 });
      expect(JSON.stringify(res.body)).not.toContain('Wr0ng-secret');
    },
  );

  it('AUTH LOGIN when the server offers only LOGIN', async () => {
    const login = await smtp({ tls: 'starttls', auth: { user: 'u1', pass: 'P@ss-1' }, authMethods: ['LOGIN'] });
    const b = await bridge(login.ca);
    const res = await send(b, {
      ...message(login),
      server: server(login, { useTls: true, user: 'u1', password: 'P@ss-1' }),
    });
    expect(res.body.outcome).toBe('sent');
    expect((await login.waitFor(1))[0]!.user).toBe('u1');
  });

  it('an unknown recipient is a permanent refusal at the envelope stage', async () => {
    const res = await send(app, message(plain, { to: { address: 'unknown-user@example.com' } }));
    expect(res.body).toMatchObject({ outcome: 'rejected', stage: 'envelope', responseCode: 550 });
  });

  it('a temporary refusal of the message (451) and a dropped connection are told apart', async () => {
    let fault: 'reject' | 'drop' | undefined = 'reject';
    const flaky = await smtp({ tls: 'plain', fault: () => fault });
    const b = await bridge();
    expect((await send(b, message(flaky))).body).toMatchObject({
      outcome: 'rejected',
      stage: 'message',
      responseCode: 451,
    });
    fault = 'drop';
    const dropped = await send(b, message(flaky));
    expect(dropped.status).toBe(502);
    expect(dropped.body.code).toBe('MAIL_UNAVAILABLE');
    fault = undefined;
    expect((await send(b, message(flaky))).body.outcome).toBe('sent');
    expect(flaky.received).toHaveLength(1);
  });

  it('a server that does not answer within the socket timeout is a 504', async () => {
    const slow = await smtp({ tls: 'plain', delayMs: 3000 });
    const b = await bridge();
    const res = await send(b, { ...message(slow), server: { ...server(slow), socketTimeoutMs: 500 } });
    expect(res.status).toBe(504);
    expect(res.body.code).toBe('MAIL_TIMEOUT');
  });

  it('a closed port is a 502', async () => {
    const res = await send(app, { ...message(plain), server: { ...server(plain), port: 1 } });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('MAIL_UNAVAILABLE');
  });

  it('refuses CR or LF in the subject, a display name or an address (header injection), sending nothing', async () => {
    const before = plain.received.length;
    const attempts = [
      { subject: 'Hello\r\nBcc: victim@example.com' },
      { subject: 'Hello\nBcc: victim@example.com' },
      { to: { address: 'alice@example.com', name: 'Alice\r\nBcc: victim@example.com' } },
      { from: { address: 'noreply@example.com', name: 'X\nReply-To: evil@example.com' } },
      { to: { address: 'alice@example.com\r\nBcc: victim@example.com' } },
      { to: { address: 'alice@example.com>, <victim@example.com' } },
    ];
    for (const a of attempts) {
      const res = await send(app, message(plain, a));
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/header injection|an address such as/);
    }
    expect(plain.received.length).toBe(before);
  });

  it('encodes names with quotes, commas and angle brackets as data, not as addresses', async () => {
    const before = plain.received.length;
    const res = await send(
      app,
      message(plain, { to: { address: 'alice@example.com', name: 'Eve <victim@example.com>, "x"' } }),
    );
    expect(res.body.outcome).toBe('sent');
    const mail = (await plain.waitFor(before + 1))[before]!;
    expect(mail.to).toEqual(['alice@example.com']);
    expect(mail.parsed.to).toMatchObject({ value: [{ address: 'alice@example.com' }] });
  });
});

describe('transport options', () => {
  const base = {
    host: 'mail.corp',
    port: 587,
    useTls: true,
    user: '',
    password: '',
    connectTimeoutMs: 1000,
    greetingTimeoutMs: 1000,
    socketTimeoutMs: 1000,
  };
  it('TLS required: STARTTLS with requireTLS on 587, implicit TLS on 465; plain only when EMAIL_USE_TLS is off', () => {
    expect(transportOptions(base, undefined)).toMatchObject({
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: true },
    });
    expect(transportOptions({ ...base, port: 465 }, undefined)).toMatchObject({ secure: true, requireTLS: false });
    expect(transportOptions({ ...base, useTls: false }, undefined)).toMatchObject({ secure: false, requireTLS: false });
    expect(transportOptions(base, undefined)).not.toHaveProperty('auth');
    expect(transportOptions({ ...base, user: 'u', password: 'p' }, 'CA')).toMatchObject({
      auth: { user: 'u', pass: 'p' },
      tls: { ca: 'CA' },
    });
  });
});

/**
 * `npm run bench:mail`: mail through the bridge, measured (not a test).
 *
 * 1. Throughput: MAIL_BENCH_COUNT (500) notifications delivered by the real delivery code
 *    (deliverDue, on an embedded libSQL database) through the real bridge over mutual TLS to the test
 *    SMTP server (smtp-server, STARTTLS with a test-CA certificate, AUTH PLAIN): mails per second
 *    from the first claim to the last acceptance by the server.
 * 2. Latency: MAIL_BENCH_LOCKOUTS (20) lockouts on the Node host (three wrong Basic logins each):
 *    the time from the start of the login request that locks the account to the moment the SMTP
 *    server accepted its mail (the after-response kick, not the 30 s job), p50 and max.
 */
import { parseEnvironment } from '../../worker/src/config/index.js';
import { createBridgeClient } from '../../worker/src/bridge/client.js';
import { auditInsert } from '../../worker/src/audit/events.js';
import { deliverDue } from '../../worker/src/notifications/deliver.js';
import { handleEvents } from '../../worker/src/notifications/handler.js';
import { nodeBridgeTransport } from '../../worker/node/bridge-transport.js';
import { users } from '../../schema/index.js';
import { createTestApp } from '../../test/harness/app.js';
import { startTestBridge } from '../../test/harness/bridge.js';
import { startNodeTestHost } from '../../test/harness/hosts.js';
import { startTestSmtp } from '../../test/harness/smtp.js';

const COUNT = Number(process.env.MAIL_BENCH_COUNT ?? 500);
const LOCKOUTS = Number(process.env.MAIL_BENCH_LOCKOUTS ?? 20);

const smtp = await startTestSmtp({ tls: 'starttls', auth: { user: 'mailer', pass: 'M@il-pass' } });
const bridge = await startTestBridge({ mail: { ca: smtp.ca } });
const mailEnv = {
  EMAIL_HOST: '127.0.0.1',
  EMAIL_PORT: String(smtp.port),
  EMAIL_USE_TLS: 'True',
  EMAIL_HOST_USER: 'mailer',
  EMAIL_HOST_PASSWORD: 'M@il-pass',
  EMAIL_FROM: 'noreply@auth.test',
};

async function throughput(): Promise<{ mails: number; seconds: number; perSecond: number }> {
  const t = await createTestApp();
  try {
    const config = parseEnvironment({
      ...mailEnv,
      ...bridge.env,
      SESSION_SECRET_KEY: 'bench-session-secret-key-0123456789abcdef',
      OUTBOX_BATCH_SIZE: '50',
    });
    const client = createBridgeClient(nodeBridgeTransport(config)!);
    const now = Date.now();
    const rows = Array.from({ length: COUNT }, (_, i) => ({
      id: crypto.randomUUID(),
      login: `b${i}`,
      loginKey: `b${i}`,
      email: `b${i}@example.com`,
      createdAt: now,
      updatedAt: now,
    }));
    for (let i = 0; i < rows.length; i += 200) await t.db.insert(users).values(rows.slice(i, i + 200));
    for (let i = 0; i < rows.length; i += 100) {
      const batch = rows.slice(i, i + 100).map((u) =>
        auditInsert(t.db, now, {
          stream: 'user_activity',
          type: 'account.locked',
          subject: u,
          data: { until: new Date(now).toISOString() },
        }),
      );
      await t.db.batch(batch as [(typeof batch)[number], ...(typeof batch)[number][]]);
    }
    await handleEvents({ db: t.db, config, now: () => now });
    const before = smtp.received.length;
    const started = performance.now();
    const result = await deliverDue({ db: t.db, config, now: () => now, bridge: client });
    await smtp.waitFor(before + COUNT, 120_000);
    const seconds = (performance.now() - started) / 1000;
    if (result.sent !== COUNT) throw new Error(`sent ${result.sent} of ${COUNT}`);
    return { mails: COUNT, seconds: Number(seconds.toFixed(2)), perSecond: Number((COUNT / seconds).toFixed(1)) };
  } finally {
    t.close();
  }
}

async function lockoutLatency(): Promise<{ lockouts: number; p50Ms: number; maxMs: number }> {
  const host = await startNodeTestHost({ ...bridge.env, ...mailEnv, AUTH_ACCESS_LOG_LEVEL: 'WARNING' });
  const admin = `Basic ${Buffer.from('root-admin:Adm1n$ecret').toString('base64')}`;
  const latencies: number[] = [];
  try {
    for (let i = 0; i < LOCKOUTS; i++) {
      const login = `lat${i}-${Date.now().toString(36)}`;
      const email = `${login}@example.com`;
      const created = await fetch(`${host.url}/v4/users`, {
        method: 'POST',
        headers: { Authorization: admin, 'Content-Type': 'application/json' },
        body: JSON.stringify({ login, password: 'Str0ng$pass', email }),
      });
      if (created.status !== 201) throw new Error(`create: ${created.status}`);
      // The new-account mail first, so the lockout's is measured alone.
      await waitForMail(email, 1);
      const wrong = `Basic ${Buffer.from(`${login}:Wr0ng$pass`).toString('base64')}`;
      for (let k = 0; k < 2; k++)
        await (
          await fetch(`${host.url}/v3/login_without_session`, { method: 'POST', headers: { Authorization: wrong } })
        ).arrayBuffer();
      const t0 = Date.now();
      await (
        await fetch(`${host.url}/v3/login_without_session`, { method: 'POST', headers: { Authorization: wrong } })
      ).arrayBuffer();
      const [, mail] = await waitForMail(email, 2);
      latencies.push(mail!.at - t0);
      // Past the per-instance kick interval, so each lockout starts a fresh kick.
      await new Promise((r) => setTimeout(r, 1100));
    }
  } finally {
    await host.stop();
  }
  latencies.sort((a, b) => a - b);
  return {
    lockouts: latencies.length,
    p50Ms: latencies[Math.floor(latencies.length / 2)]!,
    maxMs: latencies[latencies.length - 1]!,
  };
}

async function waitForMail(address: string, n: number) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const got = smtp.received.filter((m) => m.to.includes(address));
    if (got.length >= n) return got;
    if (Date.now() > deadline) throw new Error(`no mail ${n} to ${address}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

try {
  const a = await throughput();
  console.log(
    `throughput: ${a.mails} mails in ${a.seconds} s = ${a.perSecond} mails/s ` +
      '(deliverDue → bridge over mTLS → SMTP, STARTTLS + AUTH)',
  );
  const b = await lockoutLatency();
  console.log(
    `lockout → mail accepted by the SMTP server: p50 ${b.p50Ms} ms, max ${b.maxMs} ms ` +
      `over ${b.lockouts} lockouts (Node host)`,
  );
} finally {
  await bridge.stop();
  await smtp.stop();
}

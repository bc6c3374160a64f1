/**
 * Notifications end to end in one process: the real event handler and delivery, the real bridge
 * plugin (through Fastify's inject) with nodemailer, against a real SMTP server (smtp-server).
 * No mail twice and none lost, with a server that refuses or drops a quarter of the messages; jobs
 * fired twice at once; leases left by a crashed deliverer; retention; expiry notices.
 */
import { eq, inArray, isNull } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildBridge } from '../../ldap-bridge/src/app.js';
import { auditOutbox, jobLeases, notifications, users } from '../../schema/index.js';
import { auditInsert } from '../../worker/src/audit/events.js';
import { createBridgeClient, type BridgeClient } from '../../worker/src/bridge/client.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { runScheduledJobs } from '../../worker/src/schedule/index.js';
import { acquireLease } from '../../worker/src/jobs/lease.js';
import { deliverDue, MAX_ATTEMPTS } from '../../worker/src/notifications/deliver.js';
import { handleEvents } from '../../worker/src/notifications/handler.js';
import { renderMail } from '../../worker/src/notifications/templates.js';
import { describeUserAgent } from '../../worker/src/notifications/user-agent.js';
import { issueToken, revokeToken } from '../../worker/src/accounts/tokens.js';
import {
  deliverNotifications,
  handleNotificationEvents,
  passwordExpiryNotices,
  tokenExpiryNotices,
  purgeNotifications,
} from '../../worker/src/notifications/jobs.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { startIngestServer, type IngestServer } from '../harness/ingest-server.js';
import { startTestSmtp, type TestSmtp } from '../harness/smtp.js';
import { scopeWithoutRequest } from '../../worker/src/http/scope.js';

let t: TestApp;
let smtp: TestSmtp;
let bridgeApp: FastifyInstance;
let bridge: BridgeClient;
const fault: { next?: () => 'reject' | 'drop' | undefined } = {};
const DAY = 86_400_000;
const T0 = Date.parse('2026-11-26T10:00:00.000Z');

beforeAll(async () => {
  t = await createTestApp();
  smtp = await startTestSmtp({
    tls: 'starttls',
    auth: { user: 'mailer', pass: 'M@il-pass' },
    fault: () => fault.next?.(),
  });
  bridgeApp = buildBridge({ mail: { ca: smtp.ca } });
  await bridgeApp.ready();
  bridge = createBridgeClient(async (path, { timeoutMs: _t, ...init }) => {
    const res = await bridgeApp.inject({
      method: 'POST',
      url: path,
      payload: String(init.body),
      headers: { 'content-type': 'application/json' },
    });
    return new Response(res.body, {
      status: res.statusCode,
      headers: { 'content-type': String(res.headers['content-type']) },
    });
  });
});
afterAll(async () => {
  await bridgeApp.close();
  await smtp.stop();
  t.close();
});
beforeEach(async () => {
  fault.next = undefined;
  smtp.received.length = 0;
  await t.db.delete(notifications);
  await t.db.delete(auditOutbox);
  await t.db.delete(jobLeases);
});

const mailEnv = {
  EMAIL_HOST: '127.0.0.1',
  EMAIL_USE_TLS: 'True',
  EMAIL_HOST_USER: 'mailer',
  EMAIL_HOST_PASSWORD: 'M@il-pass',
  EMAIL_FROM: 'Auth <noreply@auth.test>',
  AUTH_MAIL_LANGUAGE: 'en',
};
const config = (env: Record<string, string> = {}) =>
  parseEnvironment({
    SESSION_SECRET_KEY: 'test-session-secret-key-0123456789abcdef',
    ...mailEnv,
    EMAIL_PORT: String(smtp.port),
    OUTBOX_BATCH_SIZE: '50',
    ...env,
  });

let seq = 0;
async function makeUsers(n: number, o: { email?: boolean; passwordChangedAt?: number } = {}) {
  const rows = Array.from({ length: n }, () => {
    const login = `n${++seq}-${Math.random().toString(36).slice(2, 8)}`;
    return {
      id: crypto.randomUUID(),
      login,
      loginKey: login,
      displayName: `User ${login}`,
      email: o.email === false ? null : `${login}@example.com`,
      createdAt: T0,
      updatedAt: T0,
      passwordChangedAt: o.passwordChangedAt ?? null,
    };
  });
  for (let i = 0; i < rows.length; i += 200) await t.db.insert(users).values(rows.slice(i, i + 200));
  return rows;
}
async function lockEvents(us: Array<{ id: string; login: string }>, at = T0) {
  for (let i = 0; i < us.length; i += 100) {
    const batch = us.slice(i, i + 100).map((u) =>
      auditInsert(t.db, at, {
        stream: 'user_activity',
        type: 'account.locked',
        subject: u,
        data: { until: new Date(at + 15 * 60_000).toISOString() },
      }),
    );
    await t.db.batch(batch as [(typeof batch)[number], ...(typeof batch)[number][]]);
  }
}
const statusOf = async (ids?: string[]) =>
  (
    await t.db
      .select({ status: notifications.status, n: notifications.id })
      .from(notifications)
      .where(ids ? inArray(notifications.userId, ids) : undefined)
  ).map((r) => r.status);

describe('delivery through the bridge', () => {
  it('500 lockouts, a server that refuses or drops a quarter of the messages, ' +
    'two deliverers at once: every mail once', async () => {
    const us = await makeUsers(500);
    await lockEvents(us);
    const c = config();
    // Two handlers at once make each notification once.
    const [h1, h2] = await Promise.all([
      handleEvents({ db: t.db, config: c, now: () => T0 }),
      handleEvents({ db: t.db, config: c, now: () => T0 }),
    ]);
    expect(h1.events + h2.events).toBeGreaterThanOrEqual(500);
    expect(await statusOf()).toHaveLength(500);
    let n = 0;
    fault.next = () => (++n % 4 === 0 ? (n % 8 === 0 ? 'drop' : 'reject') : undefined);
    let now = T0;
    for (let round = 0; round < MAX_ATTEMPTS; round++) {
      // Two deliverers race for the same rows (a job on two hosts, a kick): leases keep them apart.
      const at = now;
      await Promise.all([
        deliverDue({ db: t.db, config: c, now: () => at, bridge, random: () => 0 }),
        deliverDue({ db: t.db, config: c, now: () => at, bridge, random: () => 0 }),
      ]);
      if ((await statusOf()).every((s) => s === 'sent')) break;
      now += 3_600_000;
    }
    expect(await statusOf()).toEqual(Array(500).fill('sent'));
    const ids = smtp.received.map((m) => m.parsed.messageId);
    expect(new Set(ids).size).toBe(500);
    expect(ids).toHaveLength(500);
    expect(new Set(smtp.received.map((m) => m.to[0])).size).toBe(500);
    expect(n).toBeGreaterThan(500);
  }, 120_000);

  it('a lockout mail: headers, both bodies, the account data escaped in HTML', async () => {
    const [u] = await makeUsers(1);
    await t.db.update(users).set({ displayName: '<b>Eve</b>\r\nBcc: x@evil.test' }).where(eq(users.id, u!.id));
    await lockEvents([u!]);
    const c = config();
    await handleEvents({ db: t.db, config: c, now: () => T0 });
    expect(await deliverDue({ db: t.db, config: c, now: () => T0, bridge })).toMatchObject({ sent: 1 });
    const [mail] = await smtp.waitFor(1);
    const p = mail!.parsed;
    expect(mail!.secure).toBe(true);
    expect(p.subject).toBe('Your account is temporarily locked');
    expect(p.from!.value).toEqual([{ address: 'noreply@auth.test', name: 'Auth' }]);
    expect(p.to).toMatchObject({ value: [{ address: u!.email, name: '<b>Eve</b> Bcc: x@evil.test' }] });
    expect(p.headers.has('bcc')).toBe(false);
    expect(mail!.to).toEqual([u!.email]);
    expect(p.text).toContain(`Logins to the account ${u!.login} are locked until 2026-11-26 10:15 UTC`);
    expect(p.html).toContain('&lt;b&gt;Eve&lt;/b&gt;');
    expect(p.html).not.toContain('<b>Eve</b>');
    expect(p.headers.get('content-language')).toBe('en');
  });

  it("an inactivity block and an administrator's reset are mailed; an administrator's block is not", async () => {
    const [idle, blocked, reset] = await makeUsers(3);
    const admin = { id: crypto.randomUUID(), login: 'boss' };
    const events = [
      auditInsert(t.db, T0, {
        stream: 'user_activity',
        type: 'account.blocked',
        subject: idle!,
        data: { reason: 'inactivity' },
      }),
      auditInsert(t.db, T0, {
        stream: 'crud_admin',
        type: 'account.blocked',
        actor: admin,
        subject: blocked!,
        data: { reason: 'admin' },
      }),
      auditInsert(t.db, T0, { stream: 'crud_admin', type: 'password.reset', actor: admin, subject: reset! }),
    ];
    await t.db.batch(events as [(typeof events)[number], ...(typeof events)[number][]]);
    const c = config({ USER_INACTIVE_TIMEOUT_DAY: '45' });
    await handleEvents({ db: t.db, config: c, now: () => T0 });
    expect(await deliverDue({ db: t.db, config: c, now: () => T0, bridge })).toMatchObject({ sent: 2 });
    const byTo = new Map((await smtp.waitFor(2)).map((m) => [m.to[0], m.parsed]));
    expect(byTo.get(idle!.email!)!.subject).toBe('Your account was blocked for inactivity');
    expect(byTo.get(idle!.email!)!.text).toContain('nobody logged in to it for 45 days');
    expect(byTo.get(reset!.email!)!.subject).toBe('Your password was changed');
    expect(byTo.get(reset!.email!)!.text).toContain('by an administrator');
    expect(byTo.has(blocked!.email!)).toBe(false);
    // Every event was seen, the unmailed one included: nothing waits for the handler.
    expect(await t.db.select().from(auditOutbox).where(isNull(auditOutbox.handledAt))).toHaveLength(0);
  });

  it('accounts without an address are given up with the reason, and nothing is sent', async () => {
    const [u] = await makeUsers(1, { email: false });
    await lockEvents([u!]);
    await handleEvents({ db: t.db, config: config(), now: () => T0 });
    await deliverDue({ db: t.db, config: config(), now: () => T0, bridge });
    const [row] = await t.db.select().from(notifications);
    expect(row).toMatchObject({ status: 'given_up', lastError: 'the account has no e-mail address', attempts: 0 });
    expect(smtp.received).toHaveLength(0);
  });

  it('while EMAIL_HOST is the placeholder nothing is attempted: "mail is not configured"', async () => {
    const [u] = await makeUsers(1);
    await lockEvents([u!]);
    const { EMAIL_HOST: _h, ...rest } = mailEnv;
    const c = parseEnvironment({
      ...rest,
      EMAIL_PORT: String(smtp.port),
      SESSION_SECRET_KEY: 'test-session-secret-key-0123456789abcdef',
    });
    let calls = 0;
    const counting: BridgeClient = { status: bridge.status, call: (...a) => (calls++, bridge.call(...a)) };
    await handleEvents({ db: t.db, config: c, now: () => T0 });
    await deliverDue({ db: t.db, config: c, now: () => T0, bridge: counting });
    const [row] = await t.db.select().from(notifications);
    expect(row).toMatchObject({ status: 'given_up', attempts: 0 });
    expect(row!.lastError).toMatch(/^mail is not configured/);
    expect(calls).toBe(0);
  });

  it(
    'credentials from the environment with EMAIL_USE_TLS off: nothing is attempted (never AUTH in ' + 'clear)',
    async () => {
      const [u] = await makeUsers(1);
      await lockEvents([u!]);
      const c = config({ EMAIL_USE_TLS: 'False' });
      let calls = 0;
      const counting: BridgeClient = { status: bridge.status, call: (...a) => (calls++, bridge.call(...a)) };
      await handleEvents({ db: t.db, config: c, now: () => T0 });
      await deliverDue({ db: t.db, config: c, now: () => T0, bridge: counting });
      const [row] = await t.db.select().from(notifications);
      expect(row).toMatchObject({ status: 'given_up', attempts: 0 });
      expect(row!.lastError).toMatch(/^mail is not configured .*EMAIL_USE_TLS is off/);
      expect(calls).toBe(0);
    },
  );

  it(
    'a permanent refusal (unknown recipient) is given up at once; ' + 'a wrong password is retried with backoff',
    async () => {
      const [u, v] = await makeUsers(2);
      await t.db.update(users).set({ email: 'unknown-1@example.com' }).where(eq(users.id, u!.id));
      await lockEvents([u!]);
      await handleEvents({ db: t.db, config: config(), now: () => T0 });
      await deliverDue({ db: t.db, config: config(), now: () => T0, bridge });
      const [refused] = await t.db.select().from(notifications).where(eq(notifications.userId, u!.id));
      expect(refused).toMatchObject({ status: 'given_up', attempts: 1, sealedLink: null });
      expect(refused!.lastError).toMatch(/^envelope: 550/);

      await lockEvents([v!]);
      const wrong = config({ EMAIL_HOST_PASSWORD: 'Wr0ng' });
      await handleEvents({ db: t.db, config: wrong, now: () => T0 });
      await deliverDue({ db: t.db, config: wrong, now: () => T0, bridge, random: () => 0 });
      const [retried] = await t.db.select().from(notifications).where(eq(notifications.userId, v!.id));
      expect(retried).toMatchObject({ status: 'failed', attempts: 1, nextAttemptAt: T0 + 30_000 });
      expect(retried!.lastError).toMatch(/^auth: 535/);
      expect(retried!.lastError).not.toContain('Wr0ng');
      // Not before the backoff; then with the right password (the settings of the next send).
      expect(await deliverDue({ db: t.db, config: config(), now: () => T0 + 29_000, bridge })).toMatchObject({
        sent: 0,
      });
      expect(await deliverDue({ db: t.db, config: config(), now: () => T0 + 30_000, bridge })).toMatchObject({
        sent: 1,
      });
      expect(smtp.received.map((m) => m.to[0])).toEqual([v!.email]);
    },
  );

  it('reports mail failures to SENDER_ERRTRACK_DSN when error tracking is on', async () => {
    const ingest: IngestServer = await startIngestServer();
    try {
      const [u] = await makeUsers(1);
      await lockEvents([u!]);
      const dsn = `${ingest.httpOrigin.replace('http://', 'http://pubkey@')}/42`;
      const c = config({ EMAIL_HOST_PASSWORD: 'Wr0ng-pass', SENDER_ERRTRACK_DSN: dsn, ERRTRACK_ENV: 'test' });
      await handleEvents({ db: t.db, config: c, now: () => T0 });
      await deliverDue({ db: t.db, config: c, now: () => T0, bridge });
      const [req] = await ingest.waitFor(1);
      expect(req!.url).toMatch(/^\/api\/42\/envelope\//);
      const body = req!.body.toString();
      expect(body).toContain('MailSendError');
      expect(body).toContain('account_locked');
      expect(body).toContain('auth-service.mail');
      expect(body).not.toContain('Wr0ng-pass');
      expect(body).not.toContain(u!.email!);
    } finally {
      await ingest.stop();
    }
  });
});

describe('jobs', () => {
  const jobs = [handleNotificationEvents, deliverNotifications];

  it('fired twice at once on one database, they send each mail once', async () => {
    const us = await makeUsers(5);
    await lockEvents(us);
    const ctx = scopeWithoutRequest({ db: t.db, config: config(), now: () => T0, bridge });
    await Promise.all([runScheduledJobs(ctx, jobs), runScheduledJobs(ctx, jobs)]);
    // One runner handled the events while the other delivered (nothing yet): the next firing sends.
    await Promise.all([
      runScheduledJobs({ ...ctx, now: () => T0 + 30_000 }, jobs),
      runScheduledJobs({ ...ctx, now: () => T0 + 30_000 }, jobs),
    ]);
    expect(await statusOf()).toEqual(Array(5).fill('sent'));
    expect(smtp.received).toHaveLength(5);
  });

  it('a lease left by a crashed deliverer is taken over once it expires', async () => {
    const [u] = await makeUsers(1);
    await lockEvents([u!]);
    await handleEvents({ db: t.db, config: config(), now: () => T0 });
    // The job's lease (10 minutes) and the row's claim (2 minutes), both of a holder that crashed.
    expect(await acquireLease(t.db, deliverNotifications.name, 'crashed', T0, deliverNotifications.leaseMs!)).toBe(
      true,
    );
    await t.db.update(notifications).set({ leaseHolder: 'crashed', leaseUntil: T0 + 120_000 });
    const ctx = scopeWithoutRequest({ db: t.db, config: config(), now: () => T0, bridge });
    await runScheduledJobs({ ...ctx, now: () => T0 + 60_000 }, [deliverNotifications]);
    expect(smtp.received).toHaveLength(0);
    await runScheduledJobs({ ...ctx, now: () => T0 + 10 * 60_000 }, [deliverNotifications]);
    expect(smtp.received).toHaveLength(1);
    expect(await statusOf()).toEqual(['sent']);
  });

  it(
    'password-expiry notices: once per password, ' + 'within AUTH_PASSWORD_EXPIRY_NOTICE_DAY days of the expiry',
    async () => {
      const [soon] = await makeUsers(1, { passwordChangedAt: T0 - 55 * DAY });
      const [later] = await makeUsers(1, { passwordChangedAt: T0 - 40 * DAY });
      const [expired] = await makeUsers(1, { passwordChangedAt: T0 - 61 * DAY });
      const c = config({ USER_PASSWORD_EXPIRATION_DAY: '60', AUTH_PASSWORD_EXPIRY_NOTICE_DAY: '7' });
      const ctx = scopeWithoutRequest({ db: t.db, config: c, now: () => T0, bridge });
      await Promise.all([
        runScheduledJobs(ctx, [passwordExpiryNotices]),
        runScheduledJobs(ctx, [passwordExpiryNotices]),
      ]);
      await passwordExpiryNotices.run(ctx);
      const rows = await t.db.select().from(notifications);
      expect(rows.map((r) => [r.userId, r.kind])).toEqual([[soon!.id, 'password_expiring']]);
      expect(rows[0]!.data).toMatchObject({ days: 5 });
      expect([later!.id, expired!.id]).not.toContain(rows[0]!.userId);
      // A new password is a new one to tell about, in its turn.
      await t.db
        .update(users)
        .set({ passwordChangedAt: T0 - 54 * DAY })
        .where(eq(users.id, soon!.id));
      await passwordExpiryNotices.run(ctx);
      expect(await t.db.select().from(notifications)).toHaveLength(2);
      await deliverDue({ db: t.db, config: c, now: () => T0, bridge });
      const [mail] = await smtp.waitFor(2);
      expect(mail!.parsed.subject).toBe('Your password expires soon');
    },
  );

  it('token-expiry notices: once per live token, within AUTH_TOKEN_EXPIRY_NOTICE_DAY days of its expiry', async () => {
    const [made1] = await makeUsers(1);
    const [owner] = await t.db.select().from(users).where(eq(users.id, made1!.id));
    const made = (name: string, expiresAt: number | null) =>
      issueToken(t.db, owner!, { name, expiresAt, scopes: null, now: T0 - DAY, actor: owner! });
    const soon = await made('ci soon', T0 + 3 * DAY);
    await made('later', T0 + 30 * DAY);
    await made('never', null);
    const revoked = await made('revoked', T0 + 2 * DAY);
    await revokeToken(t.db, owner!, revoked.id, { now: T0 - DAY, actor: owner! });
    const c = config({ AUTH_TOKEN_EXPIRY_NOTICE_DAY: '7' });
    const ctx = scopeWithoutRequest({ db: t.db, config: c, now: () => T0, bridge });
    await Promise.all([runScheduledJobs(ctx, [tokenExpiryNotices]), runScheduledJobs(ctx, [tokenExpiryNotices])]);
    await tokenExpiryNotices.run(ctx);
    const rows = await t.db.select().from(notifications);
    expect(rows.map((r) => [r.userId, r.kind])).toEqual([[owner!.id, 'token_expiring']]);
    expect(rows[0]!.data).toMatchObject({ days: 3, name: 'ci soon', prefix: soon.prefix });
    await deliverDue({ db: t.db, config: c, now: () => T0, bridge });
    const [mail] = await smtp.waitFor(1);
    expect(mail!.parsed.subject).toBe('An API token expires soon');
    expect(mail!.parsed.text).toContain('ci soon');
    // Never the secret.
    expect(mail!.raw).not.toContain(soon.token);
  });

  it(
    'retention: notifications older than NOTIFICATION_EXPIRATION days are purged, ' + 'with a data-lifecycle event',
    async () => {
      const us = await makeUsers(2);
      await lockEvents([us[0]!], T0);
      await handleEvents({ db: t.db, config: config(), now: () => T0 });
      await deliverDue({ db: t.db, config: config(), now: () => T0, bridge });
      await lockEvents([us[1]!], T0 + 5 * DAY);
      await handleEvents({ db: t.db, config: config(), now: () => T0 + 5 * DAY });
      const c = config({ AUTH_NOTIFICATION_EXPIRATION: '10' });
      await purgeNotifications.run(scopeWithoutRequest({ db: t.db, config: c, now: () => T0 + 10 * DAY - 1 }));
      expect(await t.db.select().from(notifications)).toHaveLength(2);
      expect(
        await purgeNotifications.run(scopeWithoutRequest({ db: t.db, config: c, now: () => T0 + 10 * DAY + 1 })),
      ).toMatchObject({ purged: 1 });
      const left = await t.db.select().from(notifications);
      expect(left.map((r) => r.userId)).toEqual([us[1]!.id]);
      const [event] = await t.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'notifications.purged'));
      expect(event).toMatchObject({ stream: 'data_lifecycle', data: { notifications: 1, retentionDays: 10 } });
    },
  );
});

describe('new-device mail: the client in words', () => {
  it('names browsers that also say Chrome or Safari by their own name, and the system', () => {
    const chrome =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
    expect(describeUserAgent(chrome)).toEqual({ browser: 'Chrome 126', system: 'Linux' });
    expect(describeUserAgent(`${chrome.replace('X11; Linux x86_64', 'Windows NT 10.0')} Edg/126.0.2592.56`)).toEqual({
      browser: 'Edge 126',
      system: 'Windows',
    });
    const android =
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0 Mobile';
    expect(describeUserAgent(android)).toEqual({ browser: 'Chrome 125', system: 'Android' });
    expect(describeUserAgent('')).toEqual({ browser: undefined, system: undefined });
  });

  it('an unrecognised client is shown as its User-Agent, escaped in HTML; the subject holds no data', () => {
    const mail = renderMail(
      'new_device',
      'en',
      {
        login: 'bob',
        at: '2026-11-26T10:00:00.000Z',
        address: '192.0.2.7',
        userAgent: '<x>',
        consoleUrl: 'https://c/',
      },
      null,
    );
    expect(mail.subject).toBe('A login to your account from a new device');
    expect(mail.text).toContain('On 2026-11-26 10:00 UTC someone logged in to the account bob');
    expect(mail.text).toContain('Address: 192.0.2.7. Browser and system: "<x>".');
    expect(mail.text).toContain('change your password at once and sign out everywhere in the console: https://c/');
    expect(mail.html).toContain('&quot;&lt;x&gt;&quot;');
    expect(mail.html).not.toContain('<x>');
  });
});

/**
 * New-device alerts (architecture.md §4, "Passwords and lockout"; docs/mail.md),
 * on both hosts, through the bridge and a real SMTP server: a session login (/v3/login JSON or form,
 * /v3/oauth_login) from a client without the account's device cookie mails the owner the time, the
 * client address, the browser and system, and what to do; a login with the cookie, a Basic login,
 * an account without an address and AUTH_NEW_DEVICE_MAIL off send none.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import { startTestBridge, type TestBridge } from '../harness/bridge.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { eventually } from '../harness/eventually.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../harness/smtp.js';

let smtp: TestSmtp;
let bridge: TestBridge;
let host: RunningHost;
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Str0ng$pass';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) ' +
  'Version/17.5 Mobile/15E148 Safari/604.1';
const SUBJECT = 'Вход в учётную запись с нового устройства';
const LOCKED = 'Учётная запись временно заблокирована';

beforeAll(async () => {
  smtp = await startTestSmtp({ tls: 'starttls', auth: { user: 'mailer', pass: 'M@il-pass' } });
  bridge = await startTestBridge({ mail: { ca: smtp.ca } });
  host = await startTestHost(inject('hostKind'), {
    ...bridge.env,
    EMAIL_HOST: '127.0.0.1',
    EMAIL_PORT: String(smtp.port),
    EMAIL_USE_TLS: 'True',
    EMAIL_HOST_USER: 'mailer',
    EMAIL_HOST_PASSWORD: 'M@il-pass',
    EMAIL_FROM: 'Auth service <noreply@auth.test>',
    DEFAULT_FRONTEND_URL: 'https://console.example.com/app',
  });
}, 180_000);
afterAll(async () => {
  await host?.stop();
  await bridge?.stop();
  await smtp?.stop();
});

const api = <T = Record<string, any>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

/** The mails to `address` once there are `n` of them. */
function mailsTo(address: string, n = 1, timeoutMs = 20_000): Promise<ReceivedMail[]> {
  return eventually(
    () => {
      const got = smtp.received.filter((m) => m.to.includes(address));
      if (got.length < n) throw new Error(`got ${got.length}`);
      return got;
    },
    { timeoutMs, what: `${n} mails to ${address}` },
  );
}
const alerts = (address: string) => smtp.received.filter((m) => m.to.includes(address) && m.parsed.subject === SUBJECT);

/** A new account with an address (its welcome mail already received), or without one. */
async function newUser(withEmail = true) {
  const login = uniqueLogin('nd');
  const email = `${login}@example.com`;
  const r = await api<{ id: string }>('/v4/users', {
    method: 'POST',
    auth: admin,
    json: { login, password: PASSWORD, ...(withEmail ? { email } : {}) },
  });
  expect(r.status).toBe(201);
  if (withEmail) await mailsTo(email);
  return { id: r.body.id, login, email };
}

/** A browser (its own User-Agent, as every browser sends one) on the host's origin. */
function browser(userAgent = FIREFOX) {
  const b = new Browser(new URL(host.url).origin);
  const send = b.fetch.bind(b);
  b.fetch = (url, init = {}) =>
    send(url, { ...init, headers: { ...(init.headers as object), 'User-Agent': userAgent } });
  return b;
}
const jsonLogin = async (b: Browser, login: string) =>
  (await b.postJson(`${host.url}/v3/login`, { login, password: PASSWORD })).status;

/**
 * Waits until the events before now are handled: three wrong Basic passwords lock the login (a
 * later event), and its mail arrives only after the handler has passed every earlier event.
 */
async function settle(u: { login: string; email: string }) {
  const before = smtp.received.filter((m) => m.to.includes(u.email) && m.parsed.subject === LOCKED).length;
  for (let i = 0; i < 3; i++)
    await api('/v3/login_without_session', { method: 'POST', auth: basic(u.login, 'Wr0ng$pass') });
  await eventually(
    () => smtp.received.filter((m) => m.to.includes(u.email) && m.parsed.subject === LOCKED).length > before,
    { timeoutMs: 20_000, what: 'the lock mail' },
  );
}

/** The kinds of the notifications to `email` (the administrators' list). */
const kindsOf = async (email: string) =>
  (
    await api<{ items: Array<{ kind: string }> }>(`/v4/notifications?recipient=${encodeURIComponent(email)}`, {
      auth: admin,
    })
  ).body.items.map((n) => n.kind);

describe('new-device mail', () => {
  it('a JSON session login without the device cookie mails time, address, browser and what to do', async () => {
    const u = await newUser();
    const b = browser();
    expect(await jsonLogin(b, u.login)).toBe(200);
    const [mail] = await mailsTo(u.email, 2).then((all) => all.filter((m) => m.parsed.subject === SUBJECT));
    expect(mail, 'the new-device mail').toBeDefined();
    const text = mail!.parsed.text ?? '';
    expect(text).toContain(u.login);
    expect(text).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(text).toMatch(/127\.0\.0\.1|::1/);
    expect(text).toContain('Firefox 128');
    expect(text).toContain('Windows');
    expect(text).toContain('https://console.example.com/app');
    expect(text).toContain('смените пароль');
    expect(mail!.parsed.html).toContain('Firefox 128');
    expect(await kindsOf(u.email)).toContain('new_device');

    // The same browser again, with its device cookie: no second alert.
    expect(await jsonLogin(b, u.login)).toBe(200);
    await settle(u);
    expect(alerts(u.email)).toHaveLength(1);
  });

  it('a form login and an OAuth password grant from new clients alert too', async () => {
    const u = await newUser();
    const form = await browser(SAFARI).postForm(`${host.url}/v3/login`, { login: u.login, password: PASSWORD });
    expect(form.status).toBe(303);
    const [mail] = await mailsTo(u.email, 2).then((all) => all.filter((m) => m.parsed.subject === SUBJECT));
    expect(mail!.parsed.text).toContain('Safari 17');
    expect(mail!.parsed.text).toContain('iOS');
    const oauth = await browser().postForm(`${host.url}/v3/oauth_login`, {
      grant_type: 'password',
      username: u.login,
      password: PASSWORD,
    });
    expect(oauth.status).toBe(200);
    await mailsTo(u.email, 3);
    expect(alerts(u.email)).toHaveLength(2);
  });

  it('Basic logins (no cookies ever) send none', async () => {
    const u = await newUser();
    const r = await api('/v3/login_without_session', { method: 'POST', auth: basic(u.login, PASSWORD) });
    expect(r.status).toBe(200);
    expect((await api('/v4/users/me', { auth: basic(u.login, PASSWORD) })).status).toBe(200);
    await settle(u);
    expect(alerts(u.email)).toHaveLength(0);
    expect(await kindsOf(u.email)).not.toContain('new_device');
  });

  it('an account without an address gets no notification at all', async () => {
    const u = await newUser(false);
    expect(await jsonLogin(browser(), u.login)).toBe(200);
    await settle(await newUser()); // another account's later event: the handler has passed this one
    // Its own list (no recipient to filter by): only the new account's mail, given up for want of an address.
    const own = await api<{ items: Array<{ kind: string; status: string }> }>('/v4/users/me/notifications', {
      auth: basic(u.login, PASSWORD),
    });
    expect(own.body.items.map((n) => [n.kind, n.status])).toEqual([['account_created', 'given_up']]);
  });

  it('AUTH_NEW_DEVICE_MAIL off (a UI setting) sends none; on again, the next new client is told', async () => {
    const off = await api('/v3/settings', {
      method: 'PATCH',
      auth: admin,
      json: { values: { NEW_DEVICE_MAIL: false } },
    });
    expect(off.status).toBe(200);
    try {
      const u = await newUser();
      expect(await jsonLogin(browser(), u.login)).toBe(200);
      await settle(u);
      expect(alerts(u.email)).toHaveLength(0);
      expect(await kindsOf(u.email)).not.toContain('new_device');
    } finally {
      expect((await api('/v3/settings/NEW_DEVICE_MAIL', { method: 'DELETE', auth: admin })).status).toBe(200);
    }
    const v = await newUser();
    expect(await jsonLogin(browser(), v.login)).toBe(200);
    await mailsTo(v.email, 2);
    expect(alerts(v.email)).toHaveLength(1);
  });
});

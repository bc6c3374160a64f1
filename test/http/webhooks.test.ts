/**
 * Webhooks (docs/webhooks.md) on both hosts, against a receiver on loopback (opened by the harness's
 * AUTH_WEBHOOK_ALLOW_HTTP_HOSTS and AUTH_WEBHOOK_ALLOW_PRIVATE). Every delivery the receiver gets is verified
 * with the npm verifiers a receiver uses (standardwebhooks, svix), and each signature counted with an HMAC
 * of the test's own (node:crypto). Time moves with the service's test clock.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ADMIN, basic, call, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { checkPage, launchChromium, newTab, openPage, signIn } from '../harness/console.js';

type Json = Record<string, any>;
const TOKEN = 'metrics-scrape-token-webhooks-0123456789abcdef';
const admin = basic(ADMIN.login, ADMIN.password);
let host: RunningHost;
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const setClock = async (offsetMs: number) => {
  const r = await call('/__test__/clock', { base: host.url, method: 'POST', json: { offsetMs } });
  expect(r.status).toBe(200);
};
const runSender = async () => {
  const r = await api('/__test__/jobs', { method: 'POST', json: { names: ['deliver-webhooks'] } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};

/** What the receiver got. */
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** Per path, the answers to give in turn (then 204). */
const answers = new Map<string, Array<{ status: number; headers?: Record<string, string> }>>();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body });
      const next = answers.get(path)?.shift() ?? { status: 204 };
      res.writeHead(next.status, next.headers ?? {});
      res.end(next.status >= 300 ? 'receiver says no' : '');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  host = await startTestHost(inject('hostKind'), { AUTH_METRICS_TOKEN: TOKEN });
}, 180_000);
afterAll(async () => {
  await host?.stop();
  await new Promise((r) => receiver?.close(r));
});

const created: string[] = [];
afterEach(async () => {
  await setClock(0);
  for (const id of created.splice(0)) await api(`/v4/webhooks/${id}`, { method: 'DELETE', auth: admin });
});

async function subscribe(path: string, eventTypes = ['user.created']) {
  const r = await api('/v4/webhooks', {
    method: 'POST',
    auth: admin,
    json: { url: `${receiverUrl}${path}`, eventTypes, description: `test ${path}` },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  created.push(r.body.id);
  return r.body as Json & { id: string; secret: string };
}

/** A new account: one user.created event. */
async function newUser() {
  const login = uniqueLogin('wh');
  const r = await api('/v4/users', { method: 'POST', auth: admin, json: { login, password: 'Str0ng$passWh' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return login;
}

/** The requests of `path`, once there are at least `n` (the kick after a response or a job run sends them). */
async function deliveriesTo(path: string, n: number): Promise<Received[]> {
  await expect
    .poll(
      async () => {
        const got = received.filter((r) => r.path === path).length;
        if (got < n) await runSender();
        return received.filter((r) => r.path === path).length;
      },
      { timeout: 20_000, interval: 200 },
    )
    .toBeGreaterThanOrEqual(n);
  return received.filter((r) => r.path === path);
}

/**
 * The signatures of `r` that `secret` verifies (Standard Webhooks: base64 HMAC-SHA256 of id.timestamp.body);
 * where one does, the receivers' own libraries must accept the delivery too: `standardwebhooks` and svix's
 * verifier, code no one here wrote (each throws on a bad signature or a timestamp outside five minutes).
 */
function verifiedBy(r: Received, secret: string): number {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const signature = String(r.headers['webhook-signature']);
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest();
  const count = signature.split(' ').filter((s) => {
    const [version, sig] = s.split(',');
    const given = Buffer.from(sig ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  }).length;
  if (count > 0) {
    const headers = { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': signature };
    // Checked at the time of the delivery: the service's test clock may run ahead of this process's.
    vi.useFakeTimers({ now: Number(ts) * 1000, toFake: ['Date'] });
    try {
      new StandardWebhook(secret).verify(r.body, headers);
      new SvixWebhook(secret).verify(r.body, headers);
    } finally {
      vi.useRealTimers();
    }
  }
  return count;
}

async function deliveries(id: string): Promise<Json[]> {
  const r = await api<{ items: Json[] }>(`/v4/webhooks/${id}/deliveries`, { auth: admin });
  expect(r.status).toBe(200);
  return r.body.items;
}

describe('webhook subscriptions', () => {
  it('shows the secret once: never in the list, a read or a change', async () => {
    const hook = await subscribe('/secret-once');
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const seal = hook.secret.slice(6, 20);
    for (const r of [
      await api('/v4/webhooks', { auth: admin }),
      await api(`/v4/webhooks/${hook.id}`, { auth: admin }),
      await api(`/v4/webhooks/${hook.id}`, { method: 'PATCH', auth: admin, json: { description: 'changed' } }),
    ]) {
      expect(r.status).toBe(200);
      const text = JSON.stringify(r.body);
      expect(text).not.toContain(seal);
      expect(text).not.toMatch(/secret"|secretEnc|whsec_/);
    }
    const one = await api(`/v4/webhooks/${hook.id}`, { auth: admin });
    expect(one.body).toMatchObject({ description: 'changed', enabled: true, queue: { depth: 0 } });
  });

  it.each([
    ['https://10.0.0.1/hook', /private/],
    ['https://169.254.169.254/latest/meta-data/', /metadata/],
    ['https://[::1]:8443/hook', /loopback/],
    ['https://[::ffff:192.168.0.1]/hook', /private/],
    ['https://167772161/hook', /private/],
    ['https://localhost./hook', /local machine/],
    ['http://hooks.example.com/hook', /only https/],
    ['https://user:pw@hooks.example.com/hook', /user name or password/],
  ])('refuses the target %s (422 naming url)', async (url, why) => {
    const r = await api('/v4/webhooks', { method: 'POST', auth: admin, json: { url, eventTypes: ['*'] } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([
      expect.objectContaining({ location: 'json', path: 'url', message: expect.stringMatching(why) }),
    ]);
  });

  it('refuses delivery through the bridge while none is configured (422 naming delivery)', async () => {
    const json = { url: 'https://hooks.corp.example/in', eventTypes: ['*'], delivery: 'bridge' };
    const r = await api('/v4/webhooks', { method: 'POST', auth: admin, json });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([
      expect.objectContaining({ path: 'delivery', message: expect.stringMatching(/AUTH_BRIDGE_URL/) }),
    ]);
    const hook = await subscribe('/no-bridge');
    expect(hook.delivery).toBe('direct');
    const patched = await api(`/v4/webhooks/${hook.id}`, {
      method: 'PATCH',
      auth: admin,
      json: { delivery: 'bridge' },
    });
    expect(patched.status).toBe(422);
    expect(JSON.stringify(patched.body.errors)).toContain('delivery');
    const bad = await api('/v4/webhooks', { method: 'POST', auth: admin, json: { ...json, delivery: 'pigeon' } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body.errors)).toContain('delivery');
  });

  it('tells another subscription of a new one: its address, types and delivery (webhook.created)', async () => {
    const watcher = await subscribe('/watch-created', ['webhook.created']);
    const hook = await subscribe('/watched', ['user.created']);
    // Its own creation may come first (a subscription hears the event of the batch that made it).
    const ofHook = () => received.find((r) => r.path === '/watch-created' && r.body.includes(hook.id));
    await expect.poll(async () => ofHook() ?? (await runSender()), { timeout: 20_000, interval: 200 }).toBeTruthy();
    const got = ofHook();
    expect(verifiedBy(got!, watcher.secret)).toBe(1);
    const body = JSON.parse(got!.body);
    expect(body).toMatchObject({
      type: 'webhook.created',
      data: { webhookId: hook.id, url: `${receiverUrl}/watched`, eventTypes: ['user.created'], delivery: 'direct' },
    });
    expect(got!.body).not.toContain(hook.secret.slice(6, 20));
  });

  it('refuses event types outside the catalogue, and the api_access stream', async () => {
    for (const eventTypes of [['login.nope'], ['api.request'], ['api_access.*'], []]) {
      const r = await api('/v4/webhooks', {
        method: 'POST',
        auth: admin,
        json: { url: 'https://hooks.example.com/x', eventTypes },
      });
      expect(r.status, JSON.stringify(eventTypes)).toBe(422);
      expect(JSON.stringify(r.body.errors)).toContain('eventTypes');
    }
  });

  it('is for administrators only', async () => {
    const login = await newUser();
    const r = await api('/v4/webhooks', { auth: basic(login, 'Str0ng$passWh') });
    expect(r.status).toBe(403);
  });
});

describe('webhook delivery', () => {
  it('delivers a signed Standard Webhooks message, once, with the catalogue fields and no secret', async () => {
    const hook = await subscribe('/signed');
    const login = await newUser();
    const [got] = await deliveriesTo('/signed', 1);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Number(got!.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
    expect(verifiedBy(got!, hook.secret)).toBe(1);
    const body = JSON.parse(got!.body);
    expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);
    expect(body).toMatchObject({ type: 'user.created', data: { subject: { login }, actor: { login: ADMIN.login } } });
    expect(got!.body).not.toMatch(/Str0ng|password"|whsec_/);
    const [d] = await deliveries(hook.id);
    expect(d).toMatchObject({ id: got!.headers['webhook-id'], state: 'delivered', attempts: 1, lastStatus: 204 });
  });

  it('retries after a 500 on the schedule, with the same webhook-id', async () => {
    const hook = await subscribe('/retry');
    answers.set('/retry', [{ status: 500 }]);
    await newUser();
    const [first] = await deliveriesTo('/retry', 1);
    let [d] = await deliveries(hook.id);
    expect(d).toMatchObject({ state: 'pending', attempts: 1, lastStatus: 500, lastResponse: 'receiver says no' });
    expect(Date.parse(d!.nextAttemptAt) - Date.parse(d!.lastAttemptAt)).toBeGreaterThanOrEqual(5_000);
    await setClock(6_000);
    const [, second] = await deliveriesTo('/retry', 2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    expect(verifiedBy(second!, hook.secret)).toBe(1);
    [d] = await deliveries(hook.id);
    expect(d).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('honours Retry-After on a 429', async () => {
    const hook = await subscribe('/busy');
    answers.set('/busy', [{ status: 429, headers: { 'Retry-After': '120' } }]);
    await newUser();
    await deliveriesTo('/busy', 1);
    const [d] = await deliveries(hook.id);
    expect(Date.parse(d!.nextAttemptAt) - Date.parse(d!.lastAttemptAt)).toBeGreaterThanOrEqual(120_000);
    await setClock(60_000);
    await runSender();
    expect(received.filter((r) => r.path === '/busy')).toHaveLength(1);
    await setClock(125_000);
    await deliveriesTo('/busy', 2);
  });

  it('disables the subscription on a 410, and tells the administrators by mail', async () => {
    const mailTo = `${uniqueLogin('whadm')}@example.com`;
    const adm = await api('/v4/users', {
      method: 'POST',
      auth: admin,
      json: { login: uniqueLogin('whadm'), password: 'Str0ng$passWh', email: mailTo, role: 'admin' },
    });
    expect(adm.status, JSON.stringify(adm.body)).toBe(201);
    const hook = await subscribe('/gone');
    answers.set('/gone', [{ status: 410 }]);
    await newUser();
    await deliveriesTo('/gone', 1);
    await expect
      .poll(async () => (await api(`/v4/webhooks/${hook.id}`, { auth: admin })).body)
      .toMatchObject({ enabled: false, disabledReason: 'gone' });
    const [d] = await deliveries(hook.id);
    expect(d).toMatchObject({ state: 'failed', lastStatus: 410 });
    const overview = await api('/v4/admin/overview', { auth: admin });
    expect(overview.body.webhooks.items).toContainEqual(
      expect.objectContaining({ id: hook.id, enabled: false, disabledReason: 'gone' }),
    );
    await newUser();
    await runSender();
    expect(received.filter((r) => r.path === '/gone')).toHaveLength(1);
    await expect
      .poll(async () => {
        await api('/__test__/jobs', { method: 'POST', json: { names: ['handle-events'] } });
        const r = await api<{ items: Json[] }>(
          `/v4/notifications?kind=webhook_disabled&recipient=${encodeURIComponent(mailTo)}`,
          { auth: admin },
        );
        return r.body.items;
      })
      .toEqual([expect.objectContaining({ kind: 'webhook_disabled', recipient: mailTo })]);
  });

  it('disables a subscription that has failed for 5 days', async () => {
    const hook = await subscribe('/down');
    answers.set('/down', [{ status: 502 }, { status: 502 }]);
    await newUser();
    await deliveriesTo('/down', 1);
    await setClock(5 * 86_400_000 + 60_000);
    await deliveriesTo('/down', 2);
    await expect
      .poll(async () => (await api(`/v4/webhooks/${hook.id}`, { auth: admin })).body)
      .toMatchObject({ enabled: false, disabledReason: 'failing' });
  });

  it('signs with both secrets during a rotation, each verifiable', async () => {
    const hook = await subscribe('/rotate');
    const r = await api(`/v4/webhooks/${hook.id}/rotate-secret`, { method: 'POST', auth: admin });
    expect(r.status).toBe(200);
    expect(r.body.secret).toMatch(/^whsec_/);
    expect(Date.parse(r.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await newUser();
    const [got] = await deliveriesTo('/rotate', 1);
    expect(String(got!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiedBy(got!, hook.secret)).toBe(1);
    expect(verifiedBy(got!, r.body.secret)).toBe(1);
  });

  it('sends a test event, and a redelivery with the same webhook-id', async () => {
    const hook = await subscribe('/test-event');
    const t = await api(`/v4/webhooks/${hook.id}/test`, { method: 'POST', auth: admin });
    expect(t.status).toBe(202);
    const [got] = await deliveriesTo('/test-event', 1);
    expect(got!.headers['webhook-id']).toBe(t.body.deliveryId);
    expect(JSON.parse(got!.body)).toMatchObject({ type: 'webhook.test', data: { webhookId: hook.id } });
    const again = await api(`/v4/webhooks/${hook.id}/deliveries/${t.body.deliveryId}/redeliver`, {
      method: 'POST',
      auth: admin,
    });
    expect(again.status).toBe(202);
    const [, second] = await deliveriesTo('/test-event', 2);
    expect(second!.headers['webhook-id']).toBe(t.body.deliveryId);
    expect(verifiedBy(second!, hook.secret)).toBe(1);
  });

  it('shows the queue (depth, oldest age) in the API and in /metrics, and counts attempts by outcome', async () => {
    const hook = await subscribe('/queue');
    answers.set('/queue', [{ status: 500 }]);
    await newUser();
    await deliveriesTo('/queue', 1);
    const one = await api(`/v4/webhooks/${hook.id}`, { auth: admin });
    expect(one.body.queue).toMatchObject({ depth: 1, oldestAgeSeconds: expect.any(Number) });
    expect(one.body.failingSince).not.toBeNull();
    const m = await call('/metrics', { base: host.url, auth: `Bearer ${TOKEN}` });
    const text = await m.text();
    expect(text).toMatch(/^auth_webhook_queue_depth [1-9]/m);
    expect(text).toMatch(/^auth_webhook_oldest_age_seconds \d/m);
    expect(text).toMatch(/^auth_webhook_attempts_total\{outcome="retry"\} [1-9]/m);
    expect(text).toMatch(/^auth_webhook_attempts_total\{outcome="delivered"\} [1-9]/m);
  });
});

describe('console: webhooks', () => {
  it('adds a subscription (its secret shown once), sends a test event, lists the delivery, deletes it', async () => {
    const browser = await launchChromium();
    const tab = await newTab(browser);
    const { page } = tab;
    try {
      await signIn(tab, host.url, ADMIN.login, ADMIN.password);
      await openPage(tab, `${host.url}/ui/admin/webhooks`);
      await page.waitForSelector('#hook-editor form');
      const url = `${receiverUrl}/console`;
      await page.fill('#hook-f-url', url);
      await page.fill('#hook-f-eventTypes', 'user_activity.*\nuser.created');
      await page.fill('#hook-f-description', 'from the console');
      // Through the bridge: refused on this host, which has none (the form shows the problem).
      await page.selectOption('#hook-f-via', 'bridge');
      await page.click('#hook-editor button[type=submit]');
      await page.waitForSelector('#hook-editor .message:not([hidden]):has-text("AUTH_BRIDGE_URL")');
      await page.selectOption('#hook-f-via', 'direct');
      await page.click('#hook-editor button[type=submit]');
      await page.waitForSelector('#hook-region article[data-record]');
      const shown = (await page.textContent('#hook-message')) ?? '';
      const secret = /whsec_[A-Za-z0-9+/]+=*/.exec(shown)?.[0];
      expect(secret, shown).toBeDefined();
      const listed = await api<{ items: Json[] }>('/v4/webhooks', { auth: admin });
      const hook = listed.body.items.find((h) => h.url === url)!;
      created.push(hook.id);
      expect(hook).toMatchObject({
        eventTypes: ['user_activity.*', 'user.created'],
        description: 'from the console',
        delivery: 'direct',
      });
      expect(await page.textContent(`[data-record="${hook.id}"]`)).toContain('directly from the service');
      expect(JSON.stringify(listed.body)).not.toContain(secret!);
      await checkPage(tab, inject('hostKind'), 'admin-webhooks');

      // The test event reaches the receiver, signed with the secret the page showed.
      await page.click(`[data-record="${hook.id}"] button[aria-label="Send a test event to ${url}"]`);
      const [got] = await deliveriesTo('/console', 1);
      expect(verifiedBy(got!, secret!)).toBe(1);
      await page.click(`[data-record="${hook.id}"] button[aria-label="Recent deliveries of ${url}"]`);
      await page.waitForSelector(`[data-record="${hook.id}"] table tbody tr:has-text("delivered")`);

      await page.click(`[data-record="${hook.id}"] button[aria-label="Delete ${url}"]`);
      await page.click(`[data-record="${hook.id}"] button[aria-label="Delete ${url}"]`);
      await page.waitForSelector(`#hook-region [data-record="${hook.id}"]`, { state: 'detached' });
      expect((await api(`/v4/webhooks/${hook.id}`, { auth: admin })).status).toBe(404);
    } finally {
      await tab.context.close();
      await browser.close();
    }
  });
});

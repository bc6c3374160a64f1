/**
 * Webhooks through the bridge (docs/webhooks.md, "Targets") on both hosts: HTTPS receivers on loopback whose
 * certificates come from throwaway CAs made here (test/harness/ingest-server.ts), the real bridge process
 * (test/harness/bridge-process.ts) trusting two of those CAs (BRIDGE_WEBHOOK_CA) and sending only to 127.0.0.1
 * (BRIDGE_WEBHOOK_HOSTS), and the service with subscriptions `delivery: bridge`. What arrives is verified with
 * the npm `standardwebhooks` verifier, as a receiver would.
 */
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { startBridgeProcess, type BridgeProcess } from '../harness/bridge-process.js';
import { ADMIN, basic, callJson, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { startIngestServer, type IngestServer } from '../harness/ingest-server.js';

type Json = Record<string, any>;
const admin = basic(ADMIN.login, ADMIN.password);
const PASSWORD = 'Str0ng$passWhb';
let host: RunningHost;
let bridge: BridgeProcess;
/** The private-CA receiver the bridge trusts and may reach (127.0.0.1). */
let trusted: IngestServer;
/** A receiver whose CA the bridge trusts, on 127.0.0.2: outside BRIDGE_WEBHOOK_HOSTS. */
let outside: IngestServer;
/** A receiver on 127.0.0.1 whose CA the bridge does not trust. */
let foreign: IngestServer;
const api = <T = Json>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });
const runSender = async () => {
  const r = await api('/__test__/jobs', { method: 'POST', json: { names: ['deliver-webhooks'] } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};

beforeAll(async () => {
  [trusted, outside, foreign] = await Promise.all([
    startIngestServer(),
    startIngestServer({ host: '127.0.0.2' }),
    startIngestServer(),
  ]);
  bridge = await startBridgeProcess(
    { ca: trusted.caPem },
    { ca: `${trusted.caPem}\n${outside.caPem}`, hosts: ['127.0.0.1/32'] },
  );
  host = await startTestHost(inject('hostKind'), bridge.env);
}, 180_000);
afterAll(async () => {
  await host?.stop();
  await Promise.all([bridge?.stop(), trusted?.stop(), outside?.stop(), foreign?.stop()]);
});

const created: string[] = [];
afterEach(async () => {
  for (const id of created.splice(0)) await api(`/v4/webhooks/${id}`, { method: 'DELETE', auth: admin });
});

async function subscribe(url: string, delivery?: 'direct' | 'bridge') {
  const r = await api('/v4/webhooks', {
    method: 'POST',
    auth: admin,
    json: { url, eventTypes: ['login.success'], ...(delivery ? { delivery } : {}) },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  created.push(r.body.id);
  return r.body as Json & { id: string; secret: string };
}

/** A new account that logs in once: one login.success event. */
async function login(): Promise<string> {
  const name = uniqueLogin('whb');
  const r = await api('/v4/users', { method: 'POST', auth: admin, json: { login: name, password: PASSWORD } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect((await api('/v3/login_without_session', { method: 'POST', auth: basic(name, PASSWORD) })).status).toBe(200);
  return name;
}

/**
 * The subscription's first attempted delivery (the kick or a job run sends it; the administrator's Basic
 * requests are logins too, so several wait, and after a failure the later ones wait for a later run).
 */
async function attempted(id: string): Promise<Json> {
  let tried: Json | undefined;
  await expect
    .poll(
      async () => {
        const r = await api<{ items: Json[] }>(`/v4/webhooks/${id}/deliveries`, { auth: admin });
        tried = r.body.items.find((d) => d.attempts > 0);
        if (!tried) await runSender();
        return tried?.attempts ?? 0;
      },
      { timeout: 30_000, interval: 250 },
    )
    .toBeGreaterThanOrEqual(1);
  return tried!;
}

describe('webhooks through the bridge', () => {
  it('delivers a login event to a receiver of a private CA; it verifies with standardwebhooks', async () => {
    trusted.answerBody = 'thanks';
    const hook = await subscribe(`${trusted.origin}/in/login`, 'bridge');
    expect(hook.delivery).toBe('bridge');
    expect((await api(`/v4/webhooks/${hook.id}`, { auth: admin })).body).toMatchObject({ delivery: 'bridge' });
    const name = await login();
    // The administrator's requests are logins too: the one of `name` is the one looked for.
    const mine = () => trusted.received.find((r) => r.url === '/in/login' && r.body.toString().includes(name));
    await expect.poll(mine, { timeout: 30_000 }).toBeDefined();
    const got = mine();
    expect(got!.scheme).toBe('https');
    const headers = {
      'webhook-id': String(got!.headers['webhook-id']),
      'webhook-timestamp': String(got!.headers['webhook-timestamp']),
      'webhook-signature': String(got!.headers['webhook-signature']),
    };
    // Checked at the time of the delivery: the service's test clock may run ahead of this process's.
    vi.useFakeTimers({ now: Number(headers['webhook-timestamp']) * 1000, toFake: ['Date'] });
    let event: Json;
    try {
      event = new StandardWebhook(hook.secret).verify(got!.body.toString('utf8'), headers) as Json;
    } finally {
      vi.useRealTimers();
    }
    expect(event).toMatchObject({ type: 'login.success', data: { subject: { login: name } } });
    expect(() =>
      new StandardWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got!.body, headers),
    ).toThrow();
    const r = await api<{ items: Json[] }>(`/v4/webhooks/${hook.id}/deliveries`, { auth: admin });
    expect(r.body.items.find((d) => d.id === headers['webhook-id'])).toMatchObject({
      state: 'delivered',
      attempts: 1,
      lastStatus: 200,
      lastResponse: 'thanks',
    });
  });

  it('is refused by the bridge for a host outside BRIDGE_WEBHOOK_HOSTS, which is never connected to', async () => {
    const before = outside.connections;
    const hook = await subscribe(`${outside.origin}/in/outside`, 'bridge');
    await login();
    const d = await attempted(hook.id);
    expect(d).toMatchObject({ state: 'pending', attempts: 1, lastStatus: null });
    expect(d.lastResponse).toMatch(/127\.0\.0\.2 is not in BRIDGE_WEBHOOK_HOSTS.*WEBHOOK_TARGET_REFUSED/);
    expect(outside.connections).toBe(before);
    expect(outside.received).toHaveLength(0);
  });

  it('fails for a receiver whose certificate another CA signed', async () => {
    const hook = await subscribe(`${foreign.origin}/in/foreign`, 'bridge');
    await login();
    const d = await attempted(hook.id);
    expect(d).toMatchObject({ state: 'pending', attempts: 1, lastStatus: null });
    expect(d.lastResponse).toMatch(/not verified.*BRIDGE_WEBHOOK_CA.*UPSTREAM_TLS/);
    expect(foreign.received).toHaveLength(0);
  });

  it('fails direct to the same private-CA receiver: the bridge is what verifies it', async () => {
    const hook = await subscribe(`${trusted.origin}/in/direct`);
    expect(hook.delivery).toBe('direct');
    await login();
    const d = await attempted(hook.id);
    expect(d).toMatchObject({ state: 'pending', attempts: 1, lastStatus: null });
    expect(d.lastResponse).not.toBe('');
    if (inject('hostKind') === 'node') expect(d.lastResponse).toMatch(/certificate/i);
    expect(trusted.received.filter((r) => r.url === '/in/direct')).toHaveLength(0);
  });

  it('takes https:// only through the bridge (422 naming url), and switches a subscription either way', async () => {
    const r = await api('/v4/webhooks', {
      method: 'POST',
      auth: admin,
      json: { url: `${trusted.httpOrigin}/in/plain`, eventTypes: ['*'], delivery: 'bridge' },
    });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([expect.objectContaining({ path: 'url', message: expect.stringMatching(/https/) })]);
    const hook = await subscribe(`${trusted.httpOrigin}/in/plain`);
    const patched = await api(`/v4/webhooks/${hook.id}`, {
      method: 'PATCH',
      auth: admin,
      json: { delivery: 'bridge' },
    });
    expect(patched.status).toBe(422);
    const moved = await api(`/v4/webhooks/${hook.id}`, {
      method: 'PATCH',
      auth: admin,
      json: { delivery: 'bridge', url: `${trusted.origin}/in/moved` },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ delivery: 'bridge', url: `${trusted.origin}/in/moved` });
  });
});

/**
 * webhooks: what webhook subscriptions cost the logins, and how fast deliveries leave (docs/webhooks.md,
 * docs/performance.md "Webhooks"). Against our Node host: a burst of LOGINS Basic logins
 * (POST /v3/login_without_session, CONNECTIONS at once, seeded accounts) without any subscription, then the same
 * burst with three subscriptions to `user_activity.*` pointing at a receiver on loopback (answering 204): login
 * p50/p99 of both bursts, and deliveries per second from the first login of the second burst to the last of its
 * 3 x LOGINS deliveries reaching the receiver (bounded by the logins' own rate). Delivery is never on a login's
 * path: the target is a p99 within 10 % of the burst without subscriptions. Then the sender's own rate: a
 * backlog of 3 x DRAIN deliveries (DRAIN events written at once on an embedded database, three subscriptions)
 * sent by the real sender (deliverDue) through the Node host's transport to the receiver: deliveries per second.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhooks as webhooksTable } from '../../schema/index.js';
import { auditInsert } from '../../worker/src/audit/events.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { sealSecret } from '../../worker/src/store/secret-box.js';
import { deliverDue } from '../../worker/src/webhooks/sender.js';
import { newSigningSecret } from '../../worker/src/webhooks/signature.js';
import { createWebhookTransport } from '../../worker/node/webhook-transport.js';
import { createNodeNativeHasher } from '../../worker/node/native-hasher.js';
import { createTestApp } from '../../test/harness/app.js';
import { ADMIN_LOGIN, benchServiceEnv, ONE_ADDRESS_ENV, startBenchNodeHost } from './node-host.js';
import type { ScenarioResult } from './report.js';
import { ScenarioError, type BenchConfig } from './scenarios.js';
import { seededLogin, seedAccounts } from './seed.js';
import { median, percentile, round } from './stats.js';

type Register = (stop: () => Promise<void>) => () => Promise<void>;

const PASSWORD = 'Bn#7seededPassw0rd';
const LOGINS = Number(process.env.BENCH_WEBHOOK_LOGINS ?? 1000);
const CONNECTIONS = 10;
const SUBSCRIPTIONS = 3;
const DRAIN = Number(process.env.BENCH_WEBHOOK_DRAIN ?? 2000);

/** The sender's rate: 3 x DRAIN deliveries queued at once, sent by deliverDue to `url`. */
async function drain(url: string, count: () => number): Promise<{ deliveries: number; seconds: number }> {
  const rules = { AUTH_WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1', AUTH_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1' };
  const t = await createTestApp(rules);
  try {
    const config = parseEnvironment({ SESSION_SECRET_KEY: 'bench-session-secret-key-0123456789abcdef', ...rules });
    const now = Date.now();
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      await t.db.insert(webhooksTable).values({
        id: crypto.randomUUID(),
        url,
        eventTypes: ['user_activity.*'],
        secretEnc: await sealSecret(config, newSigningSecret()),
        createdAt: now,
        updatedAt: now,
      });
    }
    for (let i = 0; i < DRAIN; i += 100) {
      const batch = Array.from({ length: Math.min(100, DRAIN - i) }, (_, k) =>
        auditInsert(t.db, now, {
          stream: 'user_activity',
          type: 'login.success',
          subject: { id: `u${i + k}`, login: `user${i + k}` },
          data: { source: 'local' },
        }),
      );
      await t.db.batch(batch as [(typeof batch)[number], ...(typeof batch)[number][]]);
    }
    const before = count();
    const started = performance.now();
    const scope = {
      db: t.db,
      config,
      now: () => now,
      logger: t.service.logger,
      webhookFetch: createWebhookTransport(),
    };
    let sent = 0;
    for (let run = 0; run < 1000 && sent < SUBSCRIPTIONS * DRAIN; run++) sent += (await deliverDue(scope)).delivered;
    const seconds = (performance.now() - started) / 1000;
    if (count() - before < SUBSCRIPTIONS * DRAIN) throw new ScenarioError(`drain: ${count() - before} received`);
    return { deliveries: sent, seconds };
  } finally {
    t.close();
  }
}

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

/** LOGINS logins over CONNECTIONS workers; their latencies, sorted. */
async function burst(base: string): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < LOGINS; i = next++) {
      const s = performance.now();
      const res = await fetch(`${base}/v3/login_without_session`, {
        method: 'POST',
        headers: { Authorization: basic(seededLogin((i % 200) + 1), PASSWORD) },
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new ScenarioError(`login ${i}: ${res.status}`);
      latencies.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return latencies.sort((a, b) => a - b);
}

export async function webhooks(
  _config: BenchConfig,
  adminPassword: string,
  register: Register,
): Promise<ScenarioResult> {
  let received = 0;
  let lastAt = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      lastAt = performance.now();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const host = await startBenchNodeHost({
    ...benchServiceEnv(adminPassword),
    ...ONE_ADDRESS_ENV,
    AUTH_WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
    AUTH_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
  });
  const stop = register(host.stop);
  try {
    seedAccounts(host.dbFile, 200, { passwordHash: await createNodeNativeHasher().hash(PASSWORD), now: Date.now() });
    const without = await burst(host.base);
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const res = await fetch(`${host.base}/v4/webhooks`, {
        method: 'POST',
        headers: { Authorization: basic(ADMIN_LOGIN, adminPassword), 'Content-Type': 'application/json' },
        body: JSON.stringify({ url, eventTypes: ['user_activity.*'] }),
      });
      if (res.status !== 201) throw new ScenarioError(`POST /v4/webhooks: ${res.status} ${await res.text()}`);
    }
    const started = performance.now();
    const withHooks = await burst(host.base);
    const expected = SUBSCRIPTIONS * LOGINS;
    const deadline = Date.now() + 120_000;
    while (received < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (received < expected) throw new ScenarioError(`only ${received} of ${expected} deliveries within 120 s`);
    const seconds = (lastAt - started) / 1000;
    const asTheyCame = received;
    const drained = await drain(url, () => received);
    const drainRate = drained.deliveries / drained.seconds;
    const p99Without = percentile(without, 99);
    const p99With = percentile(withHooks, 99);
    const ratio = p99With / p99Without;
    return {
      scenario: 'webhooks',
      status: 'ok',
      message:
        `${LOGINS} logins, ${CONNECTIONS} at once: p99 ${round(p99Without)} ms without subscriptions, ` +
        `${round(p99With)} ms with ${SUBSCRIPTIONS} (x${round(ratio)}; target <= x1.1 ` +
        `${ratio <= 1.1 ? 'met' : 'MISSED'}); ` +
        `${asTheyCame} deliveries in ${round(seconds)} s as the logins came (${round(asTheyCame / seconds)}/s); ` +
        `a backlog of ${drained.deliveries}: ${round(drainRate)} deliveries/s`,
      p50Ms: round(median(withHooks)),
      p99Ms: round(p99With),
      details: {
        p50WithoutMs: round(median(without)),
        p99WithoutMs: round(p99Without),
        p99Ratio: round(ratio),
        deliveries: asTheyCame,
        deliveriesPerSec: round(asTheyCame / seconds),
        backlogDeliveriesPerSec: round(drainRate),
        targets: { webhookLoginP99: ratio <= 1.1 },
      },
    };
  } finally {
    await stop();
    await new Promise((r) => receiver.close(r));
  }
}

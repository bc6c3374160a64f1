/**
 * `npm run bench:logstore`: the audit trail's path to the log store, measured (not a test). The
 * store is the TEST LOG STORE (test/harness/logstore: a protocol-level stand-in; no OpenSearch or
 * Elasticsearch can be installed here), so the figures are the service's and the bridge's cost, not
 * a real store's indexing.
 *
 * 1. Shipping: LOGSTORE_BENCH_EVENTS (5,000) outbox events shipped by the real shipper through the
 *    real bridge over mutual TLS (@opensearch-project/opensearch, `_bulk` create), at
 *    OUTBOX_BATCH_SIZE 20 and 200: events per second from the first batch to an empty outbox.
 * 2. The search proxy: LOGSTORE_BENCH_QUERIES (200) sequential identical searches, straight to the
 *    test store over HTTPS vs `POST /v3/logs/user_activity/search` on the Node host (→ bridge over
 *    mTLS → store): p50 and p99 of each, and the p50 the proxy adds.
 */
import { isNull } from 'drizzle-orm';
import { Agent, fetch } from 'undici';
import { auditOutbox } from '../../schema/index.js';
import { auditInsert } from '../../worker/src/audit/events.js';
import { createBridgeClient } from '../../worker/src/bridge/client.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { shipOutbox } from '../../worker/src/logs/shipper.js';
import { nodeBridgeTransport } from '../../worker/node/bridge-transport.js';
import { createTestApp } from '../../test/harness/app.js';
import { startTestBridge } from '../../test/harness/bridge.js';
import { ADMIN, basic } from '../../test/harness/client.js';
import { startNodeTestHost } from '../../test/harness/hosts.js';
import { startTestLogStore } from '../../test/harness/logstore/server.js';

const EVENTS = Number(process.env.LOGSTORE_BENCH_EVENTS ?? 5000);
const QUERIES = Number(process.env.LOGSTORE_BENCH_QUERIES ?? 200);

const store = await startTestLogStore({ nodes: 2 });
const bridge = await startTestBridge({ logstore: { ca: store.caPem } });

async function ship(batch: number): Promise<{ batch: number; events: number; seconds: number; perSecond: number }> {
  const t = await createTestApp();
  store.reset();
  try {
    const env = {
      ...bridge.env,
      LOGSTORE_URLS: store.urls.join(';'),
      LOGSTORE_VERIFY_CERTS: 'True',
      OUTBOX_BATCH_SIZE: String(batch),
    };
    const config = parseEnvironment(env);
    const client = createBridgeClient(nodeBridgeTransport(config)!);
    await t.db.delete(auditOutbox);
    const now = Date.now();
    const inserts = Array.from({ length: EVENTS }, (_, i) =>
      auditInsert(t.db, now + i, {
        stream: i % 2 ? 'user_activity' : 'api_access',
        type: i % 2 ? 'login.success' : 'api.request',
        subject: { id: `u${i % 97}`, login: `user${i % 97}` },
        request: { id: crypto.randomUUID(), ip: '10.0.0.1', userAgent: 'bench', host: 'bench' },
        data: { i },
      }),
    );
    for (let i = 0; i < inserts.length; i += 500)
      await t.db.batch(inserts.slice(i, i + 500) as [(typeof inserts)[0], ...typeof inserts]);
    const started = performance.now();
    for (let round = 0; round < 1000; round++) {
      await shipOutbox({ db: t.db, config, bridge: client, now: () => Date.now() });
      if (
        (await t.db.select({ id: auditOutbox.id }).from(auditOutbox).where(isNull(auditOutbox.shippedAt)).limit(1))
          .length === 0
      )
        break;
    }
    const seconds = (performance.now() - started) / 1000;
    if (store.documents('*').length !== EVENTS) throw new Error(`shipped ${store.documents('*').length} of ${EVENTS}`);
    return { batch, events: EVENTS, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(EVENTS / seconds) };
  } finally {
    t.close();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function proxy(): Promise<Record<string, number>> {
  store.reset();
  store.seed(
    'svc-sec-user-activity-2026.11.26',
    Array.from({ length: 500 }, (_, i) => ({
      '@timestamp': '2026-11-26T10:00:00.000Z',
      event: { id: `e${i}`, type: 'login.success', outcome: 'success' },
      subject: { login: `user${i % 20}` },
    })),
  );
  const host = await startNodeTestHost({
    ...bridge.env,
    LOGSTORE_VERIFY_CERTS: 'True',
    OUTBOX_CONTEXT_DETACH: 'False',
    IN_APP_SCHEDULER_ENABLED: 'False',
    AUTH_ACCESS_LOG_LEVEL: 'ERROR',
  });
  const agent = new Agent({ connect: { ca: store.caPem } });
  try {
    const admin = basic(ADMIN.login, ADMIN.password);
    const headers = { Authorization: admin, 'Content-Type': 'application/json' };
    const patched = await fetch(`${host.url}/v3/settings`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ values: { LOGSTORE_URLS: store.urls.join(';') } }),
    });
    if (patched.status !== 200) throw new Error(`settings: ${patched.status}`);
    // A token for the proxy: a Basic login would add an argon2 verification to every request.
    const token = (await (
      await fetch(`${host.url}/v4/users/me/tokens`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'bench' }),
      })
    ).json()) as { token: string };
    const body = JSON.stringify({ query: { term: { 'subject.login': 'user7' } }, size: 10 });
    const direct: number[] = [];
    const proxied: number[] = [];
    for (let i = 0; i < QUERIES + 20; i++) {
      let t0 = performance.now();
      const a = await fetch(`${store.urls[0]}/svc-sec-user-activity-*/_search`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body,
      });
      await a.arrayBuffer();
      if (i >= 20) direct.push(performance.now() - t0);
      t0 = performance.now();
      const b = await fetch(`${host.url}/v3/logs/user_activity/search`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token.token}`, 'Content-Type': 'application/json' },
        body,
      });
      await b.arrayBuffer();
      if (b.status !== 200) throw new Error(`proxy answered ${b.status}`);
      if (i >= 20) proxied.push(performance.now() - t0);
    }
    direct.sort((x, y) => x - y);
    proxied.sort((x, y) => x - y);
    const ms = (v: number) => Number(v.toFixed(2));
    return {
      directP50Ms: ms(percentile(direct, 50)),
      directP99Ms: ms(percentile(direct, 99)),
      proxyP50Ms: ms(percentile(proxied, 50)),
      proxyP99Ms: ms(percentile(proxied, 99)),
      addedP50Ms: ms(percentile(proxied, 50) - percentile(direct, 50)),
    };
  } finally {
    await agent.close();
    await host.stop();
  }
}

try {
  const shipping = [await ship(20), await ship(200)];
  console.table(shipping);
  const search = await proxy();
  console.table([search]);
  console.log(JSON.stringify({ shipping, search }));
} finally {
  await bridge.stop();
  await store.stop();
}

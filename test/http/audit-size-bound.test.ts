/**
 * The size bound of the embedded audit log on both hosts (docs/audit-logs-embedded.md, "Size bound"):
 * events past AUDIT_LOCAL_MAX_MB are trimmed oldest first by the job bound-audit-store, the trim is
 * an `outbox.trimmed` event an auditor finds in the data-lifecycle log, and GET /metrics and the admin
 * overview show the store's size and warn from 80 % of the bound.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { parseExposition, sampleValue } from '../harness/prometheus.js';

const kind = inject('hostKind');
const TOKEN = 'metrics-scrape-token-size-bound-0123456789';
const admin = basic(ADMIN.login, ADMIN.password);
const MB = 1024 * 1024;
let host: RunningHost;

const api = <T = Record<string, unknown>>(path: string, o: Parameters<typeof callJson>[1] = {}) =>
  callJson<T>(path, { base: host.url, ...o });

async function scrape() {
  const res = await fetch(`${host.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const families = parseExposition(text);
  return (name: string, labels: Record<string, string> = {}) => sampleValue(families, name, labels);
}

beforeAll(async () => {
  host = await startTestHost(kind, {
    AUTH_METRICS_TOKEN: TOKEN,
    AUTH_AUDIT_LOCAL_MAX_MB: '1',
    IN_APP_SCHEDULER_ENABLED: 'False',
    OUTBOX_CONTEXT_DETACH: 'False',
  });
}, 120_000);
afterAll(() => host?.stop());

describe(`the embedded audit log's size bound (${kind} host)`, () => {
  it('past AUDIT_LOCAL_MAX_MB the oldest go, the trim is logged, metrics and overview show the size', async () => {
    const now = Date.now();
    // About 1.5 MB of failed logins, an hour old, oldest first (each with a 10 KB login as given).
    const events = Array.from({ length: 150 }, (_, i) => ({
      id: `bound-${String(i).padStart(4, '0')}`,
      at: now - 3_600_000 + i * 1_000,
      stream: 'user_activity',
      type: 'login.failure',
      outcome: 'failure',
      subjectLogin: `${i}-${'x'.repeat(10_000)}`,
    }));
    // In bodies under AUTH_MAX_BODY_SIZE (64 KiB).
    for (let i = 0; i < events.length; i += 5) {
      const seeded = await api('/__test__/audit-events', { method: 'POST', json: { events: events.slice(i, i + 5) } });
      expect(seeded.status, JSON.stringify(seeded.body)).toBe(200);
    }

    const ran = await api('/__test__/jobs', { method: 'POST', json: { names: ['bound-audit-store'] } });
    expect(ran.status, JSON.stringify(ran.body)).toBe(200);

    // The oldest went, the newest stayed: the embedded audit log answers with what is left.
    const failures = await api<{ items: Array<{ event: { id: string } }>; total: number }>(
      '/v3/logs/user_activity/events?type=login.failure&size=500',
      { auth: admin },
    );
    expect(failures.status, JSON.stringify(failures.body)).toBe(200);
    const left = failures.body.items.map((e) => e.event.id).filter((id) => id.startsWith('bound-'));
    expect(left.length).toBeGreaterThan(50);
    expect(left.length).toBeLessThan(100);
    expect(left).toContain('bound-0149');
    expect(left).not.toContain('bound-0000');

    // An auditor finds the trim, with what it deleted.
    const lifecycle = await api<{ items: Array<{ event: { type: string }; data: Record<string, unknown> }> }>(
      '/v3/logs/data_lifecycle/events?type=outbox.trimmed',
      { auth: admin },
    );
    expect(lifecycle.status).toBe(200);
    expect(lifecycle.body.items).toHaveLength(1);
    expect(lifecycle.body.items[0]!.data).toMatchObject({
      events: 150 - left.length,
      maxMB: 1,
      store: 'local',
      from: new Date(events[0]!.at).toISOString(),
    });

    const metric = await scrape();
    const bytes = metric('auth_audit_store_bytes', { store: 'local' })!;
    expect(metric('auth_audit_store_max_bytes', { store: 'local' })).toBe(MB);
    expect(bytes).toBeGreaterThan(0.8 * MB);
    expect(bytes).toBeLessThanOrEqual(0.9 * MB);
    expect(metric('auth_audit_store_near_limit', { store: 'local' })).toBe(1);
    expect(metric('auth_outbox_bytes')).toBeGreaterThanOrEqual(bytes);
    if (kind === 'node') {
      expect(metric('auth_database_bytes')).toBeGreaterThan(bytes);
      // A new embedded file vacuums incrementally: the ~0.6 MB trimmed went back to the file system.
      expect(metric('auth_database_free_bytes')).toBeLessThan(0.2 * MB);
    }

    const overview = await api<{ logStore: { state: string; size: Record<string, unknown> } }>('/v4/admin/overview', {
      auth: admin,
    });
    expect(overview.status).toBe(200);
    expect(overview.body.logStore).toMatchObject({
      state: 'embedded',
      size: { store: 'local', bytes, maxBytes: MB, warning: true },
    });
    expect(overview.body.logStore.size.percent).toBeGreaterThanOrEqual(80);
  });
});

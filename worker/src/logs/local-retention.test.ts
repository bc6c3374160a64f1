import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness/app.js';
import { auditOutbox } from '../../../schema/index.js';
import { parseEnvironment } from '../config/index.js';
import { createLogger } from '../http/logger.js';
import { LOCAL_PURGE_BATCH, purgeLocalAuditLog } from './jobs.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-27T00:00:00Z');
const logger = createLogger({ threshold: () => 'CRITICAL', write: () => {} });

describe('the embedded audit log: retention (AUDIT_LOCAL_RETENTION_DAYS)', () => {
  it('deletes older events in batches, keeps newer and unhandled ones, says so; not with a log store', async () => {
    const old = Array.from({ length: LOCAL_PURGE_BATCH + 5 }, (_, i) => ({
      id: `old-${i}`,
      at: NOW - 31 * DAY - i,
      stream: 'user_activity',
      type: 'login.failure',
      handledAt: NOW - 31 * DAY,
    }));
    const kept = [
      { id: 'recent', at: NOW - 29 * DAY, stream: 'user_activity', type: 'login.failure', handledAt: NOW },
      { id: 'unhandled', at: NOW - 40 * DAY, stream: 'user_activity', type: 'login.failure', handledAt: null },
    ];
    for (let i = 0; i < old.length; i += 200) await t.db.insert(auditOutbox).values(old.slice(i, i + 200));
    await t.db.insert(auditOutbox).values(kept);

    const withStore = parseEnvironment({ LOGSTORE_URLS: 'https://store.example:9200' });
    expect(await purgeLocalAuditLog.run({ db: t.db, config: withStore, now: () => NOW, logger })).toEqual({
      purged: 0,
    });

    const config = parseEnvironment({});
    expect(await purgeLocalAuditLog.run({ db: t.db, config, now: () => NOW, logger })).toEqual({ purged: old.length });
    const left = await t.db.select({ id: auditOutbox.id }).from(auditOutbox);
    expect(left.map((r) => r.id).filter((id) => id.startsWith('old-'))).toEqual([]);
    expect(left.map((r) => r.id)).toEqual(expect.arrayContaining(['recent', 'unhandled']));
    const [said] = await t.db.select().from(auditOutbox).where(eq(auditOutbox.type, 'outbox.purged'));
    expect(said?.data).toEqual({ events: old.length, retentionDays: 30, store: 'local' });
  });
});

/**
 * The request scope (worker/src/http/scope.ts): what domain code gets of a request. An audit event
 * written during a request carries its id, the client's address, User-Agent and the instance; and
 * domain code runs on a plain scope, with no HTTP at all.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOutbox, users } from '../../schema/index.js';
import { outboxEvents } from '../../worker/src/audit/api-access.js';
import { parseEnvironment } from '../../worker/src/config/index.js';
import { recordLogin } from '../../worker/src/users/external.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { ADMIN, basic } from '../harness/client.js';
import { testScope } from '../harness/scope.js';

let t: TestApp;
beforeAll(async () => {
  // As on the edge host: the client's address is what the host reports.
  t = await createTestApp({}, { clientAddress: () => '203.0.113.44' });
});
afterAll(() => t.close());

const eventsOf = (type: string, requestId: string) =>
  t.db
    .select()
    .from(auditOutbox)
    .where(and(eq(auditOutbox.type, type), eq(auditOutbox.requestId, requestId)));

describe('request scope', () => {
  it('an audit event written during a request carries its id, client address, User-Agent and instance', async () => {
    const login = (auth: string) =>
      t.app.request('/api/auth/v3/login_without_session', {
        method: 'POST',
        headers: { Authorization: auth, 'User-Agent': 'scope-test/2', 'X-Request-Id': 'caller-id-1' },
      });
    const ok = await login(basic(ADMIN.login, ADMIN.password));
    const bad = await login(basic(ADMIN.login, 'Wr0ng$pass'));
    expect([ok.status, bad.status]).toEqual([200, 401]);
    const [success] = await eventsOf('login.success', ok.headers.get('X-Request-Id')!);
    const client = { sourceIp: '203.0.113.44', userAgent: 'scope-test/2', host: 'test-host' };
    expect(success).toMatchObject({ ...client, outcome: 'success' });
    // The caller's own X-Request-Id goes to the logs, never into the audit trail.
    expect(JSON.stringify(success)).not.toContain('caller-id-1');
    const [failure] = await eventsOf('login.failure', bad.headers.get('X-Request-Id')!);
    expect(failure).toMatchObject({ ...client, outcome: 'failure' });
  });

  it('domain code runs on a plain scope, without HTTP', async () => {
    const [user] = await t.db.select().from(users).where(eq(users.login, ADMIN.login));
    const request = { id: 'req-plain', ip: '192.0.2.8', userAgent: 'unit', host: 'unit-host' };
    const scope = testScope(t.db, parseEnvironment({}), { now: 1_800_000_000_000, request });
    const after = await recordLogin(scope, user!, { source: 'ldap', sourceName: 'corp' });
    expect(after.lastLoginAt).toBe(1_800_000_000_000);
    const [event] = await eventsOf('login.success', 'req-plain');
    const meta = { sourceIp: '192.0.2.8', userAgent: 'unit', host: 'unit-host' };
    expect(event).toMatchObject({ at: 1_800_000_000_000, ...meta, outcome: 'success' });
    expect(event!.data).toEqual({ source: 'ldap', server: 'corp' });
  });

  it('API-access events wait in memory until the host flushes them', async () => {
    const headers = { Authorization: basic(ADMIN.login, ADMIN.password) };
    const res = await t.app.request('/api/auth/v4/users/me', { headers });
    expect(res.status).toBe(200);
    const id = res.headers.get('X-Request-Id')!;
    const apiAccess = async () =>
      (await t.db.select().from(auditOutbox).where(eq(auditOutbox.stream, 'api_access')))
        .flatMap(outboxEvents)
        .filter((e) => e.requestId === id);
    expect(await apiAccess()).toEqual([]);
    await t.service.apiAccess.flush();
    const [event] = await apiAccess();
    const recorded = { stream: 'api_access', actorLogin: ADMIN.login, sourceIp: '203.0.113.44', host: 'test-host' };
    expect(event).toMatchObject(recorded);
  });
});

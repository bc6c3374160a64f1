/**
 * A fresh install's overview (docs/console.md, "The overview"): the first administrator, created without
 * an e-mail address, gets its "account created" mail recorded as given up, "the account has no e-mail
 * address"; that is no delivery failure, so the overview counts and lists no mail given up.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const admin = basic(ADMIN.login, ADMIN.password);
let host: RunningHost;
const api = <T = Record<string, any>>(path: string, o: Call = {}) => callJson<T>(path, { base: host.url, ...o });

beforeAll(async () => {
  host = await startTestHost(kind, {});
}, 180_000);
afterAll(async () => {
  await host?.stop();
});

describe('a fresh install opens without a mail failure', () => {
  it("the first administrator's mail without an address is recorded, and not a failure on the overview", async () => {
    // The notification of the administrator's creation, made by the jobs from its event.
    await expect
      .poll(
        async () => {
          // A request that writes an event runs the event handler after its answer (notifications/kick.ts):
          // on the edge, whose Cron Trigger wrangler dev does not fire, nothing else would make the notification.
          await api('/v3/login', { method: 'POST', json: { login: 'nobody-here', password: 'Wr0ng$pass' } });
          const r = await api<{ items: Array<Record<string, any>> }>('/v4/notifications?limit=100', { auth: admin });
          return r.body.items.filter((n) => n.userLogin === ADMIN.login).map((n) => [n.status, n.lastError]);
        },
        { timeout: 30_000 },
      )
      .toContainEqual(['given_up', 'the account has no e-mail address']);
    const overview = await api<{
      last24h: { mailGivenUp: number };
      now: { mailFailing: number; mailFailures: unknown[] };
    }>('/v4/admin/overview', { auth: admin });
    expect(overview.status, JSON.stringify(overview.body)).toBe(200);
    expect(overview.body.last24h.mailGivenUp).toBe(0);
    expect(overview.body.now.mailFailures).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { auditInsert } from '../audit/events.js';
import { createTestApp } from '../../../test/harness/app.js';
import { countLockedAttempt, countLoginEvent, httpDuration, httpRequests, logins, recordRequest } from './process.js';

describe('login counters', () => {
  it('count login events by the source of their data and the outcome of their type; other events not', () => {
    const before = (m: string, o: string) => logins.get([m, o]);
    const cases: Array<[string, Record<string, unknown> | undefined, string, string]> = [
      ['login.success', { source: 'oidc', provider: 'corp' }, 'oidc', 'success'],
      ['login.failure', { source: 'ldap', server: 'ad' }, 'ldap', 'failure'],
      ['login.refused', { source: 'local', reason: 'blocked:admin' }, 'local', 'refused'],
      ['login.password_expired', undefined, 'other', 'password_expired'],
      ['login.success', { source: 'attacker-chosen' }, 'other', 'success'],
    ];
    for (const [type, data, method, outcome] of cases) {
      const n = before(method, outcome);
      countLoginEvent(type, data);
      expect(logins.get([method, outcome]), `${type} ${method}`).toBe(n + 1);
    }
    const rendered = logins.render();
    countLoginEvent('logout', { source: 'local' });
    countLoginEvent('account.locked', { source: 'local' });
    expect(logins.render()).toBe(rendered);
  });

  it('a locked attempt is counted by the method of its throttle key', () => {
    const ldap = logins.get(['ldap', 'locked']);
    const local = logins.get(['local', 'locked']);
    countLockedAttempt('ldap:corp:alice');
    countLockedAttempt('local:bob');
    expect(logins.get(['ldap', 'locked'])).toBe(ldap + 1);
    expect(logins.get(['local', 'locked'])).toBe(local + 1);
  });

  it('building a login audit event counts it (the one place every login path goes through)', async () => {
    const t = await createTestApp();
    try {
      const n = logins.get(['ldap', 'success']);
      await auditInsert(t.db, 1, {
        stream: 'user_activity',
        type: 'login.success',
        subjectLogin: 'x',
        data: { source: 'ldap' },
      });
      expect(logins.get(['ldap', 'success'])).toBe(n + 1);
    } finally {
      await t.close();
    }
  });
});

describe('request counters', () => {
  it('count by method, route and status, observe the latency, and fold non-standard methods into other', () => {
    recordRequest('GET', '/t/:id', 200, 0.004);
    recordRequest('GET', '/t/:id', 200, 0.2);
    recordRequest('GET', '/t/:id', 404, 0.001);
    for (const m of ['BREW', 'X-ANY', 'get']) recordRequest(m, '/t/:id', 405, 0.001);
    expect(httpRequests.get(['GET', '/t/:id', '200'])).toBe(2);
    expect(httpRequests.get(['GET', '/t/:id', '404'])).toBe(1);
    expect(httpRequests.get(['other', '/t/:id', '405'])).toBe(3);
    expect(httpDuration.count(['GET', '/t/:id'])).toBe(3);
    expect(httpRequests.render()).not.toMatch(/BREW|X-ANY|"get"/);
    expect(httpDuration.render()).toContain(
      'auth_http_request_duration_seconds_bucket{method="GET",route="/t/:id",le="0.005"} 2',
    );
  });
});

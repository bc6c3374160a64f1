import { describe, expect, it } from 'vitest';
import { search, type StoredDoc } from '../../../test/harness/logstore/query.js';
import { checkSearchBody } from './dsl-guard.js';
import { SIMPLE_SORT, simpleQuery } from './simple-query.js';
import { datedIndex, isStream, STREAMS } from './streams.js';

const event = (
  id: string,
  at: string,
  o: { actor?: string; subject?: string; ip?: string; outcome?: string; type: string },
) => ({
  '@timestamp': at,
  event: { id, type: o.type, outcome: o.outcome ?? 'success' },
  ...(o.actor ? { actor: { login: o.actor } } : {}),
  ...(o.subject ? { subject: { login: o.subject } } : {}),
  ...(o.ip ? { source: { ip: o.ip } } : {}),
});
const docs: StoredDoc[] = [
  event('e1', '2026-11-24T10:00:00.000Z', {
    subject: 'alice',
    ip: '10.0.0.1',
    outcome: 'failure',
    type: 'login.failed',
  }),
  event('e2', '2026-11-25T10:00:00.000Z', { actor: 'alice', ip: '10.0.0.2', type: 'token.issued' }),
  event('e3', '2026-11-25T10:00:00.000Z', { actor: 'admin', subject: 'bob', ip: '10.0.0.1', type: 'account.blocked' }),
  event('e4', '2026-11-26T10:00:00.000Z', {
    subject: 'Alice2',
    ip: '10.0.0.1',
    outcome: 'failure',
    type: 'login.failed',
  }),
].map((source, seq) => ({ index: 'svc-x-1', id: String(source.event.id), source, seq }));

const run = (form: Parameters<typeof simpleQuery>[0]) => {
  const body = { query: simpleQuery(form), sort: SIMPLE_SORT, size: 100 };
  expect(checkSearchBody(body)).toEqual([]);
  return (search(docs, body) as { hits: { hits: Array<{ _id: string }> } }).hits.hits.map((h) => h._id);
};

describe('simpleQuery', () => {
  it('finds events by user (actor or subject), ip, outcome, type and time range; newest first', () => {
    expect(run({})).toEqual(['e4', 'e3', 'e2', 'e1']);
    expect(run({ user: 'alice' })).toEqual(['e2', 'e1']);
    expect(run({ ip: '10.0.0.1' })).toEqual(['e4', 'e3', 'e1']);
    expect(run({ outcome: 'failure', ip: '10.0.0.1' })).toEqual(['e4', 'e1']);
    expect(run({ types: ['token.issued', 'account.blocked'] })).toEqual(['e3', 'e2']);
    expect(run({ from: '2026-11-25T00:00:00.000Z', to: '2026-11-26T00:00:00.000Z' })).toEqual(['e3', 'e2']);
  });
});

describe('streams', () => {
  it('derive the dated index from the event time (UTC day) under the pattern', () => {
    const at = Date.parse('2026-11-26T23:59:59.999Z');
    expect(datedIndex('svc-sec-api-access-*', at)).toBe('svc-sec-api-access-2026.11.26');
    expect(datedIndex('svc-sec-api-access-*', at + 1)).toBe('svc-sec-api-access-2026.11.27');
    expect(datedIndex('audit-*-x', at)).toBe('audit-2026.11.26-x');
    expect(datedIndex('audit', at)).toBe('audit-2026.11.26');
  });

  it('are the six AUDIT_* patterns; nothing else is a log type', () => {
    expect(
      Object.values(STREAMS)
        .map((s) => s.variable)
        .sort(),
    ).toEqual([
      'AUDIT_API_ACCESS_PATTERN',
      'AUDIT_CRUD_ADMIN_LOGS_PATTERN',
      'AUDIT_CRUD_USER_LOGS_PATTERN',
      'AUDIT_DATA_LIFECYCLE_PATTERN',
      'AUDIT_EXT_SERVICE_ACCESS_PATTERN',
      'AUDIT_USER_ACTIVITY_PATTERN',
    ]);
    for (const name of ['user_activity', 'api_access']) expect(isStream(name)).toBe(true);
    for (const name of ['*', '_all', 'toString', '__proto__', '..', 'user_activity,crud_admin'])
      expect(isStream(name)).toBe(false);
  });
});

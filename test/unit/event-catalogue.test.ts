/**
 * The catalogue of audit event types (worker/src/audit/catalogue.ts) is the one source: the table of
 * docs/events.md is generated from it, outcomes agree with the rule of events.ts, every type the
 * code writes (typed inserts, the raw SQL of API-access events, the handlers' types) is in it with the
 * stream it is written to, and the external-service helpers keep secrets out.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOutbox } from '../../schema/index.js';
import {
  EVENT_CATALOGUE,
  eventTypesOf,
  type AuditStream,
  type EventTypeSpec,
} from '../../worker/src/audit/catalogue.js';
import { auditInsert, outcomeOfType } from '../../worker/src/audit/events.js';
import { errorClassOf, maskAddress, statusClass } from '../../worker/src/audit/ext-service.js';
import { HANDLED_EVENT_TYPES } from '../../worker/src/audit/handled-types.js';
import { ProblemError } from '../../worker/src/http/problem.js';
import { CATALOGUE_SECTION } from '../../worker/src/logs/log-api-words.js';
import { STREAMS } from '../../worker/src/logs/streams.js';
import { END, renderEventTable, START } from '../../scripts/event-catalogue-doc.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { ADMIN, basic } from '../harness/client.js';

const root = new URL('../../', import.meta.url);
const catalogue = EVENT_CATALOGUE as Record<string, EventTypeSpec>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the event catalogue', () => {
  it('is the type of auditInsert: an uncatalogued type does not typecheck (npx tsc --noEmit)', () => {
    // Never called: the check is the compiler's (an unused @ts-expect-error is an error too).
    const write = (t: TestApp) =>
      // @ts-expect-error 'no.such_event' is not in the catalogue
      auditInsert(t.db, 0, { stream: 'crud_admin', type: 'no.such_event' });
    expect(write).toBeTypeOf('function');
  });

  it('docs/events.md holds the table generated from it (npm run docs:events)', () => {
    const doc = readFileSync(new URL('docs/events.md', root), 'utf8');
    const a = doc.indexOf(START);
    const b = doc.indexOf(END);
    expect(a, 'the markers are in events.md').toBeGreaterThan(0);
    expect(doc.slice(a, b + END.length)).toBe(renderEventTable());
    for (const type of Object.keys(catalogue)) expect(doc).toContain(`| \`${type}\` |`);
  });

  it('outcomes agree with outcomeOfType; types that set their own outcome have both; streams exist', () => {
    for (const [type, spec] of Object.entries(catalogue)) {
      expect(spec.streams.length, type).toBeGreaterThan(0);
      for (const s of spec.streams) expect(Object.keys(STREAMS), type).toContain(s);
      expect(spec.description.length, type).toBeGreaterThan(10);
      if (spec.outcomes.length === 1) expect(outcomeOfType(type) ?? 'unknown', type).toBe(spec.outcomes[0]);
      else expect(spec.outcomes, type).toEqual(['success', 'failure']);
    }
    expect(eventTypesOf('ext_service_access')).toEqual([
      'service.access',
      'ldap.authenticate',
      'ldap.test',
      'oidc.token_exchange',
      'mail.send',
    ]);
    for (const stream of Object.keys(STREAMS) as AuditStream[])
      expect(eventTypesOf(stream).length, stream).toBeGreaterThan(0);
  });

  it('the types the handlers read and the raw SQL inserts of audit_outbox are catalogued with their stream', () => {
    // (The API-access batches are written through drizzle, their stream and type checked by the
    // typecheck: api-access.ts declares them as catalogue names.)
    for (const type of HANDLED_EVENT_TYPES) expect(catalogue[type], type).toBeDefined();
    for (const file of sourceFiles(new URL('worker/src', root).pathname)) {
      const text = readFileSync(file, 'utf8');
      if (!text.includes('insert into "audit_outbox"')) continue;
      for (const m of text.matchAll(/'([a-z_]+)', '([a-z_]+\.[a-z_]+)'/g)) {
        expect(catalogue[m[2]!]?.streams, `${file}: ${m[2]}`).toContain(m[1]);
      }
    }
  });

  it("the logs endpoints' descriptions carry every type", () => {
    for (const type of Object.keys(catalogue)) expect(CATALOGUE_SECTION).toContain(`\`${type}\``);
  });

  it('external-service helpers: masked recipients, error classes without text, status classes', () => {
    expect(maskAddress('jane.doe@example.com')).toBe('j***@example.com');
    expect(maskAddress('nobody')).toBe('***');
    const bridge = new ProblemError('BAD_GATEWAY', {
      detail: 'ldaps://10.0.0.5 refused',
      extensions: { cause: 'DIRECTORY_UNAVAILABLE' },
    });
    expect(errorClassOf(bridge)).toBe('DIRECTORY_UNAVAILABLE');
    expect(errorClassOf(new ProblemError('GATEWAY_TIMEOUT', { detail: 'x' }))).toBe('BRIDGE_TIMEOUT');
    expect(errorClassOf(new ProblemError('SERVICE_UNAVAILABLE', { detail: 'x' }))).toBe('BRIDGE_UNAVAILABLE');
    expect(
      errorClassOf(new ProblemError('BAD_GATEWAY', { detail: 'x', extensions: { cause: 'secret text here' } })),
    ).toBe('BAD_GATEWAY');
    expect(errorClassOf(new Error('boom'))).toBe('ERROR');
    expect(statusClass(201)).toBe('2xx');
    expect(statusClass(400)).toBe('4xx');
  });
});

describe('what the service writes is catalogued (in-process run)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('every event written by a run of logins, changes and API requests has a catalogued type and stream', async () => {
    const admin = basic(ADMIN.login, ADMIN.password);
    const req = (path: string, auth: string, init: RequestInit = {}) =>
      t.app.request(`/api/auth${path}`, {
        ...init,
        headers: { Authorization: auth, 'Content-Type': 'application/json' },
      });
    expect(
      (
        await req('/v4/users', admin, {
          method: 'POST',
          body: JSON.stringify({ login: 'cat', password: 'Str0ng$pass' }),
        })
      ).status,
    ).toBe(201);
    expect((await req('/v3/login_without_session', basic('cat', 'Wr0ng$pass'), { method: 'POST' })).status).toBe(401);
    expect((await req('/v3/login_without_session', basic('cat', 'Str0ng$pass'), { method: 'POST' })).status).toBe(200);
    expect(
      (await req('/v4/users/me/tokens', basic('cat', 'Str0ng$pass'), { method: 'POST', body: '{"name":"n"}' })).status,
    ).toBe(201);
    await t.service.apiAccess.flush();
    const rows = await t.db.select({ stream: auditOutbox.stream, type: auditOutbox.type }).from(auditOutbox);
    expect(rows.map((r) => r.type)).toEqual(
      expect.arrayContaining(['user.created', 'login.failure', 'login.success', 'token.issued', 'api.request']),
    );
    for (const r of rows) expect(catalogue[r.type]?.streams, `${r.stream} ${r.type}`).toContain(r.stream);
  });
});

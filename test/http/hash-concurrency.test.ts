/**
 * The bound on concurrent password hashing, on each host: with one slot and no waiting place
 * (AUTH_PASSWORD_HASH_CONCURRENCY=1, AUTH_PASSWORD_HASH_QUEUE=0), a burst of parallel logins from
 * one address gets some 429 problems with Retry-After (that address's excess, never a 503), a burst
 * of first attempts from distinct addresses some 429 `capacity` (never a 503 that blames the
 * service: docs/security-admission.md), no 5xx, and neither is ever counted as a failed login. Its own host, so the
 * tiny bound and the failure count touch no other suite.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, callJson, uniqueLogin } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const kind = inject('hostKind');
const FAILED_COUNT = 20;
const BURST = 16;
let host: RunningHost;

beforeAll(async () => {
  host = await startTestHost(kind, {
    AUTH_PASSWORD_HASH_CONCURRENCY: '1',
    AUTH_PASSWORD_HASH_QUEUE: '0',
    AUTH_FAILED_COUNT: String(FAILED_COUNT),
  });
});
afterAll(async () => {
  await host?.stop();
});

const loginWithoutSession = (login: string, password: string, from?: string) =>
  callJson('/v3/login_without_session', { base: host.url, method: 'POST', auth: basic(login, password), from });

describe('password hashing bound', () => {
  it(
    'a burst of parallel logins from one address: some 429 with Retry-After, no 5xx, and the 429s are not ' +
      'counted as failures',
    async () => {
      const login = uniqueLogin('burst');
      const password = 'Burst$pass1';
      const auth = basic(ADMIN.login, ADMIN.password);
      const created = await callJson('/v4/users', { base: host.url, method: 'POST', auth, json: { login, password } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);

      const answers = await Promise.all(Array.from({ length: BURST }, () => loginWithoutSession(login, 'Wrong$pass1')));
      const busy = answers.filter((a) => a.status === 429);
      const refused = answers.filter((a) => a.status === 401);
      expect(busy.length + refused.length, JSON.stringify(answers.map((a) => a.status))).toBe(BURST);
      expect(busy.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      for (const a of busy) {
        expect(a.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(a.body).toMatchObject({ code: 'PASSWORD_CHECKS_THROTTLED' });
        expect(Number(a.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      for (const a of refused) expect(a.body.code).toBe('INVALID_CREDENTIALS');

      // Only the 401s were counted: FAILED_COUNT - 1 failures in all leave the account unlocked.
      for (let i = refused.length; i < FAILED_COUNT - 1; i++) {
        const again = await loginWithoutSession(login, 'Wrong$pass1');
        expect(again.body.code, `failure ${i + 1}`).toBe('INVALID_CREDENTIALS');
      }
      const right = await loginWithoutSession(login, password);
      expect(right.status, JSON.stringify(right.body)).toBe(200);
    },
  );

  it('first attempts of distinct addresses at once: some 429 `capacity` with Retry-After, never a 5xx', async () => {
    const addresses = Array.from({ length: BURST }, (_, i) => `127.0.1.${i + 1}`);
    const answers = await Promise.all(addresses.map((from) => loginWithoutSession(uniqueLogin('d'), 'Wrong$1', from)));
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s !== 401 && s !== 429),
      JSON.stringify(statuses),
    ).toEqual([]);
    const busy = answers.filter((a) => a.status === 429);
    expect(busy.length).toBeGreaterThan(0);
    for (const a of busy) {
      expect(a.body).toMatchObject({ code: 'PASSWORD_CHECKS_THROTTLED', reason: 'capacity' });
      expect(Number(a.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('sequential logins are never refused', async () => {
    for (let i = 0; i < 3; i++) expect((await loginWithoutSession(ADMIN.login, ADMIN.password)).status).toBe(200);
  });

  it(
    'the OpenAPI description documents the 429 `capacity` (and no hashing 503) on operations that ' + 'check passwords',
    async () => {
      type Op = { responses: Record<string, { description: string }> };
      const doc = (await (await fetch(`${host.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, Op>>;
      };
      const ops = [
        ['/v3/login', 'post'],
        ['/v3/login_without_session', 'post'],
        ['/v4/users/me/password', 'put'],
      ] as const;
      for (const [path, method] of ops) {
        const { responses } = doc.paths[path]![method]!;
        expect(responses['429']!.description, path).toContain('(capacity)');
        expect(responses['503']?.description ?? '', path).not.toContain('password checks');
      }
    },
  );
});

/**
 * The test hooks (worker/src/test-hooks.ts): every route of ROOT_PATH/__test__/* is declared in that
 * one module, and an app serves them only with AUTH_TEST_CLOCK_CONTROL true (the HTTP suites drive
 * them on both hosts; docs/testing.md, "Test hooks").
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';

const ROOT = join(import.meta.dirname, '../../worker/src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

const HOOKS = [
  ['GET', '/__test__/clock'],
  ['POST', '/__test__/clock'],
  ['POST', '/__test__/jobs'],
  ['POST', '/__test__/audit-events'],
  ['GET', '/__test__/credential-lookups'],
] as const;

let off: TestApp;
let on: TestApp;
beforeAll(async () => {
  off = await createTestApp();
  on = await createTestApp({ AUTH_TEST_CLOCK_CONTROL: 'True' });
});
afterAll(() => {
  off.close();
  on.close();
});

const send = (t: TestApp, method: string, path: string) =>
  t.app.request(`/api/auth${path}`, {
    method,
    ...(method === 'POST' ? { headers: { 'Content-Type': 'application/json' }, body: '{}' } : {}),
  });

describe('test hooks', () => {
  it('every /__test__/ route is declared in test-hooks.ts', () => {
    const declaring = sources(ROOT)
      .filter((path) => /\.(get|post|put|patch|delete|on|all)\(\s*'\/__test__\//.test(readFileSync(path, 'utf8')))
      .map((path) => relative(ROOT, path));
    expect(declaring).toEqual(['test-hooks.ts']);
  });

  it('are served only with AUTH_TEST_CLOCK_CONTROL true', async () => {
    for (const [method, path] of HOOKS)
      expect([method, path, (await send(off, method, path)).status]).toEqual([method, path, 404]);
    // On: each answers (a POST without its fields is a 422 naming what it expects).
    const statuses = await Promise.all(HOOKS.map(async ([method, path]) => (await send(on, method, path)).status));
    expect(statuses).toEqual([200, 422, 422, 422, 200]);
    const clock = await send(on, 'GET', '/__test__/clock');
    expect(await clock.json()).toMatchObject({ offsetMs: 0 });
  });
});

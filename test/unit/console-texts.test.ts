/**
 * The console's texts on the server (worker/src/pages/texts.ts): read from the built console's
 * `texts.json`, which scripts/build-console.mjs writes from every texts module (all-texts.ts), so the
 * edge script carries none (docs/performance.md, "The edge bundle").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { nodeStaticFiles } from '../../worker/node/static-files.js';
import type { StaticFiles } from '../../worker/src/http/context.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'static-'));
  execFileSync(process.execPath, ['scripts/build-console.mjs'], {
    env: { ...process.env, AUTH_STATIC_DIR: dir },
    stdio: 'ignore',
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** texts.ts as a process (isolate) that has read no texts yet: a module instance of its own. */
async function freshTexts() {
  vi.resetModules();
  return import('../../worker/src/pages/texts.js');
}

describe("the server's console texts", () => {
  it('are every texts module, in both languages', async () => {
    const built = JSON.parse(readFileSync(join(dir, 'console', 'texts.json'), 'utf8'));
    const { dictionaries } = await import('../../worker/src/pages/all-texts.js');
    expect(built).toEqual(dictionaries());
    expect(Object.keys(built.ru).sort()).toEqual(Object.keys(built.en).sort());
    for (const key of [
      'app.title',
      'users.title',
      'settings.title',
      'mailTest.title',
      'overview.title',
      'confirm.endAll',
    ])
      expect(Object.keys(built.en), key).toContain(key);
  });

  it('are none until read from the built console; a missing or foreign file is not the console', async () => {
    const { loadTexts, text } = await freshTexts();
    expect(text('en', 'app.title')).toBe('app.title');
    const missing: StaticFiles = async () => null;
    const foreign: StaticFiles = async () => new Response('<!doctype html><title>Not found</title>');
    const empty: StaticFiles = async () => Response.json({ en: {}, ru: {} });
    for (const files of [missing, foreign, empty]) expect(await loadTexts(files)).toBe(false);
    expect(text('en', 'app.title')).toBe('app.title');
    expect(await loadTexts(nodeStaticFiles(dir))).toBe(true);
    expect(text('en', 'app.title')).toBe('Account console');
    expect(text('ru', 'app.title')).toBe('Консоль учётной записи');
    expect(await loadTexts(missing)).toBe(true); // read once per process
  });
});

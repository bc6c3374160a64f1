import type { Context } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from './context.js';
import { safeRedirect } from './redirect.js';

const FALLBACK = 'http://localhost/';
const at = (url: string) => ({ req: { url } }) as unknown as Context<AppEnv>;
const redirect = (next: string) => safeRedirect(at('http://127.0.0.1:8001/api/auth/v3/login'), next, FALLBACK);

describe('safeRedirect', () => {
  it('keeps same-origin paths and front-end URLs', () => {
    expect(redirect('/api/auth/docs')).toBe('/api/auth/docs');
    expect(redirect('/a/../b?x=1#f')).toBe('/b?x=1#f');
    expect(redirect('/a//b')).toBe('/a//b');
    expect(redirect('http://localhost/app?x=1')).toBe('http://localhost/app?x=1');
  });

  it('refuses what resolves to another host: dot segments, backslashes, stripped characters, encodings', () => {
    const shapes = [
      '/..//evil.test/phish',
      '/.//evil.test/phish',
      '/%2e%2e//evil.test/phish',
      '/%2E%2e//evil.test/phish',
      '/.%2e//evil.test/phish',
      '/%2e//evil.test/phish',
      '/x/..//evil.test/phish',
      '/x/y/../..//evil.test',
      '/x/%2e%2e//evil.test',
      '/../\\evil.test',
      '/..\\/evil.test',
      '/x/../\\evil.test',
      '/.\n./\t/evil.test',
      '/..//%2Fevil.test',
      '//evil.test',
      '/\\evil.test',
      '/%2F/evil.test',
      '/%5Cevil.test',
    ];
    for (const next of shapes) expect(redirect(next), next).toBe(FALLBACK);
  });
});

import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { normalizePattern, normalizePatterns } from './patterns.js';

describe('normalizePattern', () => {
  it('drops the u, g and d flags a regex literal left in the pattern', () => {
    expect(normalizePattern('^[\\p{L}\\p{Nd}][\\p{L}\\p{Nd}._@-]*$/u')).toBe('^[\\p{L}\\p{Nd}][\\p{L}\\p{Nd}._@-]*$');
    expect(normalizePattern('^a$/gu')).toBe('^a$');
    expect(normalizePattern('^a$/d')).toBe('^a$');
  });

  it('leaves patterns without flags alone, an escaped slash included', () => {
    expect(normalizePattern('^[a-z0-9][a-z0-9_-]{0,62}$')).toBe('^[a-z0-9][a-z0-9_-]{0,62}$');
    expect(normalizePattern('^ldap:\\/\\/u')).toBe('^ldap:\\/\\/u');
    expect(normalizePattern('^users$')).toBe('^users$');
  });

  it('sees the delimiter after an escaped backslash', () => {
    expect(normalizePattern('^a\\\\/u')).toBe('^a\\\\');
  });

  it('refuses flags that change what matches (i, s, m, y, v), naming them', () => {
    expect(() => normalizePattern('^ldaps?:\\/\\/[^\\s/?#]+\\/?$/i')).toThrow(/flag\(s\) i\b/);
    expect(() => normalizePattern('^\\(.*\\)$/su')).toThrow(/flag\(s\) s\b/);
    expect(() => normalizePattern('^a$/m')).toThrow(/flag\(s\) m\b/);
    expect(() => normalizePattern('^[\\p{L}--[a-z]]$/v')).toThrow(/flag\(s\) v\b/);
  });
});

describe('normalizePatterns', () => {
  it('fixes the pattern that @hono/zod-openapi generates from a zod regex with the u flag', () => {
    const app = new OpenAPIHono();
    const Body = z.object({ login: z.string().regex(/^[\p{L}\p{Nd}]+$/u) }).openapi('Body');
    const route = createRoute({
      method: 'post',
      path: '/x',
      request: { body: { content: { 'application/json': { schema: Body } } } },
      responses: { 204: { description: 'ok' } },
    });
    app.openapi(route, (c) => c.body(null, 204));
    const doc = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } });
    const generated = (doc.components!.schemas!.Body as { properties: { login: { pattern: string } } }).properties.login
      .pattern;
    expect(generated).toBe('^[\\p{L}\\p{Nd}]+$/u');
    const fixed = normalizePatterns(doc);
    const pattern = (fixed.components!.schemas!.Body as { properties: { login: { pattern: string } } }).properties.login
      .pattern;
    expect(pattern).toBe('^[\\p{L}\\p{Nd}]+$');
    expect(new RegExp(pattern, 'u').test('alice')).toBe(true);
  });
});

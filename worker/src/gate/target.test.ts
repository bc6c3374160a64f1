/**
 * The normalised target addresses, asked again: the second answer is the first's, as a new object
 * (the normalisations themselves are walked shape by shape in test/http/gate.test.ts and the open-redirect walk of test/http/attacks-sessions.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { normaliseUrl, urlFromParts } from './target.js';

describe('target addresses asked again', () => {
  it('answer the same, each time a URL of its own that no caller can change for another', () => {
    const first = urlFromParts('HTTPS', 'App.Example.COM.', '/a/../b?x=1')!;
    expect(first.href).toBe('https://app.example.com/b?x=1');
    first.pathname = '/changed';
    const again = urlFromParts('HTTPS', 'App.Example.COM.', '/a/../b?x=1')!;
    expect(again.href).toBe('https://app.example.com/b?x=1');
    expect(again).not.toBe(first);
    expect(normaliseUrl('https://App.example.com./p')!.href).toBe('https://app.example.com/p');
    expect(normaliseUrl('https://App.example.com./p')!.href).toBe('https://app.example.com/p');
  });

  it('stay refused when refused, after many other addresses, and for long ones', () => {
    for (let round = 0; round < 2; round++) {
      expect(urlFromParts('https', 'user@evil.example', '/')).toBeUndefined();
      expect(normaliseUrl('https://app.example.com/%2e%2e%2fadmin')).toBeUndefined();
      expect(normaliseUrl('javascript:alert(1)')).toBeUndefined();
    }
    for (let i = 0; i < 3000; i++)
      expect(urlFromParts('https', `h${i}.example.com`, '/')!.host).toBe(`h${i}.example.com`);
    const long = `/${'a'.repeat(2000)}`;
    expect(urlFromParts('https', 'app.example.com', long)!.pathname).toBe(long);
    expect(urlFromParts('https', 'user@evil.example', '/')).toBeUndefined();
  });
});
